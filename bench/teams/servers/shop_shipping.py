"""Fernhill Goods' delivery desk as a stdio MCP server: parcels, delivery options, addresses.

Run it as a script: ``python bench/teams/servers/shop_shipping.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import fake_backend as fb
from shopdata import CARRIERS, CURRENCY, TODAY, order
from shopdata import tracking_number as parcel_number

server = fb.FastMCP("fernhill-shipping")

# Where the shop delivers: country code -> (postcode pattern, example, standard price, days).
COUNTRIES: dict[str, tuple[str, str, float, int]] = {
    "DE": (r"\d{5}", "10115", 4.90, 2),
    "AT": (r"\d{4}", "1010", 6.90, 3),
    "NL": (r"\d{4} ?[A-Z]{2}", "1012 AB", 6.90, 3),
    "FR": (r"\d{5}", "75001", 7.90, 4),
    "ES": (r"\d{5}", "28001", 8.90, 5),
    "PT": (r"\d{4}-\d{3}", "1100-148", 8.90, 5),
    "IT": (r"\d{5}", "00184", 8.90, 5),
    "BE": (r"\d{4}", "1000", 6.90, 3),
    "GB": (r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}", "SW1A 1AA", 12.90, 6),
    "CH": (r"\d{4}", "8001", 12.90, 5),
}
PARCEL_STEPS = (
    "label created",
    "handed to carrier",
    "in transit",
    "at local depot",
    "out for delivery",
    "delivered",
    "delivery attempted, card left",
)


def _postcode(country: str, postcode: str) -> tuple[str, str]:
    code = fb.need_code("country", country, COUNTRIES, "delivery country (2-letter code)")
    pattern, example = COUNTRIES[code][:2]
    return code, fb.need_pattern("postcode", postcode, pattern, f"{example} in {code}")


@server.tool(annotations=fb.READ_ONLY)
def track_parcel(tracking_number: str) -> dict[str, Any]:
    """Where a parcel is now, by its tracking number (SH + 10 digits), with its recent scans."""
    number = parcel_number(tracking_number)
    r = fb.rng("parcel", number)
    step = r.randint(1, len(PARCEL_STEPS) - 1)
    scans = []
    for n, event in enumerate(
        PARCEL_STEPS[: step + 1] if step < 6 else (*PARCEL_STEPS[:5], PARCEL_STEPS[6])
    ):
        scans.append(
            {"date": (TODAY - dt.timedelta(days=max(step - n, 0))).isoformat(), "event": event}
        )
    return {
        "tracking_number": number,
        "carrier": r.choice(CARRIERS),
        "status": scans[-1]["event"],
        "scans": scans,
    }


@server.tool(annotations=fb.READ_ONLY)
def delivery_options(country: str, postcode: str) -> dict[str, Any]:
    """Delivery methods, prices and days to an address, by 2-letter country code and postcode."""
    code, post = _postcode(country, postcode)
    price, days = COUNTRIES[code][2:]
    return {
        "country": code,
        "postcode": post,
        "currency": CURRENCY,
        "free_from": 80.0,
        "options": [
            {"method": "standard", "price": price, "working_days": days},
            {
                "method": "express",
                "price": round(price * 2 + 5, 2),
                "working_days": max(days - 2, 1),
            },
        ],
    }


@server.tool(annotations=fb.CHANGES)
def change_delivery_address(
    order_id: str, street: str, postcode: str, city: str, country: str
) -> dict[str, Any]:
    """Send an order that has not shipped yet to a different address."""
    found = order(order_id)
    code, post = _postcode(country, postcode)
    address = {
        "street": fb.need_text("street", street),
        "postcode": post,
        "city": fb.need_text("city", city, max_len=60),
        "country": code,
    }
    if found.status not in ("processing", "packed"):
        raise fb.InputError(
            f"order {found.order_id} is {found.status}: the address can only change before it "
            f"ships."
        )
    return {"order_id": found.order_id, "new_address": address, "status": found.status}


@server.tool(annotations=fb.CHANGES)
def schedule_redelivery(tracking_number: str, date: str) -> dict[str, Any]:
    """Ask the carrier to try delivering a missed parcel again on a given day (YYYY-MM-DD)."""
    number = parcel_number(tracking_number)
    day = fb.need_date("date", date)
    if day.weekday() == 6:
        raise fb.InputError(f"date {date!r} is a Sunday: carriers deliver Monday to Saturday.")
    return {"tracking_number": number, "redelivery_on": day.isoformat(), "window": "08:00-18:00"}


if __name__ == "__main__":
    server.run()
