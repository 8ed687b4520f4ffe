"""Runtime overhead: troupe's tree and Assistant against the same tree on plain ADK.

Both sides use the offline model, which answers instantly, and the same
instant tools, so what is timed is the orchestration itself. The two sides
alternate in small batches inside one process so that machine noise hits
both alike; the ratio of their medians is the figure that matters.
"""

from __future__ import annotations

import logging
import statistics
import time
from pathlib import Path
from typing import Any

from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from troupe.config import Config
from troupe.models.offline import OfflineModel
from troupe.runtime.assistant import Assistant
from troupe.tree import build_agent_tree

from .plain import plain_adk_tree
from .results import write_json
from .stub_tools import stub_tools

REQUESTS = (
    "list the files in src",
    "read notes.txt",
    "run `uname -a`",
    "open https://example.com and read the page",
    "remember that I like tea",
)


async def _troupe_side() -> Any:
    # The router off, like the plain-ADK side: both ask the orchestrator's model
    # every turn (bench router measures the router).
    config = Config(tools=stub_tools(), model=OfflineModel(), router="off")
    assistant = Assistant(build_agent_tree(config))

    async def turn(key: int) -> None:
        async for _ in assistant.run(f"t{key}", REQUESTS[key % len(REQUESTS)]):
            pass

    return turn


async def _plain_side() -> Any:
    service = InMemorySessionService()
    runner = Runner(
        app_name="bench",
        agent=plain_adk_tree(stub_tools(), OfflineModel()),
        session_service=service,
    )

    async def turn(key: int) -> None:
        await service.create_session(app_name="bench", user_id="u", session_id=f"p{key}")
        message = types.Content(role="user", parts=[types.Part(text=REQUESTS[key % len(REQUESTS)])])
        async for _ in runner.run_async(user_id="u", session_id=f"p{key}", new_message=message):
            pass

    return turn


async def run_overhead(
    *, turns: int = 2000, batch: int = 50, out: Path | None = None
) -> dict[str, Any]:
    """Time ``turns`` delegated turns on each side, interleaved in batches."""
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    sides = {"troupe": await _troupe_side(), "plain-adk": await _plain_side()}
    per_turn: dict[str, list[float]] = {name: [] for name in sides}
    for turn in sides.values():  # warm-up: imports, caches, first sessions
        for key in range(10):
            await turn(-1 - key)
    done = 0
    while done < turns:
        size = min(batch, turns - done)
        for name, turn in sides.items():
            start = time.perf_counter()
            for key in range(done, done + size):
                await turn(key)
            per_turn[name].append((time.perf_counter() - start) / size)
        done += size
    medians = {name: statistics.median(v) for name, v in per_turn.items()}
    totals = {name: sum(v) * batch for name, v in per_turn.items()}
    result = {
        "turns_per_side": turns,
        "batch": batch,
        "median_ms_per_turn": {k: round(v * 1000, 3) for k, v in medians.items()},
        "total_s": {k: round(v, 2) for k, v in totals.items()},
        "ratio_troupe_to_plain": round(medians["troupe"] / medians["plain-adk"], 3),
    }
    if out is not None:
        write_json(result, out)
    return result


def format_overhead(result: dict[str, Any]) -> str:
    """A small table of the overhead result."""
    med = result["median_ms_per_turn"]
    return "\n".join(
        [
            "side      | median ms/turn | total s",
            "----------+----------------+--------",
            f"troupe    | {med['troupe']:>14.3f} | {result['total_s']['troupe']:>7.2f}",
            f"plain-adk | {med['plain-adk']:>14.3f} | {result['total_s']['plain-adk']:>7.2f}",
            f"ratio troupe / plain ADK: {result['ratio_troupe_to_plain']:.3f}",
        ]
    )
