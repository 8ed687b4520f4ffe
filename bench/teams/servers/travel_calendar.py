"""The traveller's calendar as a stdio MCP server: list, add, move and delete events.

Run it as a script: ``python bench/teams/servers/travel_calendar.py``.
An event id names its day and place in it (EV-20250614-2), so the fake
calendar's existing events are the same on every run.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import fake_backend as fb

server = fb.FastMCP("travel-calendar")
_TITLES = (
    "Team meeting",
    "Dentist",
    "Call with Maria",
    "Gym",
    "Project review",
    "Lunch with Tom",
    "Train to the airport",
    "School pick-up",
    "Yoga",
    "Budget planning",
)
_added: dict[str, dict[str, Any]] = {}
_moved: dict[str, dict[str, Any]] = {}
_deleted: set[str] = set()


def _time(name: str, value: str) -> dt.time:
    text = (value or "").strip()
    if not re.fullmatch(r"\d{1,2}:\d{2}", text):
        raise fb.InputError(
            f"{name} {value!r} is not a time: write it as HH:MM on a 24-hour clock, e.g. 14:30."
        )
    hours, minutes = (int(part) for part in text.split(":"))
    if hours > 23 or minutes > 59:
        raise fb.InputError(f"{name} {value!r} is not a time of day: hours 0-23, minutes 0-59.")
    return dt.time(hours, minutes)


def _existing(day: dt.date) -> list[dict[str, Any]]:
    """The events the calendar already holds on ``day``."""
    r = fb.rng("calendar", day)
    events = []
    for n in range(1, r.randint(0, 3) + 1):
        start = dt.time(r.randint(8, 18), r.choice((0, 30)))
        events.append(
            {
                "event_id": f"EV-{day:%Y%m%d}-{n}",
                "title": r.choice(_TITLES),
                "date": day.isoformat(),
                "start": start.strftime("%H:%M"),
                "duration_minutes": r.choice((30, 60, 90)),
                "location": "",
            }
        )
    return events


def _events(day: dt.date) -> list[dict[str, Any]]:
    rows = [_moved.get(str(e["event_id"]), e) for e in _existing(day)]
    rows += [
        e
        for e in [*_added.values(), *_moved.values()]
        if e["date"] == day.isoformat() and e not in rows
    ]
    rows = [e for e in rows if e["date"] == day.isoformat() and e["event_id"] not in _deleted]
    return sorted(rows, key=lambda e: str(e["start"]))


def _find(event_id: str) -> dict[str, Any]:
    code = fb.need_pattern(
        "event_id", event_id, r"EV-\d{8}-\d{1,3}", "EV-20250614-2 (from list_events)"
    )
    if code in _deleted:
        raise fb.InputError(f"event {code} was deleted.")
    if code in _moved or code in _added:
        return _moved.get(code) or _added[code]
    day = fb.need_date("event_id date", f"{code[3:7]}-{code[7:9]}-{code[9:11]}")
    for event in _existing(day):
        if event["event_id"] == code:
            return event
    raise fb.InputError(f"there is no event {code}: list the day's events to find its id.")


@server.tool(annotations=fb.READ_ONLY)
def list_events(start_date: str, end_date: str) -> dict[str, Any]:
    """The calendar's events from start_date to end_date (YYYY-MM-DD, at most 31 days)."""
    start, end = fb.need_date("start_date", start_date), fb.need_date("end_date", end_date)
    if end < start:
        raise fb.InputError(f"end_date {end_date} is before start_date {start_date}.")
    if (end - start).days > 31:
        raise fb.InputError("that range is longer than 31 days: ask for a month at most.")
    days = [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]
    return {
        "from": start.isoformat(),
        "to": end.isoformat(),
        "events": [e for d in days for e in _events(d)],
    }


@server.tool(annotations=fb.CHANGES)
def add_event(
    title: str, date: str, start_time: str, duration_minutes: int = 60, location: str = ""
) -> dict[str, Any]:
    """Put an event (a flight, a check-in, a dinner...) in the calendar on a date at a time
    (HH:MM)."""
    name = fb.need_text("title", title, max_len=120)
    day = fb.need_date("date", date)
    start = _time("start_time", start_time)
    minutes = fb.need_int("duration_minutes", duration_minutes, 5, 24 * 60)
    event_id = f"EV-{day:%Y%m%d}-{100 + len(_added)}"
    _added[event_id] = {
        "event_id": event_id,
        "title": name,
        "date": day.isoformat(),
        "start": start.strftime("%H:%M"),
        "duration_minutes": minutes,
        "location": (location or "").strip()[:120],
    }
    return _added[event_id]


@server.tool(annotations=fb.CHANGES)
def move_event(event_id: str, new_date: str, new_start_time: str) -> dict[str, Any]:
    """Move an event (by id, from list_events) to another date (YYYY-MM-DD) and start time
    (HH:MM)."""
    event = _find(event_id)
    day = fb.need_date("new_date", new_date)
    start = _time("new_start_time", new_start_time)
    moved = {**event, "date": day.isoformat(), "start": start.strftime("%H:%M")}
    _moved[str(event["event_id"])] = moved
    return moved


@server.tool(annotations=fb.DESTRUCTIVE)
def delete_event(event_id: str) -> dict[str, Any]:
    """Delete an event from the calendar by its id (from list_events)."""
    event = _find(event_id)
    _deleted.add(str(event["event_id"]))
    return {"event_id": event["event_id"], "title": event["title"], "deleted": True}


@server.tool(annotations=fb.READ_ONLY)
def find_free_time(date: str, duration_minutes: int) -> dict[str, Any]:
    """Free slots of at least duration_minutes between 08:00 and 20:00 on a date (YYYY-MM-DD)."""
    day = fb.need_date("date", date)
    need = fb.need_int("duration_minutes", duration_minutes, 5, 12 * 60)
    busy = []
    for event in _events(day):
        hours, minutes = (int(p) for p in str(event["start"]).split(":"))
        begin = hours * 60 + minutes
        busy.append((begin, begin + int(event["duration_minutes"])))
    free, cursor = [], 8 * 60
    for begin, end in [*sorted(busy), (20 * 60, 20 * 60)]:
        if begin - cursor >= need:
            free.append(
                {
                    "from": f"{cursor // 60:02d}:{cursor % 60:02d}",
                    "to": f"{begin // 60:02d}:{begin % 60:02d}",
                }
            )
        cursor = max(cursor, end)
    return {"date": day.isoformat(), "free": free}


if __name__ == "__main__":
    server.run()
