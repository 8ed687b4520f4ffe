"""``troupe trace``: list and show the traces of past turns."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.tree import Tree

from ..errors import TroupeError
from ..stores.traces import AWAITING_APPROVAL, FAILED
from ..terminal_text import for_rich, json_text
from .options import ConfigOpt, DataDirOpt, ListJsonOpt
from .tables import Column, fitted_table

if TYPE_CHECKING:
    from ..stores.traces import Trace, TraceStore

trace_app = typer.Typer(
    rich_markup_mode=None,
    help="Traces of past turns: path, model and tool calls.",
    no_args_is_help=True,
)
console = Console(highlight=False)


def _store(config: Path | None, data_dir: Path | None) -> TraceStore:
    from ..settings import load_settings

    try:
        return load_settings(config_path=config, data_dir=data_dir).trace_store()
    except TroupeError as exc:
        console.print(f"[bold red]error:[/] {for_rich(exc)}", soft_wrap=True)
        raise typer.Exit(code=2) from None


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


@trace_app.command("list")
def list_traces(
    limit: Annotated[int, typer.Option(help="How many, newest first.", min=1)] = 20,
    session: Annotated[str | None, typer.Option(help="Only this session.")] = None,
    json_output: ListJsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """The newest traces: when, session, request, path, outcome, calls and time."""
    traces = _store(config, data_dir).list(limit=limit, session_id=session)
    if json_output:
        # ASCII-only JSON: every control character is a \u escape.
        print(json.dumps([t.summary() for t in traces], indent=2))
        return
    if not traces:
        console.print("No traces yet: run `troupe chat` first.")
        return
    rows = [
        [
            t.id,
            _short_when(t.started_at),
            outcome_text(t.outcome, t.error),
            t.request,
            " → ".join(t.path),
            t.session_id,
            f"{t.duration_ms:.0f}",
            str(len(t.model_calls)),
            str(t.tokens()),
        ]
        for t in traces
    ]
    console.print(fitted_table(TRACE_COLUMNS, rows, console.width))


TRACE_COLUMNS = (
    Column("id", worth=10),
    Column("when", worth=8),
    Column("outcome", worth=9, cut=True, min_width=len(AWAITING_APPROVAL)),
    Column("request", worth=7, cut=True, min_width=12),
    Column("path", worth=5, cut=True),
    Column("session", worth=4, cut=True),
    Column("ms", worth=6, justify="right"),
    Column("calls", worth=3, justify="right"),
    Column("tokens", worth=2, justify="right"),
)
"""``trace list``'s columns; at 80 columns the last ones give way first."""


def outcome_text(outcome: str, error: str | None) -> str:
    """How a turn ended, with its error when it failed: ``failed: HTTP 401 ...``."""
    return f"{outcome}: {error}" if outcome == FAILED and error else outcome


def _short_when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%m-%d %H:%M")


def render_trace(trace: Trace) -> Tree:
    """A rich tree of one trace; every text in it is shown, never interpreted."""
    root = Tree(
        f"[bold]trace {for_rich(trace.id)}[/] · session {for_rich(trace.session_id)} · "
        f"{_when(trace.started_at)} · {trace.duration_ms:.0f} ms · "
        f"[bold]{for_rich(trace.outcome)}[/]"
    )
    root.add(f"request: {for_rich(trace.request)}")
    root.add(for_rich(f"path: {' → '.join(trace.path) or '(none)'}"))
    if trace.repairs:
        root.add(
            for_rich("repairs: " + ", ".join(f"{bad} → {real}" for bad, real in trace.repairs))
        )
    if trace.unresolved:
        root.add(for_rich("unresolved names: " + ", ".join(trace.unresolved)))
    if trace.invalid_names:
        root.add(for_rich("invalid names: " + ", ".join(trace.invalid_names)))
    if trace.rejections:
        root.add(for_rich("rejected by: " + ", ".join(trace.rejections)))
    if trace.stop_reason:
        root.add(f"stopped: {for_rich(trace.stop_reason)}")
    if trace.error:
        root.add(f"[red]error: {for_rich(trace.error)}[/]")
    if trace.allowed:
        root.add(for_rich("allowed for this session: " + ", ".join(trace.allowed)))
    cached = f", {trace.cached_share():.0%} of the prompt cached" if trace.cached_share() else ""
    models = root.add(f"model calls ({len(trace.model_calls)}, {trace.tokens()} tokens{cached})")
    for c in trace.model_calls:
        hit = f" ({c['cached_tokens']} cached)" if c.get("cached_tokens") else ""
        models.add(
            f"{for_rich(c['agent'])}: {c['prompt_tokens']} in{hit} / {c['output_tokens']} out, "
            f"{c['latency_ms']:.1f} ms"
        )
    tools = root.add(f"tool calls ({len(trace.tool_calls)})")
    for c in trace.tool_calls:
        args = for_rich(json_text(c["args"])[:120])
        status = f" [red]error: {for_rich(str(c['error'])[:80])}[/]" if c.get("error") else ""
        if c.get("paused_for_approval"):
            status = " [yellow]asked for approval[/]"
        tools.add(
            f"{for_rich(c['agent'])} → {for_rich(c['tool'])}({args}) · "
            f"{c['result_chars']} chars · {c['duration_ms']:.1f} ms{status}"
        )
    if trace.answer:
        root.add(f"answer: {for_rich(trace.answer[:300])}")
    return root


@trace_app.command("show")
def show_trace(
    trace_id: Annotated[str, typer.Argument(help="A trace id (or a unique prefix).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the raw JSON.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """One trace in full."""
    trace = _store(config, data_dir).get(trace_id)
    if trace is None:
        console.print(
            f"[red]No single trace matches {for_rich(repr(trace_id))}[/]; see `troupe trace list`."
        )
        raise typer.Exit(code=1)
    if json_output:
        from dataclasses import asdict

        # ASCII-only JSON: every control character is a \u escape.
        print(json.dumps(asdict(trace), indent=2))
        return
    console.print(render_trace(trace))
