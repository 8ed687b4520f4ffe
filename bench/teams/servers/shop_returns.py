"""Fernhill Goods' returns desk as a stdio MCP server: eligibility, returns and refunds.

Run it as a script: ``python bench/teams/servers/shop_returns.py``.
"""

from __future__ import annotations

from typing import Any

import fake_backend as fb
from shopdata import (
    CURRENCY,
    RETURN_WINDOW_DAYS,
    TODAY,
    Order,
    order,
    product,
)

server = fb.FastMCP("fernhill-returns")
REASONS = ("too small", "too big", "damaged", "wrong item", "not as described", "changed my mind")
_refunded: dict[str, float] = {}  # refunds issued in this session, by order


def _window(found: Order) -> int | None:
    """Days left to return a delivered order (None when it was not delivered)."""
    if found.delivered_on is None:
        return None
    return RETURN_WINDOW_DAYS - (TODAY - found.delivered_on).days


@server.tool(annotations=fb.READ_ONLY)
def return_eligibility(order_id: str) -> dict[str, Any]:
    """Whether a delivered order can still be returned (30-day window) and which items qualify."""
    found = order(order_id)
    left = _window(found)
    eligible = left is not None and left >= 0
    why = (
        "within the return window"
        if eligible
        else "not delivered yet"
        if left is None
        else f"return window closed {-left} days ago"
    )
    return {
        "order_id": found.order_id,
        "status": found.status,
        "eligible": eligible,
        "why": why,
        "days_left": max(left, 0) if left is not None else None,
        "items": [{"sku": line.sku, "name": line.name} for line in found.lines] if eligible else [],
    }


@server.tool(annotations=fb.CHANGES)
def start_return(order_id: str, sku: str, reason: str) -> dict[str, Any]:
    """Open a return for one item of a delivered order; gives a return number and a prepaid
    label."""
    found = order(order_id)
    item = product(sku)
    why = fb.need_choice("reason", reason, REASONS)
    left = _window(found)
    if left is None or left < 0:
        raise fb.InputError(
            f"order {found.order_id} cannot be returned: check return_eligibility first."
        )
    if item.sku not in {line.sku for line in found.lines}:
        raise fb.InputError(
            f"order {found.order_id} has no item {item.sku}: pick one of its items."
        )
    number = f"R-{fb.rng('rma', found.order_id, item.sku).randint(100000, 999999)}"
    return {
        "return_number": number,
        "order_id": found.order_id,
        "sku": item.sku,
        "reason": why,
        "label_url": f"https://returns.fernhill.example/label/{number}",
        "send_within_days": 14,
    }


@server.tool(annotations=fb.READ_ONLY)
def refund_status(order_id: str) -> dict[str, Any]:
    """Where the refund for an order stands: none, pending, or paid (with amount and date)."""
    found = order(order_id)
    if found.order_id in _refunded:
        return {
            "order_id": found.order_id,
            "refund": "pending",
            "amount": _refunded[found.order_id],
        }
    r = fb.rng("refund", found.order_id)
    state = (
        "cancelled order, refunded"
        if found.status == "cancelled"
        else r.choice(("none", "pending", "paid"))
    )
    amount = found.total if state != "none" else 0.0
    return {"order_id": found.order_id, "refund": state, "amount": amount, "currency": CURRENCY}


@server.tool(annotations=fb.DESTRUCTIVE)
def issue_refund(order_id: str, amount: float, method: str = "original payment") -> dict[str, Any]:
    """Refund part or all of an order to the original payment method or as store credit."""
    found = order(order_id)
    value = fb.need_money("amount", amount, maximum=found.total)
    how = fb.need_choice("method", method, ("original payment", "store credit"))
    if found.status not in ("delivered", "cancelled"):
        raise fb.InputError(
            f"order {found.order_id} is {found.status}: cancel it or wait for delivery before "
            f"refunding."
        )
    already = _refunded.get(found.order_id, 0.0)
    if already + value > found.total:
        raise fb.InputError(
            f"order {found.order_id} totals {found.total} {CURRENCY}; {already} is already "
            f"refunded."
        )
    _refunded[found.order_id] = round(already + value, 2)
    return {
        "order_id": found.order_id,
        "refunded": value,
        "currency": CURRENCY,
        "method": how,
        "arrives_in": "3-5 working days",
    }


if __name__ == "__main__":
    server.run()
