"""Fernhill Goods' catalogue as a stdio MCP server: find products, their details and stock.

Run it as a script: ``python bench/teams/servers/shop_catalogue.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import fake_backend as fb
from shopdata import CATALOGUE, CURRENCY, TODAY, Product, product

server = fb.FastMCP("fernhill-catalogue")


def _size(item: Product, size: str) -> str:
    wanted = (size or "").strip().upper()
    for known in item.sizes:
        if known.upper() == wanted:
            return known
    raise fb.InputError(
        f"size {size!r} does not exist for {item.name}: choose one of {', '.join(item.sizes)}."
    )


def _stock(item: Product, size: str) -> int:
    r = fb.rng("stock", item.sku, size)
    return 0 if r.random() < 0.25 else r.randint(1, 40)


@server.tool(annotations=fb.READ_ONLY)
def search_products(query: str, max_price: float | None = None) -> dict[str, Any]:
    """Search the catalogue by words in a product's name or colour, optionally up to a price in
    EUR."""
    words = fb.need_text("query", query).lower().split()
    limit = None if max_price is None else fb.need_money("max_price", max_price, maximum=10000)
    scored = []
    for item in CATALOGUE.values():
        text = f"{item.name} {' '.join(item.colours)}".lower().split()
        score = sum(
            any(w == word or w.rstrip("s") == word.rstrip("s") for w in text) for word in words
        )
        if score and (limit is None or item.price <= limit):
            scored.append((-score, item.price, item))
    hits = [
        {"sku": item.sku, "name": item.name, "price": item.price, "colours": list(item.colours)}
        for _, _, item in sorted(scored, key=lambda row: row[:2])
    ]
    return {"query": query.strip(), "currency": CURRENCY, "results": hits}


@server.tool(annotations=fb.READ_ONLY)
def product_details(sku: str) -> dict[str, Any]:
    """Full details of one product by SKU (e.g. SH-1102): price, sizes, colours, material and
    care."""
    item = product(sku)
    r = fb.rng("details", item.sku)
    material = r.choice(
        ("100% organic cotton", "100% linen", "merino wool", "full-grain leather", "waxed cotton")
    )
    return {
        "sku": item.sku,
        "name": item.name,
        "price": item.price,
        "currency": CURRENCY,
        "sizes": list(item.sizes),
        "colours": list(item.colours),
        "material": material,
        "care": r.choice(("machine wash 30°C", "hand wash cold", "wipe clean", "dry clean only")),
        "rating": round(r.uniform(3.6, 4.9), 1),
    }


@server.tool(annotations=fb.READ_ONLY)
def check_stock(sku: str, size: str) -> dict[str, Any]:
    """How many of a product (by SKU) are in stock in one size ('one size' for bags and scarves)."""
    item = product(sku)
    chosen = _size(item, size)
    left = _stock(item, chosen)
    return {
        "sku": item.sku,
        "name": item.name,
        "size": chosen,
        "in_stock": left,
        "available": left > 0,
    }


@server.tool(annotations=fb.READ_ONLY)
def restock_date(sku: str, size: str) -> dict[str, Any]:
    """When a product that is sold out in a size is expected back in stock."""
    item = product(sku)
    chosen = _size(item, size)
    if _stock(item, chosen) > 0:
        return {"sku": item.sku, "size": chosen, "sold_out": False, "expected": None}
    expected = TODAY + dt.timedelta(days=fb.rng("restock", item.sku, chosen).randint(5, 45))
    return {"sku": item.sku, "size": chosen, "sold_out": True, "expected": expected.isoformat()}


if __name__ == "__main__":
    server.run()
