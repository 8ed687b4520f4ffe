"""Runtime overhead: troupe's tree and Assistant against the same tree on plain ADK.

Both sides use the offline model, which answers instantly, and the same
instant tools, so what is timed is the orchestration itself: CPU work, with
no waiting. The two sides alternate in small batches inside one process, and
each batch is timed in the process's CPU time (the headline ratio) and in wall
time (kept beside it). CPU time leaves out the time the process spent waiting
for a core of a shared machine, which lands on whichever side is running; on
the 2-vCPU machine the wall-time ratio of two runs a minute apart differed by
up to 0.07. Each turn's session is deleted after the turn on both sides, so
the heap stays the same size for the whole run.
"""

from __future__ import annotations

import logging
import statistics
import time
from pathlib import Path
from typing import Any

from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
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
        await _forget(assistant.session_service, assistant.app_name, assistant.user_id, f"t{key}")

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
        await _forget(service, "bench", "u", f"p{key}")

    return turn


async def _forget(service: BaseSessionService, app: str, user: str, session: str) -> None:
    # Untimed-equal on both sides: each turn's session is dropped once it is done,
    # so the heap (and with it each garbage collection) stays the same size all
    # run long instead of growing by thousands of sessions, whose collections
    # then land on whichever side happens to be running.
    await service.delete_session(app_name=app, user_id=user, session_id=session)


async def run_overhead(
    *, turns: int = 2000, batch: int = 50, out: Path | None = None
) -> dict[str, Any]:
    """Time ``turns`` delegated turns on each side, interleaved in batches."""
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    sides = {"troupe": await _troupe_side(), "plain-adk": await _plain_side()}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    wall: dict[str, list[float]] = {name: [] for name in sides}
    for turn in sides.values():  # warm-up: imports, caches, first sessions
        for key in range(10):
            await turn(-1 - key)
    done = 0
    while done < turns:
        size = min(batch, turns - done)
        for name, turn in sides.items():
            started, clock = time.process_time(), time.perf_counter()
            for key in range(done, done + size):
                await turn(key)
            cpu[name].append((time.process_time() - started) / size)
            wall[name].append((time.perf_counter() - clock) / size)
        done += size
    medians = {name: statistics.median(v) for name, v in cpu.items()}
    wall_medians = {name: statistics.median(v) for name, v in wall.items()}
    result = {
        "turns_per_side": turns,
        "batch": batch,
        "median_cpu_ms_per_turn": {k: round(v * 1000, 3) for k, v in medians.items()},
        "median_wall_ms_per_turn": {k: round(v * 1000, 3) for k, v in wall_medians.items()},
        "ratio_troupe_to_plain": round(medians["troupe"] / medians["plain-adk"], 3),
        "wall_ratio_troupe_to_plain": round(wall_medians["troupe"] / wall_medians["plain-adk"], 3),
    }
    if out is not None:
        write_json(result, out)
    return result


def format_overhead(result: dict[str, Any]) -> str:
    """A small table of the overhead result."""
    cpu, wall = result["median_cpu_ms_per_turn"], result["median_wall_ms_per_turn"]
    return "\n".join(
        [
            "side      | median CPU ms/turn | median wall ms/turn",
            "----------+--------------------+--------------------",
            f"troupe    | {cpu['troupe']:>18.3f} | {wall['troupe']:>19.3f}",
            f"plain-adk | {cpu['plain-adk']:>18.3f} | {wall['plain-adk']:>19.3f}",
            f"ratio troupe / plain ADK: {result['ratio_troupe_to_plain']:.3f} (CPU), "
            f"{result['wall_ratio_troupe_to_plain']:.3f} (wall)",
        ]
    )
