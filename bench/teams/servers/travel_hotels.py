"""A hotel desk as a stdio MCP server: search hotels, read one, book and cancel rooms.

Run it as a script: ``python bench/teams/servers/travel_hotels.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import fake_backend as fb
from traveldata import CITIES, city

server = fb.FastMCP("travel-hotels")
_PREFIX = ("Grand", "Hotel", "Casa", "The", "Maison", "Villa", "Pension", "Residence")
_SUFFIX = ("Central", "Plaza", "Harbour", "Garden", "Old Town", "Riverside", "Station", "Boutique")
_cancelled: set[str] = set()


def _stay(check_in: str, check_out: str) -> tuple[dt.date, dt.date]:
    start, end = fb.need_date("check_in", check_in), fb.need_date("check_out", check_out)
    if end <= start:
        raise fb.InputError(
            f"check_out {check_out} is not after check_in {check_in}: leave at least one night "
            f"later."
        )
    if (end - start).days > 30:
        raise fb.InputError(
            f"{(end - start).days} nights is more than the 30 this service books at once."
        )
    return start, end


def _hotel(hotel_id: str) -> dict[str, Any]:
    code = fb.need_pattern(
        "hotel_id", hotel_id, r"H-\d{5}", "H- and 5 digits, e.g. H-40213 (from search_hotels)"
    )
    r = fb.rng("hotel", code)
    town = sorted(CITIES)[int(code[2:]) % len(CITIES)]
    return {
        "hotel_id": code,
        "name": f"{r.choice(_PREFIX)} {r.choice(_SUFFIX)} {town}",
        "city": town,
        "stars": r.randint(2, 5),
        "rating": round(r.uniform(6.8, 9.6), 1),
        "base_price_eur": round(r.uniform(55, 380), 2),
        "amenities": sorted(
            r.sample(
                [
                    "wifi",
                    "breakfast",
                    "pool",
                    "gym",
                    "parking",
                    "spa",
                    "bar",
                    "airport shuttle",
                    "pets allowed",
                    "air conditioning",
                ],
                4,
            )
        ),
        "free_cancellation_until_days_before": r.choice((1, 2, 7)),
    }


@server.tool(annotations=fb.READ_ONLY)
def search_hotels(
    city_name: str,
    check_in: str,
    check_out: str,
    guests: int = 2,
    max_price_per_night: float | None = None,
) -> dict[str, Any]:
    """Find hotels with free rooms in a city for dates (YYYY-MM-DD), guests and an optional nightly
    budget in EUR."""
    place = city(city_name, "city_name")
    start, end = _stay(check_in, check_out)
    people = fb.need_int("guests", guests, 1, 8)
    budget = (
        None
        if max_price_per_night is None
        else fb.need_money("max_price_per_night", max_price_per_night, maximum=5000)
    )
    index = sorted(CITIES).index(place.name)
    r = fb.rng("hotels", place.name, start, end)
    found = []
    for _ in range(6):
        number = r.randint(0, 1500) * len(CITIES) + index
        hotel = _hotel(f"H-{number % 100000:05d}")
        if hotel["city"] != place.name:
            continue
        nightly = round(float(hotel["base_price_eur"]) * (1 + 0.25 * (people - 1)), 2)
        if budget is None or nightly <= budget:
            found.append(
                {
                    **{k: hotel[k] for k in ("hotel_id", "name", "stars", "rating")},
                    "price_per_night_eur": nightly,
                    "total_eur": round(nightly * (end - start).days, 2),
                }
            )
    return {
        "city": place.name,
        "check_in": start.isoformat(),
        "check_out": end.isoformat(),
        "guests": people,
        "hotels": found,
    }


@server.tool(annotations=fb.READ_ONLY)
def hotel_details(hotel_id: str) -> dict[str, Any]:
    """One hotel's details by id (e.g. H-40213): stars, rating, amenities, cancellation terms."""
    return _hotel(hotel_id)


@server.tool(annotations=fb.CHANGES)
def book_hotel(
    hotel_id: str, check_in: str, check_out: str, guests: int, guest_name: str
) -> dict[str, Any]:
    """Book a room in a hotel for dates (YYYY-MM-DD) and guests, in the lead guest's name."""
    hotel = _hotel(hotel_id)
    start, end = _stay(check_in, check_out)
    people = fb.need_int("guests", guests, 1, 8)
    name = fb.need_text("guest_name", guest_name, max_len=70)
    ref = (
        f"HB-{fb.rng('hotel booking', hotel['hotel_id'], start, end, name).randint(100000, 999999)}"
    )
    return {
        "booking_ref": ref,
        "hotel": hotel["name"],
        "check_in": start.isoformat(),
        "check_out": end.isoformat(),
        "guests": people,
        "guest_name": name,
        "status": "confirmed",
    }


@server.tool(annotations=fb.DESTRUCTIVE)
def cancel_hotel_booking(booking_ref: str) -> dict[str, Any]:
    """Cancel a hotel booking by its reference (HB- and 6 digits)."""
    ref = fb.need_pattern(
        "booking_ref", booking_ref, r"HB-\d{6}", "HB- and 6 digits, e.g. HB-204517"
    )
    if ref in _cancelled:
        raise fb.InputError(f"booking {ref} is already cancelled.")
    _cancelled.add(ref)
    fee = fb.rng("hotel fee", ref).choice((0.0, 0.0, 45.0, 120.0))
    return {"booking_ref": ref, "status": "cancelled", "cancellation_fee_eur": fee}


if __name__ == "__main__":
    server.run()
