"""CLI start-up: ``troupe --help`` and ``troupe version`` against importing typer and rich alone.

Each command runs in a fresh interpreter, alternating with the baseline
(``python -c "import typer, rich.console"``) so both see the same machine load;
the table gives medians, the ratio and the difference, and the JSON keeps
every sample. A check that the help text starts without ADK, LiteLLM,
Playwright or MCP loaded runs too.

    python bench/cli_startup.py                 # 15 rounds
    python bench/cli_startup.py --rounds 5 --out /tmp/cli.json
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from troupe_bench.results import text_table, write_json

DEFAULT_OUT = Path(__file__).parent / "results" / "cli_startup.json"
HEAVY = ("google.adk", "google.genai", "litellm", "playwright", "mcp", "a2a", "sqlalchemy")
"""Packages ``troupe --help`` must not import."""

BASELINE = [sys.executable, "-c", "import typer, rich.console"]
_BARE_APP = (
    "import sys, typer\n"
    "app = typer.Typer(help='A bare app.', add_completion=False)\n"
    "@app.command()\ndef one() -> None:\n    'One command.'\n    print('one')\n"
    "@app.command()\ndef two() -> None: 'Another.'\n"
    "app(sys.argv[1:])\n"
)
COMMANDS: dict[str, list[str]] = {
    "troupe --help": [sys.executable, "-m", "troupe", "--help"],
    "troupe version": [sys.executable, "-m", "troupe", "version"],
    "bare typer app --help": [sys.executable, "-c", _BARE_APP, "--help"],
    "bare typer app one": [sys.executable, "-c", _BARE_APP, "one"],
}
"""Timed against the baseline; the bare two-command typer app (rich help) shows what
typer itself costs for help and for running a command."""
_LOADED = (
    "import sys, runpy; sys.argv = ['troupe', '--help']\n"
    "try:\n    runpy.run_module('troupe', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "print('\\n'.join(m for m in sys.modules), file=sys.stderr)\n"
)


def seconds(command: list[str]) -> float:
    """Wall time of one run of ``command`` in a fresh process."""
    start = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def heavy_modules_after_help() -> list[str]:
    """The heavy packages loaded by the time ``troupe --help`` has printed."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED], check=True, capture_output=True, text=True
    )
    loaded = done.stderr.split()
    return sorted({m.split(".")[0] if m != "google.adk" else m for m in loaded if m in HEAVY})


def measure(rounds: int) -> dict[str, Any]:
    """Alternate each command with the baseline ``rounds`` times."""
    samples: dict[str, list[float]] = {"baseline": [], **{name: [] for name in COMMANDS}}
    seconds(COMMANDS["troupe --help"])  # warm the file cache once
    for _ in range(rounds):
        for name, command in COMMANDS.items():
            samples["baseline"].append(seconds(BASELINE))
            samples[name].append(seconds(command))
    base = statistics.median(samples["baseline"])
    rows = []
    for name in COMMANDS:
        median = statistics.median(samples[name])
        rows.append(
            {
                "command": name,
                "median_s": round(median, 4),
                "baseline_median_s": round(base, 4),
                "ratio": round(median / base, 3),
                "extra_s": round(median - base, 4),
            }
        )
    return {
        "rounds": rounds,
        "baseline": "python -c 'import typer, rich.console'",
        "rows": rows,
        "heavy_modules_after_help": heavy_modules_after_help(),
        "samples_s": {k: [round(v, 4) for v in vs] for k, vs in samples.items()},
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def table(result: dict[str, Any]) -> str:
    """The printed table."""
    head = ("command", "median s", "typer+rich s", "ratio", "extra s")
    rows = [
        (
            row["command"],
            f"{row['median_s']:.3f}",
            f"{row['baseline_median_s']:.3f}",
            f"{row['ratio']:.2f}",
            f"{row['extra_s']:.3f}",
        )
        for row in result["rows"]
    ]
    heavy = ", ".join(result["heavy_modules_after_help"]) or "none"
    return text_table(head, rows) + f"\nheavy packages loaded by --help: {heavy}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="Alternating runs per command.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON result file.")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be 1 or more, not {args.rounds}")
    result = measure(args.rounds)
    print(table(result))
    print(f"JSON: {write_json(result, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
