"""``troupe eval``: run the labelled routing set through the orchestrator and score it."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from .common import fail, quiet_logs
from .options import ApiBaseOpt, ConfigOpt, ModelOpt, RouterOpt

RESULTS = Path("bench/results")


class WebMode(StrEnum):
    """Where the navigator's pages come from in an evaluation."""

    live = "live"
    stand_in = "stand-in"


REPORT_WIDTH = 160
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""
    app.command("eval")(eval_command)


def eval_command(
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    config: ConfigOpt = None,
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            help="test (the frozen test set, never tuned on), dev (the development set "
            "the router is tuned on), or a JSONL file.",
        ),
    ] = "test",  # evaluation.dataset.DEFAULT_SET (importing it here would load ADK)
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=1, help="Evaluate N requests spread over every agent."),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", "-j", min=1, help="Requests in flight at once."),
    ] = 1,
    out_json: Annotated[Path, typer.Option("--out-json", help="JSON report file.")] = RESULTS
    / "eval.json",
    out_html: Annotated[Path, typer.Option("--out-html", help="HTML report file.")] = RESULTS
    / "eval.html",
    router: RouterOpt = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--router-threshold",
            min=0.0,
            max=1.0,
            help="Confidence the router needs to route (default 0.75).",
        ),
    ] = None,
    stub_tools: Annotated[
        bool,
        typer.Option(
            "--stub-tools",
            help="Score the tree over the benchmark kit's instant stub tools instead of the "
            "built-in tools (from a source checkout only).",
        ),
    ] = False,
    files: Annotated[
        Path | None,
        typer.Option(
            "--files",
            help="A folder whose contents are copied into the scratch workspace first, for "
            "requests that read or change files.",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    web: Annotated[
        WebMode,
        typer.Option(
            "--web",
            help="live: the navigator loads the real web. stand-in: every page is one "
            "troupe makes from its address and nothing leaves the machine, for a set whose "
            "web steps should run where there is no network.",
        ),
    ] = WebMode.live,
    end_to_end: Annotated[
        bool,
        typer.Option(
            "--end-to-end",
            help="Run every request to its end, every approval granted, and also score "
            "whether its agent ran one of its own tools without an error (the End to end "
            "column), not only where it was routed. Slower: every tool runs.",
        ),
    ] = False,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            help="Append one line of figures (commit, team, dataset, scores) to this JSONL "
            "file: the record of every run of a frozen set.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show ADK's logs.")] = False,
) -> None:
    """Score the orchestrator's routing on a labelled request set; write JSON and HTML.

    The tree is the team your configuration builds (its topology, MCP servers and
    remote agents), over troupe's built-in tools in a scratch workspace and data
    directory (deleted afterwards): your files, secrets and stores are never
    touched. The set's labels must name that team's agents. Compound requests
    run to the end with every approval granted, and count only when each step's
    agent ran one of its tools without an error, in order.
    """
    from ..errors import TroupeError

    quiet_logs(verbose)
    try:
        with _quiet_troupe_logs(verbose):
            report, columns_given = _run(
                model=model,
                api_base=api_base,
                config=config,
                dataset=dataset,
                limit=limit,
                concurrency=concurrency,
                router=router,
                threshold=threshold,
                stub_tools=stub_tools,
                files=files,
                web=web,
                end_to_end=end_to_end,
            )
    except TroupeError as exc:
        raise fail(exc) from None
    from ..evaluation.html_report import write_html
    from ..evaluation.report import write_json
    from ..evaluation.table import render_report

    width = console.width
    if not console.is_terminal and not columns_given:
        # Piped with no width given: one wide table per report, for logs and grep.
        width = max(width, REPORT_WIDTH)
    console.print(render_report(report, width), width=width)
    write_json(report, out_json)
    write_html(report, out_html)
    console.print(f"[dim]wrote {escape(str(out_json))} and {escape(str(out_html))}[/]")
    if log is not None:
        from ..evaluation.report import append_run_log

        append_run_log(report, log)
        console.print(f"[dim]logged the run in {escape(str(log))}[/]")


def _run(
    *,
    model: str | None,
    api_base: str | None,
    config: Path | None,
    dataset: str,
    limit: int | None,
    concurrency: int,
    router: str | None = None,
    threshold: float | None = None,
    stub_tools: bool = False,
    files: Path | None = None,
    web: WebMode = WebMode.live,
    end_to_end: bool = False,
) -> tuple[dict[str, Any], bool]:
    """The report, and whether the environment gives a terminal width (COLUMNS)."""
    from ..config import router_mode
    from ..evaluation.dataset import load_cases, spread
    from ..evaluation.report import build_report, team_summary
    from ..evaluation.runner import check_labels, eval_tree
    from ..models.resolve import model_label
    from ..paths import default_session_store
    from ..settings import load_settings

    cases = spread(load_cases(dataset), limit)
    with tempfile.TemporaryDirectory(prefix="troupe-eval-") as scratch:
        # The same layers and model key as `troupe chat`: options > TROUPE_* > file >
        # defaults; only the workspace and every store move to the scratch directory.
        workspace, data_dir = Path(scratch) / "workspace", Path(scratch) / "data"
        if files is not None:
            shutil.copytree(files, workspace, symlinks=True)
        else:
            workspace.mkdir()
        settings = load_settings(
            config_path=config,
            model=model,
            api_base=api_base,
            router=router,
            router_threshold=threshold,
            workspace=workspace,
            data_dir=data_dir,
            session_store=default_session_store(data_dir),
        )
        # The team chat would build: topology, MCP servers and remote agents.
        team_config = settings.config
        root = eval_tree(team_config, _stub_tools() if stub_tools else None)
        check_labels(cases, root)
        label = model_label(root.model)
        start = time.perf_counter()
        with _progress(len(cases), label) as advance, _web(web):
            results = asyncio.run(
                _evaluate(
                    root,
                    cases,
                    concurrency=concurrency,
                    on_result=lambda _: advance(),
                    end_to_end=end_to_end,
                )
            )
    report = build_report(
        results,
        model=f"{label}, router {router_mode(team_config)}, "
        + ("stub tools" if stub_tools else "built-in tools")
        + (", web stand-in" if web is WebMode.stand_in else "")
        + (", end to end" if end_to_end else ""),
        dataset=_dataset_label(dataset),
        concurrency=concurrency,
        wall_s=time.perf_counter() - start,
        team=team_summary(team_config.topology, [a.name for a in root.sub_agents]),
    )
    return report, bool(settings.environ.get("COLUMNS"))


async def _evaluate(
    root: Any,
    cases: Any,
    *,
    concurrency: int,
    on_result: Callable[[Any], None],
    end_to_end: bool = False,
) -> Any:
    """The evaluation, then the model provider's clients and the browser closed
    in the same event loop."""
    from ..builtins.browser_session import close_shared_browser
    from ..evaluation.runner import evaluate_cases
    from ..models.clients import close_model_clients

    try:
        return await evaluate_cases(
            root, cases, concurrency=concurrency, on_result=on_result, end_to_end=end_to_end
        )
    finally:
        await close_model_clients()
        await close_shared_browser()


@contextmanager
def _web(web: WebMode) -> Iterator[None]:
    """The navigator's pages made from their addresses (``--web stand-in``) while
    the evaluation runs."""
    if web is not WebMode.stand_in:
        yield
        return
    from ..builtins.browser_session import shared_browser
    from ..builtins.stand_in_web import stand_in_page

    browser = shared_browser()
    browser.stand_in = stand_in_page
    try:
        yield
    finally:
        browser.stand_in = None


def _stub_tools() -> list[Any]:
    """The benchmark kit's stub tools (a checkout's ``bench/troupe_bench``)."""
    from ..errors import ConfigError
    from .checkout import CheckoutOnlyError, bench_kit

    try:
        return list(bench_kit("stub_tools", "troupe eval --stub-tools").stub_tools())
    except CheckoutOnlyError as exc:
        raise ConfigError(str(exc)) from None


def _dataset_label(dataset: str) -> str:
    from ..evaluation.dataset import BUILTIN_SETS

    if dataset in BUILTIN_SETS:
        return f"troupe's {dataset} set ({BUILTIN_SETS[dataset]})"
    return dataset


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A progress bar on a terminal; nothing when output is captured."""
    if not err_console.is_terminal:
        yield lambda: None
        return
    from rich.progress import Progress

    with Progress(console=err_console, transient=True) as progress:
        task = progress.add_task(f"routing with {label}", total=total)
        yield lambda: progress.advance(task)


@contextmanager
def _quiet_troupe_logs(verbose: bool) -> Iterator[None]:
    """Hide troupe's per-request repair warnings; the report counts them."""
    logger = logging.getLogger("troupe")
    previous = logger.level
    if not verbose:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)
