"""Fault-injection benchmark: plain ADK vs the specified retry vs troupe's guards.

Every strategy runs the same labelled requests under the same seeded faults,
and once more without faults, so the extra model calls a fault costs can be
measured turn by turn. Prints a table and writes JSON.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from troupe.config import Config
from troupe.prompts import REJECT_MARKER, TRANSFER_TOOL
from troupe.runtime.assistant import Assistant, visible_text
from troupe.tree import build_agent_tree

from .faulty import FaultRates, FaultyModel
from .plain import plain_adk_tree
from .results import text_table, write_json
from .stub_tools import stub_tools

STRATEGIES = ("plain-adk", "retry-only", "troupe")
DEFAULT_RATES = FaultRates(
    hallucination=0.20,
    misroute=0.10,
    ping_pong=0.05,
    repeat=0.05,
    transient=0.05,
    agent_as_function=0.08,
    json_text=0.08,
    echoed_reject=0.04,
    persistent_bad_name=0.04,
)


@dataclass(frozen=True)
class Request:
    text: str
    expected: str


@dataclass
class TurnResult:
    completed: bool
    reached: bool
    calls: int
    leaked_reject: bool
    injected: dict[str, int]
    error: str | None = None


@dataclass
class StrategyResult:
    strategy: str
    turns: int = 0
    completed: int = 0
    reached: int = 0
    leaked_rejects: int = 0
    calls: int = 0
    clean_calls: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    extra_calls_by_fault: dict[str, list[int]] = field(default_factory=dict)
    reached_by_fault: dict[str, list[bool]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        injected = sum(v for k, v in self.faults.items() if k != "hallucination_unresolvable")
        return {
            "strategy": self.strategy,
            "turns": self.turns,
            "completed_pct": round(100 * self.completed / self.turns, 2),
            "reached_expected_pct": round(100 * self.reached / self.turns, 2),
            "model_calls_per_turn": round(self.calls / self.turns, 3),
            "clean_model_calls_per_turn": round(self.clean_calls / self.turns, 3),
            "extra_calls_per_fault": round((self.calls - self.clean_calls) / injected, 3)
            if injected
            else 0.0,
            "leaked_rejects": self.leaked_rejects,
            "faults_injected": dict(self.faults),
            "mean_extra_calls_single_fault": {
                k: round(sum(v) / len(v), 3) for k, v in sorted(self.extra_calls_by_fault.items())
            },
            "reached_pct_single_fault": {
                k: round(100 * sum(v) / len(v), 1) for k, v in sorted(self.reached_by_fault.items())
            },
            "single_fault_turns": {k: len(v) for k, v in sorted(self.reached_by_fault.items())},
            "errors": dict(self.errors),
            "wall_s": round(self.wall_s, 2),
        }


def load_requests(path: str | Path | None = None) -> list[Request]:
    """The labelled request set (shipped with troupe unless ``path`` is given)."""
    if path is None:
        text = (Path(__file__).parent / "data" / "fault_requests.jsonl").read_text()
    else:
        text = Path(path).read_text()
    return [Request(**json.loads(line)) for line in text.splitlines() if line.strip()]


Runner_ = Callable[[str, str], AsyncIterator[Event]]


def _make_runner(strategy: str, model: FaultyModel) -> Runner_:
    tools = stub_tools()
    if strategy == "plain-adk":
        root = plain_adk_tree(tools, model)
        service = InMemorySessionService()
        runner = Runner(app_name="bench", agent=root, session_service=service)

        async def run_plain(session_id: str, text: str) -> AsyncIterator[Event]:
            await service.create_session(app_name="bench", user_id="u", session_id=session_id)
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="u", session_id=session_id, new_message=message
            ):
                yield event

        return run_plain
    if strategy == "retry-only":
        config = Config(
            tools=tools,
            model=model,
            transfer_repair=False,
            guards=False,
            model_retries=0,
            router="off",
        )
    else:
        # The router off: the faults are injected into the orchestrator's model
        # calls, which a routed turn would not make (bench router measures it).
        config = Config(tools=tools, model=model, retry_base_delay=0.001, router="off")
    assistant = Assistant(build_agent_tree(config))
    return assistant.run


def _reached(events: list[Event], expected: str) -> bool:
    if expected == "orchestrator":
        texts = [e for e in events if visible_text(e)]
        return (
            bool(texts)
            and texts[-1].author == "orchestrator"
            and not any(e.actions and e.actions.transfer_to_agent for e in events)
        )
    for event in events:
        if event.author != expected or not event.content:
            continue
        for part in event.content.parts or []:
            if part.function_call and part.function_call.name != TRANSFER_TOOL:
                return True
            if part.text and not part.text.lstrip().startswith(REJECT_MARKER):
                return True
    return False


async def _run_turn(run: Runner_, model: FaultyModel, key: int, request: Request) -> TurnResult:
    faults = model.begin_turn(key)
    events: list[Event] = []
    error = None
    try:
        async for event in run(f"turn-{key}", request.text):
            events.append(event)
    except Exception as exc:  # a crashed turn is a result, not a benchmark failure
        error = type(exc).__name__
    shown = [visible_text(e) for e in events]
    shown = [s for s in shown if s]
    return TurnResult(
        completed=error is None and bool(shown),
        reached=_reached(events, request.expected),
        calls=faults.calls,
        leaked_reject=any(REJECT_MARKER in s for s in shown),
        injected=dict(faults.injected),
        error=error,
    )


async def run_strategy(
    strategy: str, requests: list[Request], *, turns: int, rates: FaultRates, seed: int
) -> StrategyResult:
    """Run ``turns`` turns with faults and the same turns without, for one strategy."""
    result = StrategyResult(strategy=strategy, turns=turns)
    clean_model = FaultyModel(rates=FaultRates(), seed=seed)
    faulty_model = FaultyModel(rates=rates, seed=seed)
    clean_run = _make_runner(strategy, clean_model)
    faulty_run = _make_runner(strategy, faulty_model)
    clean_calls: list[int] = []
    for key in range(turns):
        clean = await _run_turn(clean_run, clean_model, key, requests[key % len(requests)])
        clean_calls.append(clean.calls)
    start = time.perf_counter()
    for key in range(turns):
        turn = await _run_turn(faulty_run, faulty_model, key, requests[key % len(requests)])
        result.completed += turn.completed
        result.reached += turn.reached
        result.leaked_rejects += turn.leaked_reject
        result.calls += turn.calls
        result.faults.update(turn.injected)
        if turn.error:
            result.errors[turn.error] += 1
        kinds = [k for k in turn.injected if k != "hallucination_unresolvable"]
        if len(kinds) == 1 and turn.injected[kinds[0]] == 1:
            kind = kinds[0]
            if kind == "hallucination":
                unresolvable = turn.injected.get("hallucination_unresolvable")
                kind += "_unresolvable" if unresolvable else "_resolvable"
            result.extra_calls_by_fault.setdefault(kind, []).append(turn.calls - clean_calls[key])
            result.reached_by_fault.setdefault(kind, []).append(turn.reached)
    result.wall_s = time.perf_counter() - start
    result.clean_calls = sum(clean_calls)
    return result


def format_table(results: list[dict[str, Any]]) -> str:
    """A plain-text table of the strategy summaries."""
    head = (
        "strategy",
        "turns",
        "completed %",
        "reached %",
        "calls/turn",
        "extra/fault",
        "[REJECT] leaked",
        "wall s",
    )
    rows = [
        (
            r["strategy"],
            str(r["turns"]),
            f"{r['completed_pct']:.1f}",
            f"{r['reached_expected_pct']:.1f}",
            f"{r['model_calls_per_turn']:.2f}",
            f"{r['extra_calls_per_fault']:.2f}",
            str(r["leaked_rejects"]),
            f"{r['wall_s']:.1f}",
        )
        for r in results
    ]
    return text_table(head, rows)


def format_fault_table(results: list[dict[str, Any]]) -> str:
    """Turns with exactly one fault, per fault: reached % and extra model calls per strategy."""
    kinds = sorted({k for r in results for k in r["single_fault_turns"]})
    head = ("single fault", *(r["strategy"] for r in results))
    rows = [
        (
            f"{kind} ({max(r['single_fault_turns'].get(kind, 0) for r in results)})",
            *(
                f"{r['reached_pct_single_fault'][kind]:.0f}% "
                f"{r['mean_extra_calls_single_fault'][kind]:+.1f}"
                if kind in r["single_fault_turns"]
                else "-"
                for r in results
            ),
        )
        for kind in kinds
    ]
    return text_table(head, rows)


async def run_benchmark(
    *,
    turns: int = 1000,
    seed: int = 7,
    rates: FaultRates = DEFAULT_RATES,
    strategies: tuple[str, ...] = STRATEGIES,
    out: Path | None = None,
) -> list[dict[str, Any]]:
    """Run every strategy and return (and optionally write) their summaries."""
    quiet = [logging.getLogger(name) for name in ("google_adk", "troupe")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.CRITICAL)  # the injected faults would flood the table
    requests = load_requests()
    summaries = []
    try:
        for strategy in strategies:
            summary = await run_strategy(strategy, requests, turns=turns, rates=rates, seed=seed)
            summaries.append(summary.summary())
    finally:
        for logger, level in zip(quiet, levels, strict=True):
            logger.setLevel(level)
    if out is not None:
        payload = {
            "turns": turns,
            "seed": seed,
            "requests": len(requests),
            "rates": asdict(rates),
            "results": summaries,
        }
        write_json(payload, out)
    return summaries
