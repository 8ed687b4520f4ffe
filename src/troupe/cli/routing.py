"""``troupe routing``: the orchestrator's instruction, and ``routing calibrate``:
the router's threshold chosen on a team's own labelled requests."""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..errors import ConfigError, TroupeError
from ..terminal_text import visible
from .common import console, fail, quiet_logs
from .options import ConfigOpt, ModelOpt, TopologyOpt, TrustOpt, WorkspaceOpt

if TYPE_CHECKING:
    from ..evaluation.dataset import RoutingCase
    from ..routing.calibration import CalibrationPoint, HeldOutCheck
    from ..routing.router import Router

MIN_PRECISION = 0.97
"""The precision ``routing calibrate`` holds by default."""

routing_app = typer.Typer(
    rich_markup_mode=None,
    invoke_without_command=True,
    no_args_is_help=False,
    help="Print the orchestrator's instruction (routing table and protocols); "
    "'routing calibrate' fits the router's threshold to your team.",
)


@routing_app.callback()
def routing(
    ctx: typer.Context,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    workspace: WorkspaceOpt = None,
    topology: TopologyOpt = None,
    trust_workspace_config: TrustOpt = False,
) -> None:
    """Print the orchestrator's instruction (routing table and protocols)."""
    if ctx.invoked_subcommand is not None:
        return
    from ..settings import load_settings
    from ..tree import build_agent_tree

    quiet_logs(False)
    try:
        settings = load_settings(
            config_path=config,
            model=model,
            workspace=workspace,
            topology=topology,
            trust_workspace_config=trust_workspace_config or None,
        )
        root = build_agent_tree(settings.config)
    except TroupeError as exc:
        raise fail(exc) from None
    # The instruction quotes remote agents' cards and MCP servers' tool descriptions.
    sys.stdout.write(visible(str(root.instruction)))


@routing_app.command("calibrate")
def calibrate_command(
    config: ConfigOpt = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="Your labelled requests (JSONL, as for troupe eval) for the team the config "
            "builds. Without it the default threshold stays.",
        ),
    ] = None,
    precision: Annotated[
        float,
        typer.Option(
            "--precision", min=0.5, max=1.0, help="The precision the threshold must hold."
        ),
    ] = MIN_PRECISION,
    write: Annotated[
        bool,
        typer.Option("--write", help="Write the threshold into the config file without asking."),
    ] = False,
) -> None:
    """Choose the router's threshold on your team's labelled requests.

    The threshold with the most coverage whose precision holds at least
    --precision on the set is chosen, checked on held-out halves (chosen on
    one half, measured on the other), and written to the config's
    ``router: {threshold: ...}`` (asked first at a terminal; --write to skip
    the question).
    """
    from ..routing.router import DEFAULT_THRESHOLD

    quiet_logs(False)
    if dataset is None:
        console.print(
            f"No --dataset: the router keeps its default threshold, {DEFAULT_THRESHOLD}, "
            "chosen for precision first on troupe's own sets. Label some of your team's "
            "requests (one JSON object a line: text, expected) and pass them with --dataset "
            "to fit it to your team."
        )
        return
    try:
        report = asyncio.run(_calibrate(config, dataset, precision))
    except TroupeError as exc:
        raise fail(exc) from None
    console.print(report.table())
    chosen = report.chosen
    if chosen.precision < precision:
        console.print(
            f"No threshold holds {precision:.0%} precision on this set; the config is "
            "left as it is. To see which requests the router sends where, run troupe eval "
            "with the same -c and --dataset (its report lists every decision); then add "
            "example requests to the agents it confuses, or label more requests."
        )
        raise typer.Exit(1)
    line = f"router: {{mode: auto, threshold: {chosen.threshold:g}}}"
    if config is None:
        console.print(f"Put this in your troupe.yaml: [bold]{escape(line)}[/]")
        return
    if not write and not _confirmed(config, chosen.threshold):
        console.print(f"Not written. To use it, put this in {escape(str(config))}: {escape(line)}")
        return
    set_router_threshold(config, chosen.threshold)
    console.print(f"wrote router threshold {chosen.threshold:g} to {escape(str(config))}")


def _confirmed(config: Path, threshold: float) -> bool:
    if not sys.stdin.isatty():
        return False
    return typer.confirm(f"Write router threshold {threshold:g} to {config}?", default=False)


class CalibrationReport:
    """The sweep, the chosen point, the held-out check and the calibration error."""

    def __init__(
        self,
        *,
        team: str,
        requests: int,
        points: list[CalibrationPoint],
        chosen: CalibrationPoint,
        held_out: list[HeldOutCheck],
        error: float,
        precision: float,
    ) -> None:
        self.team, self.requests, self.points = team, requests, points
        self.chosen, self.held_out, self.error = chosen, held_out, error
        self.precision = precision

    def table(self) -> str:
        """The report as plain text (thresholds, the choice, the held-out check)."""
        lines = [
            f"team: {self.team}, {self.requests} labelled requests, target precision "
            f"{self.precision:.0%}",
            "threshold | decided | coverage | precision",
        ]
        for p in self.points:
            mark = "  <- chosen" if p is self.chosen else ""
            lines.append(
                f"{p.threshold:9.2f} | {p.decided:7d} | {p.coverage:8.1%} | {p.precision:9.1%}"
                + mark
            )
        lines.append(
            f"chosen {self.chosen.threshold:g}: coverage {self.chosen.coverage:.1%}, precision "
            f"{self.chosen.precision:.1%}, calibration error {self.error:.3f}"
        )
        for check in self.held_out:
            lines.append(
                f"held-out half {check.held_out}: threshold {check.threshold:g} chosen on the "
                f"other half gives coverage {check.check.coverage:.1%}, precision "
                f"{check.check.precision:.1%}"
            )
        return "\n".join(escape(line) for line in lines)


async def _calibrate(config: Path | None, dataset: Path, precision: float) -> CalibrationReport:
    from ..evaluation.dataset import load_cases
    from ..evaluation.runner import check_labels, eval_tree
    from ..paths import default_session_store
    from ..routing.calibration import calibrate, calibration_error, choose, held_out_check
    from ..settings import load_settings

    cases = load_cases(dataset)
    with tempfile.TemporaryDirectory(prefix="troupe-calibrate-") as scratch:
        workspace, data_dir = Path(scratch) / "workspace", Path(scratch) / "data"
        workspace.mkdir()
        settings = load_settings(
            config_path=config,
            workspace=workspace,
            data_dir=data_dir,
            session_store=default_session_store(data_dir),
            router="auto",
        )
        root = eval_tree(settings.config)
        check_labels(cases, root)
        fast = getattr(root, "troupe_router", None)
        if fast is None:
            raise ConfigError("The router is off in this configuration; set router: auto.")
        router: Router = await fast.router()
        labelled = [(case.text, _right_routes(case, router)) for case in cases]
        points = calibrate(router, labelled)
        chosen = choose(points, min_precision=precision)
        return CalibrationReport(
            team=str(settings.topology),
            requests=len(cases),
            points=points,
            chosen=chosen,
            held_out=held_out_check(router, labelled, min_precision=precision),
            error=calibration_error(router, labelled, chosen.threshold),
            precision=precision,
        )


def _right_routes(case: RoutingCase, router: Router) -> tuple[str, ...]:
    """The routing decisions that are right for ``case``: its agents; a compound
    request's planner, or its one agent; the orchestrator for a greeting, a
    general question or what no agent can do."""
    routes = case.routes
    if case.steps:
        planners = tuple(p.name for p in router.profiles if p.plans)
        one = tuple(set(case.steps)) if len(set(case.steps)) == 1 else ()
        routes = (*routes, *planners, *one)
    return routes


_ROUTER_BLOCK = re.compile(r"^router:.*(?:\n[ \t]+.*)*", re.M)


def set_router_threshold(path: Path, threshold: float) -> None:
    """Write ``router: {mode: auto, threshold: ...}`` into the config file at
    ``path``, in place of its ``router`` entry or at its end; the rest of the
    file (comments included) is kept as it is.

    Raises:
        ConfigError: when the file cannot be read or written.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read {str(path)!r}: {exc.strerror}.") from None
    line = f"router: {{mode: auto, threshold: {threshold:g}}}"
    if _ROUTER_BLOCK.search(text):
        updated = _ROUTER_BLOCK.sub(line, text, count=1)
    else:
        updated = text + ("" if text.endswith("\n") or not text else "\n") + line + "\n"
    try:
        path.write_text(updated, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot write {str(path)!r}: {exc.strerror}.") from None
