"""Start every benchmark team's MCP server over stdio, list its tools, and call each one.

Run from anywhere with the project's interpreter::

    .venv/bin/python bench/teams/check_servers.py

Each tool is called once with valid arguments (the call must succeed) and
once with invalid ones (the call must fail with an error that says why);
every tool a server lists must be covered, and the annotations must say which
tools only read. Prints one line per call and exits 1 on the first surprise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent

# server script -> tool -> (valid arguments, invalid arguments)
Cases = dict[str, tuple[dict[str, Any] | None, dict[str, Any]]]
CASES: dict[str, Cases] = {
    "servers/shop_orders.py": {
        "lookup_order": ({"order_id": "48213"}, {"order_id": "4821"}),
        "list_orders": ({"email": "julia.meyer@posteo.de"}, {"email": "julia at posteo"}),
        "cancel_order": (None, {"order_id": "30577", "reason": " "}),  # filled below
        "change_order_item": (
            {"order_id": "61094", "sku": "SO-1406", "quantity": 2},
            {"order_id": "61094", "sku": "SO-1406", "quantity": 99},
        ),
    },
    "servers/shop_catalogue.py": {
        "search_products": ({"query": "linen shirt", "max_price": 80}, {"query": ""}),
        "product_details": ({"sku": "SC-1811"}, {"sku": "scarf"}),
        "check_stock": ({"sku": "JK-1304", "size": "XL"}, {"sku": "JK-1304", "size": "XXXL"}),
        "restock_date": ({"sku": "SN-1710", "size": "42"}, {"sku": "ZZ-9999", "size": "42"}),
    },
    "servers/shop_returns.py": {
        "return_eligibility": ({"order_id": "29481"}, {"order_id": "abc"}),
        "start_return": (
            None,
            {"order_id": "41736", "sku": "SH-1102", "reason": "meh"},
        ),  # filled below
        "refund_status": ({"order_id": "66013"}, {"order_id": ""}),
        "issue_refund": (None, {"order_id": "50892", "amount": -5}),  # filled below
    },
    "servers/shop_shipping.py": {
        "track_parcel": ({"tracking_number": "SH4821309174"}, {"tracking_number": "4821309174"}),
        "delivery_options": (
            {"country": "AT", "postcode": "1010"},
            {"country": "AT", "postcode": "10115"},
        ),
        "change_delivery_address": (
            None,
            {
                "order_id": "27745",
                "street": "Hauptstraße 12",
                "postcode": "80331",
                "city": "Munich",
                "country": "Germany",
            },
        ),  # filled below
        "schedule_redelivery": (
            {"tracking_number": "SH3016688402", "date": "2025-11-18"},
            {"tracking_number": "SH3016688402", "date": "2025-11-16"},
        ),
    },
    "servers/shop_account.py": {
        "account_summary": ({"email": "k.schmidt@web.de"}, {"email": "k.schmidt@"}),
        "loyalty_points": ({"email": "tom.baker@gmail.com"}, {"email": ""}),
        "redeem_points": (
            None,
            {"email": "sara.lindqvist@outlook.com", "points": 150},
        ),  # filled below
        "set_newsletter": (
            {"email": "p.okafor@yahoo.co.uk", "subscribed": False},
            {"email": "p.okafor@yahoo", "subscribed": False},
        ),
        "delete_account": (
            {"email": "ana.ruiz@gmx.es", "confirm_email": "ana.ruiz@gmx.es"},
            {"email": "l.moreau@free.fr", "confirm_email": "l.moreau@free.com"},
        ),
    },
    "servers/travel_flights.py": {
        "search_flights": (
            {"origin": "Berlin", "destination": "Lissabon", "date": "2026-06-12"},
            {"origin": "Berlin", "destination": "Atlantis", "date": "2026-06-12"},
        ),
        "flight_status": (
            {"flight_number": "LH 1172", "date": "2026-03-02"},
            {"flight_number": "ZZ1172", "date": "2026-03-02"},
        ),
        "book_flight": (
            {"offer_id": "OF-OPOCDG20260503-1", "passenger_name": "Ana Sousa"},
            {"offer_id": "OF-OPOCDG20260503-1", "passenger_name": "Ana"},
        ),
        "cancel_flight_booking": ({"booking_ref": "k7qw2m"}, {"booking_ref": "K7QW2"}),
    },
    "servers/travel_hotels.py": {
        "search_hotels": (
            {
                "city_name": "Vienna",
                "check_in": "2026-04-10",
                "check_out": "2026-04-13",
                "guests": 2,
            },
            {"city_name": "Vienna", "check_in": "2026-04-13", "check_out": "2026-04-10"},
        ),
        "hotel_details": ({"hotel_id": "H-12877"}, {"hotel_id": "12877"}),
        "book_hotel": (
            {
                "hotel_id": "H-40213",
                "check_in": "2026-05-02",
                "check_out": "2026-05-05",
                "guests": 1,
                "guest_name": "Peter Hall",
            },
            {
                "hotel_id": "H-40213",
                "check_in": "2026-05-02",
                "check_out": "2026-05-05",
                "guests": 0,
                "guest_name": "Peter Hall",
            },
        ),
        "cancel_hotel_booking": ({"booking_ref": "HB-204517"}, {"booking_ref": "204517"}),
    },
    "servers/travel_weather.py": {
        "weather_forecast": (
            {"city_name": "Lisboa", "date": "2026-06-12"},
            {"city_name": "Lisbon", "date": "12/06"},
        ),
        "current_weather": ({"city_name": "Tokyo"}, {"city_name": "qwerty"}),
        "climate_averages": (
            {"city_name": "Athens", "month": 10},
            {"city_name": "Athens", "month": 13},
        ),
    },
    "servers/travel_money.py": {
        "exchange_rate": (
            {"base_currency": "usd", "quote_currency": "CHF"},
            {"base_currency": "dollars", "quote_currency": "CHF"},
        ),
        "convert_currency": (
            {"amount": 250, "from_currency": "EUR", "to_currency": "JPY"},
            {"amount": 0, "from_currency": "EUR", "to_currency": "JPY"},
        ),
        "log_expense": (
            {
                "trip": "Rome",
                "amount": 42.5,
                "currency": "EUR",
                "category": "food",
                "note": "dinner",
            },
            {"trip": "Rome", "amount": 42.5, "currency": "EUR", "category": "souvenirs"},
        ),
        "expense_summary": ({"trip": "Lisbon"}, {"trip": ""}),
        "delete_expense": ({"expense_id": "E-40817"}, {"expense_id": "40817"}),
    },
    "servers/travel_calendar.py": {
        "list_events": (
            {"start_date": "2026-06-10", "end_date": "2026-06-14"},
            {"start_date": "2026-06-14", "end_date": "2026-06-10"},
        ),
        "add_event": (
            {"title": "Flight to Lisbon", "date": "2026-06-12", "start_time": "08:40"},
            {"title": "Flight to Lisbon", "date": "2026-06-12", "start_time": "8.40am"},
        ),
        "move_event": (
            None,
            {"event_id": "EV-20260614-9", "new_date": "2026-06-16", "new_start_time": "10:00"},
        ),
        "delete_event": (None, {"event_id": "EV-2026-06-20"}),  # filled below
        "find_free_time": (
            {"date": "2026-07-03", "duration_minutes": 120},
            {"date": "2026-07-03", "duration_minutes": 0},
        ),
    },
}


def _text(result: Any) -> str:
    data = _data(result)
    if data is not None and not _failed(result):
        return json.dumps(data, ensure_ascii=False)
    return " ".join(getattr(block, "text", "") for block in result.content)


async def _first(session: ClientSession, tool: str, args: dict[str, Any], key: str) -> Any:
    result = await session.call_tool(tool, args)
    if _failed(result):
        raise AssertionError(f"{tool}{args} failed: {_text(result)}")
    return _data(result)[key]


async def _fill(script: str, session: ClientSession, cases: Cases) -> None:
    """Valid arguments that depend on the fake data (an order in the right state, an existing
    event)."""
    if script.endswith("returns.py") or script.endswith("shipping.py"):
        wanted = ("delivered",) if script.endswith("returns.py") else ("processing", "packed")
        async with _orders() as orders:
            for n in range(10000, 10400):
                found = _data(await orders.call_tool("lookup_order", {"order_id": str(n)}))
                if found and found["status"] in wanted:
                    eligible = script.endswith("shipping.py")
                    if not eligible:
                        check = await session.call_tool("return_eligibility", {"order_id": str(n)})
                        eligible = bool(_data(check) and _data(check)["eligible"])
                    if eligible:
                        break
        sku = found["items"][0]["sku"]
        if script.endswith("returns.py"):
            cases["start_return"] = (
                {"order_id": str(n), "sku": sku, "reason": "too small"},
                cases["start_return"][1],
            )
            cases["issue_refund"] = (
                {"order_id": str(n), "amount": 10, "method": "store credit"},
                cases["issue_refund"][1],
            )
        else:
            cases["change_delivery_address"] = (
                {
                    "order_id": str(n),
                    "street": "Hauptstraße 12",
                    "postcode": "80331",
                    "city": "Munich",
                    "country": "de",
                },
                cases["change_delivery_address"][1],
            )
    if script.endswith("orders.py"):
        for n in range(30000, 30400):
            if (
                await _first(session, "lookup_order", {"order_id": str(n)}, "status")
            ) == "processing":
                break
        cases["cancel_order"] = (
            {"order_id": f"#{n}", "reason": "wrong colour"},
            cases["cancel_order"][1],
        )
    if script.endswith("account.py"):
        cases["redeem_points"] = (
            {"email": "sara.lindqvist@outlook.com", "points": 100},
            cases["redeem_points"][1],
        )
    if script.endswith("travel_calendar.py"):
        for day in range(1, 29):
            events = await _first(
                session,
                "list_events",
                {"start_date": f"2026-06-{day:02d}", "end_date": f"2026-06-{day:02d}"},
                "events",
            )
            if len(events) >= 2:
                break
        cases["move_event"] = (
            {
                "event_id": events[0]["event_id"],
                "new_date": "2026-06-16",
                "new_start_time": "10:00",
            },
            cases["move_event"][1],
        )
        cases["delete_event"] = ({"event_id": events[1]["event_id"]}, cases["delete_event"][1])


def _orders() -> Any:
    return _session(str(HERE / "servers/shop_orders.py"))


@contextlib.asynccontextmanager
async def _session(script: str) -> AsyncIterator[ClientSession]:
    """A started server and an initialised client session."""
    params = StdioServerParameters(command=sys.executable, args=[script])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _field(value: Any, snake: str, camel: str) -> Any:
    """An attribute under its mcp 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(value, snake, getattr(value, camel, None))


def _failed(result: Any) -> bool:
    return bool(_field(result, "is_error", "isError"))


def _data(result: Any) -> Any:
    return _field(result, "structured_content", "structuredContent")


async def check(script: str, cases: Cases) -> list[str]:
    problems = []
    async with _session(str(HERE / script)) as session:
        tools = (await session.list_tools()).tools
        names = sorted(t.name for t in tools)
        print(f"{script}: {len(tools)} tools: {', '.join(names)}")
        if set(names) != set(cases):
            problems.append(f"{script}: tools {names} != cases {sorted(cases)}")
        await _fill(script, session, cases)
        for tool in tools:
            notes = tool.annotations
            kind = (
                "read-only"
                if _field(notes, "read_only_hint", "readOnlyHint")
                else (
                    "destructive"
                    if _field(notes, "destructive_hint", "destructiveHint")
                    else "changes"
                )
            )
            if not tool.description:
                problems.append(f"{tool.name}: no description")
            good, bad = cases[tool.name]
            assert good is not None, f"{tool.name}: no valid arguments"
            ok = await session.call_tool(tool.name, good)
            refused = await session.call_tool(tool.name, bad)
            print(f"  {tool.name} [{kind}]")
            print(f"    valid:   {'ERROR ' if _failed(ok) else ''}{_text(ok)[:110]}")
            print(f"    invalid: {_text(refused)[:110]}")
            if _failed(ok):
                problems.append(f"{tool.name}{good} failed: {_text(ok)}")
            if not _failed(refused):
                problems.append(f"{tool.name}{bad} was accepted: {_text(refused)}")
    return problems


async def main() -> int:
    problems = []
    for script, cases in CASES.items():
        problems += await check(script, dict(cases))
    for problem in problems:
        print("PROBLEM:", problem)
    print("all servers checked" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
