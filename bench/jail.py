"""The jail's cost per command, and troupe's peak memory while a command floods its output.

Two measurements in one run, both through troupe's own process runner:

* cost: the same commands jailed and unjailed, alternating, ``--runs`` times
  each (see ``bench/sandbox.py``), with the median of each and their ratio;
* memory: a fresh Python process runs one jailed command that writes
  ``2 MB`` and one that writes ``2 GB`` to stdout, keeping troupe's default
  output limit, and reports its own peak RSS (``ru_maxrss``) before and after.
  Output is streamed and cut, so both peaks should be the same.

Prints a table and writes JSON.

    python bench/jail.py                  # 30 runs of each command, 2 MB and 2 GB
    python bench/jail.py --runs 10 --out /tmp/jail.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from troupe.builtins._process import run_process
from troupe.builtins.operator import MAX_OUTPUT_CHARS
from troupe.sandbox import Jail, command_env, sandbox_status
from troupe_bench.results import text_table, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.sandbox import measure as measure_cost

DEFAULT_OUT = Path(__file__).parent / "results" / "jail.json"
FLOODS = {"2 MB": 2_000_000, "2 GB": 2_000_000_000}
_FLOOD_TIMEOUT_S = 300.0


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def _flood(size: int) -> dict[str, Any]:
    """In this process: run a jailed command writing ``size`` bytes; what memory it cost."""
    with tempfile.TemporaryDirectory(prefix="troupe-bench-jail-") as tmp:
        workspace = Path(tmp)
        argv = Jail(workspace).wrap(["head", "-c", str(size), "/dev/zero"], writable=False)
        before = _peak_rss_mib()
        start = time.perf_counter()
        result = await run_process(
            argv=argv,
            cwd=workspace,
            env=command_env(),
            timeout_s=_FLOOD_TIMEOUT_S,
            max_output_chars=MAX_OUTPUT_CHARS,
        )
        seconds = time.perf_counter() - start
    if result.exit_code != 0 or result.stdout_bytes != size:
        raise SystemExit(f"the flood of {size} bytes failed: {result}")
    return {
        "bytes_written": result.stdout_bytes,
        "chars_kept": len(result.stdout),
        "peak_rss_before_mib": round(before, 1),
        "peak_rss_after_mib": round(_peak_rss_mib(), 1),
        "seconds": round(seconds, 2),
    }


def measure_memory() -> list[dict[str, Any]]:
    """Each flood in a fresh interpreter, so one peak does not hide the other."""
    rows = []
    for label, size in FLOODS.items():
        done = subprocess.run(
            [sys.executable, __file__, "--flood", str(size)],
            capture_output=True,
            text=True,
            check=False,
            timeout=_FLOOD_TIMEOUT_S + 60,
        )
        if done.returncode != 0:
            raise SystemExit(f"the {label} flood failed: {done.stderr.strip()[-500:]}")
        rows.append({"output": label, **json.loads(done.stdout)})
    return rows


def render(data: dict[str, Any]) -> str:
    """The results as two plain-text tables."""
    cost = text_table(
        ("command", "unjailed ms", "jailed ms", "ratio", "added ms"),
        [
            [
                r["command"],
                r["unjailed_median_ms"],
                r["jailed_median_ms"],
                r["ratio"],
                r["added_ms"],
            ]
            for r in data["cost"]
        ],
    )
    memory = text_table(
        ("output", "bytes written", "chars kept", "RSS before MiB", "peak RSS MiB", "seconds"),
        [
            [
                r["output"],
                r["bytes_written"],
                r["chars_kept"],
                r["peak_rss_before_mib"],
                r["peak_rss_after_mib"],
                r["seconds"],
            ]
            for r in data["memory"]
        ],
    )
    return f"{cost}\n\n{memory}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each command, each way")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write JSON")
    parser.add_argument("--flood", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.flood is not None:
        print(json.dumps(asyncio.run(_flood(args.flood))))
        return 0
    if not 1 <= args.runs <= 10_000:
        parser.error(f"--runs must be from 1 to 10000, not {args.runs}")
    status = sandbox_status()
    if not status.active:
        raise SystemExit(f"cannot measure the jail: {status.describe()}")
    timed = asyncio.run(measure_cost(args.runs))
    cost = [
        {
            "command": row["command"],
            "unjailed_median_ms": row["unjailed_median_ms"],
            "jailed_median_ms": row["jailed_median_ms"],
            "ratio": round(row["jailed_median_ms"] / max(row["unjailed_median_ms"], 0.01), 1),
            "added_ms": row["added_median_ms"],
        }
        for row in timed["results"]
    ]
    data = {
        "benchmark": "jail",
        "runs_per_command": args.runs,
        "sandbox": status.detail,
        "machine": timed["machine"],
        "max_output_chars": MAX_OUTPUT_CHARS,
        "cost": cost,
        "memory": measure_memory(),
    }
    print(render(data))
    print(f"wrote {write_json(data, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
