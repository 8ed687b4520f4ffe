"""The fake shop's data, shared by its servers: the catalogue and what an order id implies.

Fernhill Goods sells clothes and leather goods online. Its clock stands
still at :data:`TODAY`, so an order's dates, status and return window are
the same on every run. An order id is five digits; everything about the
order (items, status, parcel) is derived from it, so the orders, returns
and shipping servers agree about the same order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import fake_backend as fb

TODAY = dt.date(2025, 11, 14)
RETURN_WINDOW_DAYS = 30
CURRENCY = "EUR"


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    price: float
    sizes: tuple[str, ...]
    colours: tuple[str, ...]


_LETTER_SIZES = ("XS", "S", "M", "L", "XL")
CATALOGUE: dict[str, Product] = {
    p.sku: p
    for p in (
        Product(
            "TS-1001", "Organic cotton t-shirt", 24.00, _LETTER_SIZES, ("white", "black", "navy")
        ),
        Product("SH-1102", "Linen shirt", 59.00, _LETTER_SIZES[1:], ("blue", "white", "sand")),
        Product(
            "JU-1203", "Merino wool jumper", 89.00, _LETTER_SIZES[1:], ("grey", "green", "navy")
        ),
        Product(
            "JK-1304", "Waxed rain jacket", 149.00, (*_LETTER_SIZES[1:], "XXL"), ("olive", "black")
        ),
        Product("JK-1305", "Denim jacket", 95.00, _LETTER_SIZES[1:], ("indigo",)),
        Product(
            "SO-1406",
            "Wool hiking socks (pair)",
            14.50,
            ("36-38", "39-42", "43-46"),
            ("grey", "red"),
        ),
        Product("BG-1507", "Canvas tote bag", 29.00, ("one size",), ("natural", "black")),
        Product("BG-1508", "Leather backpack", 189.00, ("one size",), ("brown", "black")),
        Product("WL-1609", "Leather wallet", 45.00, ("one size",), ("brown", "black")),
        Product(
            "SN-1710",
            "Canvas sneakers",
            69.00,
            tuple(str(n) for n in range(36, 47)),
            ("white", "navy"),
        ),
        Product("SC-1811", "Cashmere scarf", 79.00, ("one size",), ("camel", "grey", "red")),
        Product("CA-1912", "Wool beanie", 22.00, ("one size",), ("charcoal", "mustard")),
        Product("BE-2013", "Leather belt", 39.00, ("80", "90", "100", "110"), ("brown", "black")),
        Product("DR-2114", "Linen summer dress", 85.00, _LETTER_SIZES[:4], ("sand", "sage")),
    )
}

STATUSES = ("processing", "packed", "shipped", "delivered", "cancelled")
_STATUS_WEIGHTS = (20, 15, 25, 35, 5)
CARRIERS = ("DHL", "DPD", "GLS", "UPS")


def order_id(value: str) -> str:
    """A five-digit order id; a leading '#' is allowed."""
    return fb.need_pattern(
        "order_id", (value or "").strip().lstrip("#"), r"\d{5}", "5 digits, e.g. 48213"
    )


def product(sku: str) -> Product:
    """The product with this SKU (two letters, a dash, four digits)."""
    code = fb.need_pattern(
        "sku", sku, r"[A-Z]{2}-\d{4}", "two letters, a dash and four digits, e.g. SH-1102"
    )
    if code not in CATALOGUE:
        raise fb.InputError(
            f"sku {sku!r} is not in the catalogue: search for the product by name first."
        )
    return CATALOGUE[code]


def tracking_number(value: str) -> str:
    """A parcel number: SH followed by ten digits."""
    return fb.need_pattern(
        "tracking_number", value, r"SH\d{10}", "SH followed by 10 digits, e.g. SH4821300917"
    )


@dataclass(frozen=True)
class Line:
    sku: str
    name: str
    size: str
    colour: str
    quantity: int
    price: float


@dataclass(frozen=True)
class Order:
    order_id: str
    placed_on: dt.date
    status: str
    lines: tuple[Line, ...]
    carrier: str
    tracking_number: str | None
    delivered_on: dt.date | None

    @property
    def total(self) -> float:
        return round(sum(line.price * line.quantity for line in self.lines), 2)

    def as_dict(self) -> dict[str, Any]:
        return {
            "order_id": self.order_id,
            "placed_on": self.placed_on.isoformat(),
            "status": self.status,
            "items": [line.__dict__ for line in self.lines],
            "total": self.total,
            "currency": CURRENCY,
            "carrier": self.carrier if self.tracking_number else None,
            "tracking_number": self.tracking_number,
            "delivered_on": self.delivered_on.isoformat() if self.delivered_on else None,
        }


def order(value: str) -> Order:
    """The order ``value`` names, derived from its id."""
    oid = order_id(value)
    r = fb.rng("order", oid)
    status = r.choices(STATUSES, weights=_STATUS_WEIGHTS)[0]
    age = {"processing": 1, "packed": 2, "shipped": 4, "delivered": 10, "cancelled": 6}[status]
    placed_on = TODAY - dt.timedelta(days=age + r.randint(0, 3 if status != "delivered" else 50))
    lines = []
    for sku in r.sample(sorted(CATALOGUE), r.randint(1, 3)):
        item = CATALOGUE[sku]
        lines.append(
            Line(
                sku,
                item.name,
                r.choice(item.sizes),
                r.choice(item.colours),
                r.randint(1, 2),
                item.price,
            )
        )
    parcel = status in ("shipped", "delivered")
    return Order(
        order_id=oid,
        placed_on=placed_on,
        status=status,
        lines=tuple(lines),
        carrier=r.choice(CARRIERS),
        tracking_number=f"SH{oid}{r.randint(0, 99999):05d}" if parcel else None,
        delivered_on=placed_on + dt.timedelta(days=r.randint(2, 5))
        if status == "delivered"
        else None,
    )
