"""Fernhill Goods' order desk as a stdio MCP server: look up, list, change and cancel orders.

Run it as a script: ``python bench/teams/servers/shop_orders.py``.
"""

from __future__ import annotations

from typing import Any

import fake_backend as fb
from shopdata import STATUSES, TODAY, order, product

server = fb.FastMCP("fernhill-orders")
_changed: dict[str, dict[str, Any]] = {}  # orders changed in this session


def _current(order_id: str) -> dict[str, Any]:
    found = order(order_id)
    return _changed.get(found.order_id) or found.as_dict()


@server.tool(annotations=fb.READ_ONLY)
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up one order by its 5-digit number: status, items, total, dates and parcel number."""
    return _current(order_id)


@server.tool(annotations=fb.READ_ONLY)
def list_orders(email: str, limit: int = 5) -> dict[str, Any]:
    """List a customer's most recent orders (number, date, status, total) by their account
    e-mail."""
    address = fb.need_email("email", email)
    count = fb.need_int("limit", limit, 1, 20)
    r = fb.rng("orders-of", address)
    numbers = sorted({f"{r.randint(10000, 99999)}" for _ in range(r.randint(1, 8))}, reverse=True)
    found = [_current(n) for n in numbers][:count]
    summary = [{k: o[k] for k in ("order_id", "placed_on", "status", "total")} for o in found]
    return {"email": address, "orders": summary, "as_of": TODAY.isoformat()}


@server.tool(annotations=fb.DESTRUCTIVE)
def cancel_order(order_id: str, reason: str) -> dict[str, Any]:
    """Cancel an order that has not shipped yet; the payment is released in 3-5 working days."""
    current = _current(order_id)
    why = fb.need_text("reason", reason, max_len=300)
    if current["status"] in ("shipped", "delivered"):
        raise fb.InputError(
            f"order {current['order_id']} has already {current['status']}: start a return instead."
        )
    if current["status"] == "cancelled":
        raise fb.InputError(f"order {current['order_id']} is already cancelled.")
    _changed[str(current["order_id"])] = {**current, "status": "cancelled", "cancel_reason": why}
    return {
        "order_id": current["order_id"],
        "status": "cancelled",
        "refund": current["total"],
        "reason": why,
    }


@server.tool(annotations=fb.CHANGES)
def change_order_item(order_id: str, sku: str, quantity: int) -> dict[str, Any]:
    """Change how many of one item (by SKU) an unshipped order contains; quantity 0 removes it."""
    current = _current(order_id)
    item = product(sku)
    count = fb.need_int("quantity", quantity, 0, 10)
    if current["status"] not in STATUSES[:2]:
        raise fb.InputError(
            f"order {current['order_id']} is {current['status']}: only processing or packed "
            f"orders can change."
        )
    items = [dict(line) for line in current["items"]]
    match = [line for line in items if line["sku"] == item.sku]
    if not match and count == 0:
        raise fb.InputError(f"order {current['order_id']} has no {item.sku} to remove.")
    if match:
        match[0]["quantity"] = count
    else:
        items.append(
            {
                "sku": item.sku,
                "name": item.name,
                "size": item.sizes[0],
                "colour": item.colours[0],
                "quantity": count,
                "price": item.price,
            }
        )
    items = [line for line in items if line["quantity"]]
    if not items:
        raise fb.InputError(
            f"that would leave order {current['order_id']} empty: cancel the order instead."
        )
    total = round(sum(line["price"] * line["quantity"] for line in items), 2)
    _changed[str(current["order_id"])] = {**current, "items": items, "total": total}
    return _changed[str(current["order_id"])]


if __name__ == "__main__":
    server.run()
