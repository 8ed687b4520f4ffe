"""Chronicler tools through the runner: per-user memory, time ranges, observations, restarts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from troupe.stores.memory import MemoryStore

DAY = 86_400.0


async def test_a_stored_memory_is_recalled_by_its_words(run_tool: Any) -> None:
    await run_tool("memory_store", {"text": "Prefers green tea in the morning.", "tags": ["food"]})
    await run_tool("memory_store", {"text": "Works on the billing service."})

    recalled = (await run_tool("memory_recall", {"query": "what tea do I like"})).response

    assert [m["text"] for m in recalled["memories"]] == ["Prefers green tea in the morning."]
    assert recalled["memories"][0]["tags"] == ["food"]
    assert "at" in recalled["memories"][0] and recalled["memories"][0]["score"] > 0


async def test_recall_without_a_query_returns_the_newest_first(run_tool: Any) -> None:
    for text in ("first note", "second note", "third note"):
        await run_tool("memory_store", {"text": text})
    recalled = (await run_tool("memory_recall", {"limit": 2})).response
    assert [m["text"] for m in recalled["memories"]] == ["third note", "second note"]


async def test_memories_belong_to_the_user_of_the_run(run_tool: Any) -> None:
    await run_tool("memory_store", {"text": "Alice's locker code is 1234."}, user_id="alice")

    as_bob = (await run_tool("memory_recall", {"query": "locker code"}, user_id="bob")).response
    as_alice = (await run_tool("memory_recall", {"query": "locker code"}, user_id="alice")).response

    assert as_bob["memories"] == []
    assert [m["text"] for m in as_alice["memories"]] == ["Alice's locker code is 1234."]


async def test_recall_by_time_range(run_tool: Any, data_dir: Path) -> None:
    store = MemoryStore(data_dir / "memory.db")
    now = time.time()
    store.add(user_id="user", kind="memory", text="old trip to Lisbon", at=now - 10 * DAY)
    store.add(user_id="user", kind="memory", text="trip to Oslo last week", at=now - 6 * DAY)
    await run_tool("memory_store", {"text": "trip to Rome today"})

    recent = (await run_tool("memory_recall", {"query": "trip", "since": "3 days"})).response
    middle = (
        await run_tool(
            "memory_recall", {"query": "trip", "since": "8 days ago", "until": "5 days ago"}
        )
    ).response
    iso = (await run_tool("memory_recall", {"until": "2000-01-01"})).response

    assert [m["text"] for m in recent["memories"]] == ["trip to Rome today"]
    assert [m["text"] for m in middle["memories"]] == ["trip to Oslo last week"]
    assert iso["memories"] == [] and iso["range"]["until"].startswith("2000-01-01")


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"since": "last blue moon"}, "is not a time troupe understands"),
        ({"since": "today", "until": "2000-01-01"}, "is after until"),
        ({"limit": "many"}, "limit must be a whole number"),
    ],
)
async def test_recall_refuses_bad_arguments_with_what_is_accepted(
    run_tool: Any, args: dict[str, Any], complaint: str
) -> None:
    result = (await run_tool("memory_recall", args)).response
    assert complaint in result["error"]
    assert result["accepted"]


async def test_memory_store_refuses_an_empty_memory(run_tool: Any) -> None:
    result = (await run_tool("memory_store", {"text": ""})).response
    assert "text is empty" in result["error"]


async def test_reflect_summary_summarizes_recent_observations(run_tool: Any) -> None:
    events = [
        ("deploy of billing failed on migrations", "deploy"),
        ("deploy of billing retried and passed", "deploy"),
        ("user asked for a weekly billing report", "request"),
    ]
    for event, category in events:
        await run_tool("observe_event", {"event": event, "category": category})

    summary = (await run_tool("reflect_summary")).response

    assert summary["observations"] == 3
    assert summary["by_category"] == {"deploy": 2, "request": 1}
    assert "billing" in summary["recurring_terms"]
    assert summary["latest"][0]["event"] == "user asked for a weekly billing report"
    assert summary["summary"].startswith("3 observations from ")


async def test_reflect_summary_with_nothing_observed_says_how_to_start(run_tool: Any) -> None:
    summary = (await run_tool("reflect_summary")).response
    assert summary["observations"] == 0
    assert "observe_event" in summary["summary"]


async def test_observations_are_not_returned_as_memories(run_tool: Any) -> None:
    await run_tool("observe_event", {"event": "the build went green"})
    recalled = (await run_tool("memory_recall", {"query": "build green"})).response
    assert recalled["memories"] == []


async def test_memory_survives_a_new_store_on_the_same_file(run_tool: Any, data_dir: Path) -> None:
    await run_tool("memory_store", {"text": "Birthday is on 12 March."}, user_id="carol")
    await run_tool("observe_event", {"event": "asked about birthdays"}, user_id="carol")

    reopened = MemoryStore(data_dir / "memory.db")

    found = reopened.recall(
        user_id="carol", kinds=("memory",), query="birthday", since=None, until=None, limit=5
    )
    assert [m["text"] for m in found] == ["Birthday is on 12 March."]
    assert reopened.count(user_id="carol", kind="observation") == 1
