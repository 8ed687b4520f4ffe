"""Travel money as a stdio MCP server: exchange rates, conversions and a trip's expenses.

Run it as a script: ``python bench/teams/servers/travel_money.py``.
Rates are fixed, made-up figures (units per euro), so answers never change.
"""

from __future__ import annotations

from typing import Any

import fake_backend as fb
from traveldata import RATES

server = fb.FastMCP("travel-money")
CATEGORIES = ("transport", "lodging", "food", "activities", "shopping", "other")
_logged: dict[str, dict[str, Any]] = {}  # expenses logged in this session, by id
_deleted: set[str] = set()


def _currency(name: str, value: str) -> str:
    return fb.need_code(name, value, RATES, "currency (ISO 4217 code such as EUR, USD, JPY)")


def _rate(base: str, quote: str) -> float:
    return RATES[quote] / RATES[base]


@server.tool(annotations=fb.READ_ONLY)
def exchange_rate(base_currency: str, quote_currency: str) -> dict[str, Any]:
    """How many units of quote_currency one unit of base_currency buys (3-letter codes)."""
    base, quote = (
        _currency("base_currency", base_currency),
        _currency("quote_currency", quote_currency),
    )
    return {"base": base, "quote": quote, "rate": round(_rate(base, quote), 6)}


@server.tool(annotations=fb.READ_ONLY)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount from one currency to another (3-letter ISO codes such as EUR, USD, JPY)."""
    source, target = (
        _currency("from_currency", from_currency),
        _currency("to_currency", to_currency),
    )
    value = fb.need_money("amount", amount, maximum=10_000_000)
    return {
        "amount": value,
        "from": source,
        "to": target,
        "result": round(value * _rate(source, target), 2),
        "rate": round(_rate(source, target), 6),
    }


def _baseline(trip: str) -> list[dict[str, Any]]:
    """The expenses a trip already has before this session (made up from its name)."""
    r = fb.rng("trip", trip)
    rows = []
    for n in range(r.randint(0, 6)):
        currency = r.choice(("EUR", "EUR", "USD", "GBP", "JPY"))
        amount = round(r.uniform(8, 240) * (RATES[currency] if currency == "JPY" else 1), 2)
        rows.append(
            {
                "expense_id": f"E-{fb.rng('expense', trip, n).randint(10000, 99999)}",
                "trip": trip,
                "amount": amount,
                "currency": currency,
                "category": r.choice(CATEGORIES),
                "note": "",
            }
        )
    return rows


@server.tool(annotations=fb.CHANGES)
def log_expense(
    trip: str, amount: float, currency: str, category: str, note: str = ""
) -> dict[str, Any]:
    """Record a travel expense on a trip (amount, 3-letter currency, category such as food or
    transport)."""
    name = fb.need_text("trip", trip, max_len=60)
    value = fb.need_money("amount", amount, maximum=1_000_000)
    code = _currency("currency", currency)
    kind = fb.need_choice("category", category, CATEGORIES)
    text = (note or "").strip()[:200]
    expense_id = (
        f"E-{fb.rng('logged', name, value, code, kind, text, len(_logged)).randint(10000, 99999)}"
    )
    _logged[expense_id] = {
        "expense_id": expense_id,
        "trip": name,
        "amount": value,
        "currency": code,
        "category": kind,
        "note": text,
    }
    return _logged[expense_id]


@server.tool(annotations=fb.READ_ONLY)
def expense_summary(trip: str) -> dict[str, Any]:
    """A trip's expenses with totals per category, converted to euros."""
    name = fb.need_text("trip", trip, max_len=60)
    rows = [
        row
        for row in [*_baseline(name), *_logged.values()]
        if str(row["trip"]).lower() == name.lower() and row["expense_id"] not in _deleted
    ]
    totals: dict[str, float] = {}
    for row in rows:
        eur = float(row["amount"]) / RATES[str(row["currency"])]
        totals[str(row["category"])] = round(totals.get(str(row["category"]), 0.0) + eur, 2)
    return {
        "trip": name,
        "expenses": rows,
        "totals_eur": totals,
        "total_eur": round(sum(totals.values()), 2),
    }


@server.tool(annotations=fb.DESTRUCTIVE)
def delete_expense(expense_id: str) -> dict[str, Any]:
    """Delete one recorded expense by its id (E- and 5 digits)."""
    code = fb.need_pattern("expense_id", expense_id, r"E-\d{5}", "E- and 5 digits, e.g. E-40817")
    if code in _deleted:
        raise fb.InputError(f"expense {code} is already deleted.")
    _deleted.add(code)
    _logged.pop(code, None)
    return {"expense_id": code, "deleted": True}


if __name__ == "__main__":
    server.run()
