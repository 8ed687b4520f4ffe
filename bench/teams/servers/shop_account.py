"""Fernhill Goods' customer accounts as a stdio MCP server: profile, loyalty points, newsletter.

Run it as a script: ``python bench/teams/servers/shop_account.py``.
Customers are known by the e-mail address of their account.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import fake_backend as fb
from shopdata import TODAY

server = fb.FastMCP("fernhill-accounts")
TIERS = ((0, "Fern"), (1000, "Oak"), (3000, "Cedar"))  # points needed -> loyalty tier
_spent: dict[str, int] = {}  # points redeemed in this session
_closed: set[str] = set()


def _account(email: str) -> dict[str, Any]:
    address = fb.need_email("email", email)
    if address in _closed:
        raise fb.InputError(f"the account {address} was deleted.")
    r = fb.rng("account", address)
    points = r.randint(0, 4200) - _spent.get(address, 0)
    tier = [name for floor, name in TIERS if points >= floor][-1]
    first = address.split("@")[0].split(".")[0].capitalize()
    return {
        "email": address,
        "name": first,
        "customer_number": f"C{r.randint(100000, 999999)}",
        "member_since": (TODAY - dt.timedelta(days=r.randint(30, 2000))).isoformat(),
        "points": points,
        "tier": tier,
        "newsletter": r.random() < 0.5,
        "points_expiring": {
            "points": min(points, r.randint(0, 300)),
            "on": f"{TODAY.year + 1}-01-31",
        },
    }


@server.tool(annotations=fb.READ_ONLY)
def account_summary(email: str) -> dict[str, Any]:
    """A customer's account by e-mail: name, customer number, member since, tier, newsletter."""
    found = _account(email)
    return {k: v for k, v in found.items() if k not in ("points", "points_expiring")}


@server.tool(annotations=fb.READ_ONLY)
def loyalty_points(email: str) -> dict[str, Any]:
    """A customer's loyalty points balance, tier, points expiring soon and points to the next
    tier."""
    found = _account(email)
    points = int(found["points"])
    above = [floor for floor, _ in TIERS if floor > points]
    return {
        "email": found["email"],
        "points": points,
        "tier": found["tier"],
        "points_expiring": found["points_expiring"],
        "to_next_tier": above[0] - points if above else 0,
        "worth_eur": round(points / 100 * 5, 2),
    }


@server.tool(annotations=fb.CHANGES)
def redeem_points(email: str, points: int) -> dict[str, Any]:
    """Turn loyalty points into a voucher code: every 100 points are worth 5 EUR."""
    found = _account(email)
    amount = fb.need_int("points", points, 100, 100000)
    if amount % 100:
        raise fb.InputError(f"points {amount} is not a multiple of 100: redeem 100, 200, 300 ...")
    if amount > int(found["points"]):
        raise fb.InputError(
            f"points {amount} is more than the {found['points']} points on {found['email']}."
        )
    _spent[str(found["email"])] = _spent.get(str(found["email"]), 0) + amount
    code = f"FERN-{fb.rng('voucher', found['email'], amount).randint(100000, 999999)}"
    return {
        "email": found["email"],
        "voucher": code,
        "value_eur": amount // 100 * 5,
        "points_left": int(found["points"]) - amount,
    }


@server.tool(annotations=fb.CHANGES)
def set_newsletter(email: str, subscribed: bool) -> dict[str, Any]:
    """Subscribe a customer to the newsletter or unsubscribe them."""
    found = _account(email)
    if not isinstance(subscribed, bool):
        raise fb.InputError(f"subscribed {subscribed!r} must be true or false.")
    return {"email": found["email"], "newsletter": subscribed}


@server.tool(annotations=fb.DESTRUCTIVE)
def delete_account(email: str, confirm_email: str) -> dict[str, Any]:
    """Close a customer's account for good (GDPR erasure); confirm_email must repeat the address."""
    found = _account(email)
    if fb.need_email("confirm_email", confirm_email) != found["email"]:
        raise fb.InputError(
            "confirm_email does not match email: type the same address twice to confirm."
        )
    _closed.add(str(found["email"]))
    return {"email": found["email"], "deleted": True, "points_forfeited": found["points"]}


if __name__ == "__main__":
    server.run()
