"""A flight desk as a stdio MCP server: search fares, flight status, book and cancel.

Run it as a script: ``python bench/teams/servers/travel_flights.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import fake_backend as fb
from traveldata import city

server = fb.FastMCP("travel-flights")
AIRLINES = {
    "LH": "Lufthansa",
    "TP": "TAP Air Portugal",
    "IB": "Iberia",
    "AF": "Air France",
    "BA": "British Airways",
    "KL": "KLM",
    "LX": "Swiss",
    "U2": "easyJet",
    "FR": "Ryanair",
    "UA": "United",
}
CABINS = ("economy", "premium economy", "business")
_cancelled: set[str] = set()


def _offer_parts(offer_id: str) -> tuple[str, str, dt.date, int]:
    code = fb.need_pattern(
        "offer_id",
        offer_id,
        r"OF-[A-Z]{3}[A-Z]{3}\d{8}-\d",
        "OF-LISBER20250614-1 (from search_flights)",
    )
    origin, destination, day, n = code[3:6], code[6:9], code[9:17], int(code[-1])
    return origin, destination, fb.need_date("offer date", f"{day[:4]}-{day[4:6]}-{day[6:]}"), n


@server.tool(annotations=fb.READ_ONLY)
def search_flights(
    origin: str, destination: str, date: str, passengers: int = 1, cabin: str = "economy"
) -> dict[str, Any]:
    """Search one-way flights between two cities (names or IATA codes) on a date (YYYY-MM-DD)."""
    start, end = city(origin, "origin"), city(destination, "destination")
    if start.airport == end.airport:
        raise fb.InputError(
            f"origin and destination are both served by {start.airport}: pick two different places."
        )
    day = fb.need_date("date", date)
    people = fb.need_int("passengers", passengers, 1, 9)
    seat = fb.need_choice("cabin", cabin, CABINS)
    r = fb.rng("flights", start.airport, end.airport, day)
    offers = []
    for n in range(1, r.randint(2, 5) + 1):
        carrier = r.choice(sorted(AIRLINES))
        leaves = dt.datetime.combine(day, dt.time(r.randint(6, 21), r.choice((0, 15, 30, 45))))
        minutes = r.randint(55, 780)
        fare = round(r.uniform(45, 420) * (1, 1.7, 3.4)[CABINS.index(seat)], 2)
        offers.append(
            {
                "offer_id": f"OF-{start.airport}{end.airport}{day:%Y%m%d}-{n}",
                "flight": f"{carrier}{r.randint(100, 9999)}",
                "airline": AIRLINES[carrier],
                "departs": leaves.isoformat(timespec="minutes"),
                "arrives": (leaves + dt.timedelta(minutes=minutes)).isoformat(timespec="minutes"),
                "stops": 0 if minutes < 300 else r.randint(0, 1),
                "price_eur": round(fare * people, 2),
                "cabin": seat,
            }
        )
    return {
        "from": f"{start.name} ({start.airport})",
        "to": f"{end.name} ({end.airport})",
        "date": day.isoformat(),
        "passengers": people,
        "offers": offers,
    }


@server.tool(annotations=fb.READ_ONLY)
def flight_status(flight_number: str, date: str) -> dict[str, Any]:
    """Whether a flight (e.g. LH1172) on a date (YYYY-MM-DD) is on time, delayed or cancelled, and
    its gate."""
    number = fb.need_pattern(
        "flight_number",
        (flight_number or "").replace(" ", ""),
        r"[A-Z0-9]{2}\d{1,4}",
        "an airline code and 1-4 digits, e.g. LH1172",
    )
    if number[:2] not in AIRLINES:
        raise fb.InputError(
            f"flight_number {flight_number!r}: airline {number[:2]} is not one this service tracks "
            f"({', '.join(sorted(AIRLINES))})."
        )
    day = fb.need_date("date", date)
    r = fb.rng("status", number, day)
    state = r.choices(("on time", "delayed", "cancelled", "boarding"), weights=(60, 25, 5, 10))[0]
    return {
        "flight": number,
        "airline": AIRLINES[number[:2]],
        "date": day.isoformat(),
        "status": state,
        "delay_minutes": r.randint(15, 180) if state == "delayed" else 0,
        "gate": f"{r.choice('ABCDEG')}{r.randint(1, 60)}",
        "terminal": r.randint(1, 3),
    }


@server.tool(annotations=fb.CHANGES)
def book_flight(offer_id: str, passenger_name: str) -> dict[str, Any]:
    """Book a flight offer from search_flights for a passenger (full name as on the passport)."""
    origin, destination, day, _ = _offer_parts(offer_id)
    name = fb.need_text("passenger_name", passenger_name, max_len=70)
    if len(name.split()) < 2:
        raise fb.InputError(
            f"passenger_name {passenger_name!r} needs a first and last name, as on the passport."
        )
    r = fb.rng("pnr", offer_id.upper(), name)
    ref = "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    return {
        "booking_ref": ref,
        "offer_id": offer_id.upper(),
        "passenger": name,
        "route": f"{origin}-{destination}",
        "date": day.isoformat(),
        "status": "confirmed",
    }


@server.tool(annotations=fb.DESTRUCTIVE)
def cancel_flight_booking(booking_ref: str) -> dict[str, Any]:
    """Cancel a flight booking by its 6-character reference; refundable fares are refunded less a
    fee."""
    ref = fb.need_pattern(
        "booking_ref", booking_ref, r"[A-Z0-9]{6}", "6 letters or digits, e.g. K7QW2M"
    )
    if ref in _cancelled:
        raise fb.InputError(f"booking {ref} is already cancelled.")
    _cancelled.add(ref)
    r = fb.rng("fare", ref)
    refundable = r.random() < 0.5
    return {
        "booking_ref": ref,
        "status": "cancelled",
        "refund_eur": round(r.uniform(40, 300), 2) if refundable else 0.0,
        "note": "refund less a 30 EUR fee"
        if refundable
        else "non-refundable fare: taxes only on request",
    }


if __name__ == "__main__":
    server.run()
