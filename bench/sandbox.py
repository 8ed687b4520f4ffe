"""Sandbox latency: the same commands run jailed (bubblewrap) and unjailed, side by side.

Runs each command ``--runs`` times through troupe's own process runner, alternating
jailed and unjailed runs so both share the machine's load, and reports the median and
95th percentile wall time per command and the time the jail adds. Prints a table and
writes JSON.

    python bench/sandbox.py                   # 200 runs of each command
    python bench/sandbox.py --runs 20 --out /tmp/sandbox.json
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from troupe.builtins._process import run_process
from troupe.sandbox import Jail, command_env, sandbox_status
from troupe_bench.results import text_table, write_json

COMMANDS = ("true", "ls -la", "cat notes.txt | wc -l")
DEFAULT_OUT = Path(__file__).parent / "results" / "sandbox.json"
TARGET_ADDED_MS = 30.0


async def _time_once(argv: list[str], workspace: Path) -> float:
    start = time.perf_counter()
    result = await run_process(
        argv=argv, cwd=workspace, env=command_env(), timeout_s=30, max_output_chars=10_000
    )
    elapsed = (time.perf_counter() - start) * 1000
    if result.exit_code != 0:
        raise SystemExit(f"{argv} failed with exit code {result.exit_code}: {result.stderr}")
    return elapsed


async def measure(runs: int) -> dict[str, Any]:
    """Time every command ``runs`` times each way; the JSON this script writes."""
    status = sandbox_status()
    if not status.active:
        raise SystemExit(f"cannot measure the jail: {status.describe()}")
    with tempfile.TemporaryDirectory(prefix="troupe-bench-sandbox-") as tmp:
        workspace = Path(tmp)
        (workspace / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
        jail = Jail(workspace)
        rows = []
        for command in COMMANDS:
            plain = ["/bin/sh", "-c", command]
            jailed = jail.wrap(plain, writable=False)
            times: dict[str, list[float]] = {"unjailed": [], "jailed": []}
            await _time_once(jailed, workspace)  # warm the page cache once
            for _ in range(runs):
                times["unjailed"].append(await _time_once(plain, workspace))
                times["jailed"].append(await _time_once(jailed, workspace))
            rows.append(_row(command, times))
    return {
        "benchmark": "sandbox",
        "runs_per_command": runs,
        "sandbox": status.detail,
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "target_added_ms": TARGET_ADDED_MS,
        "results": rows,
    }


def _row(command: str, times: dict[str, list[float]]) -> dict[str, Any]:
    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

    unjailed, jailed = statistics.median(times["unjailed"]), statistics.median(times["jailed"])
    return {
        "command": command,
        "unjailed_median_ms": round(unjailed, 2),
        "jailed_median_ms": round(jailed, 2),
        "unjailed_p95_ms": round(p95(times["unjailed"]), 2),
        "jailed_p95_ms": round(p95(times["jailed"]), 2),
        "added_median_ms": round(jailed - unjailed, 2),
    }


def render(data: dict[str, Any]) -> str:
    """The results as a plain-text table."""
    head = ("command", "unjailed ms", "jailed ms", "added ms", "unjailed p95", "jailed p95")
    keys = (
        "command",
        "unjailed_median_ms",
        "jailed_median_ms",
        "added_median_ms",
        "unjailed_p95_ms",
        "jailed_p95_ms",
    )
    return text_table(head, [[row[k] for k in keys] for row in data["results"]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each command, each way")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 10_000:
        parser.error(f"--runs must be from 1 to 10000, not {args.runs}")
    data = asyncio.run(measure(args.runs))
    print(render(data))
    print(f"wrote {write_json(data, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
