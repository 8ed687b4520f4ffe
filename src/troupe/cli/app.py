"""``troupe``: inspect the agent tree and chat with it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ..errors import TroupeError
from ..terminal_text import for_rich
from . import bench, secrets, serve, sessions, trace, trust
from .common import approve_unjailed_server, console, err_console, fail, quiet_logs, working
from .eval import register as register_eval
from .options import (
    ApiBaseOpt,
    ConfigOpt,
    DataDirOpt,
    ModelOpt,
    RouterOpt,
    SingleOpt,
    TopologyOpt,
    TrustOpt,
    WorkspaceOpt,
)
from .routing import routing_app

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent

    from ..config import Config
    from ..mcp import McpServerReport

VERBS_ELSEWHERE = {
    "run": "chat",
    "ask": "chat",
    "repl": "chat",
    "start": "chat",
    "server": "serve",
    "api": "serve",
    "web": "serve",
    "session": "sessions",
    "history": "sessions",
    "traces": "trace",
    "logs": "trace",
    "secret": "secrets",
    "vault": "secrets",
    "agents": "tree",
    "evaluate": "eval",
    "benchmark": "bench",
}
"""Verbs other agent CLIs use (ADK's ``adk run``, ``adk web`` ...), and troupe's for them."""


class _Verbs(TyperGroup):
    """troupe's commands; an unknown verb is answered with the nearest real one."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:  # Typer's own copy of click's UsageError
            verb = args[0].lower() if args else ""
            real = VERBS_ELSEWHERE.get(verb)
            if real in self.commands and isinstance(getattr(exc, "message", None), str):
                exc.message = f"No such command {args[0]!r}. Did you mean {real!r}?"  # type: ignore[attr-defined]
            raise


def _version_text() -> str:
    from importlib.metadata import version as installed

    from .. import __version__

    return f"troupe {__version__} (google-adk {installed('google-adk')})"


# Plain help (rich_markup_mode=None) on every Typer: typer's rich help formatter
# imports markdown and syntax highlighting, about half a second before any help shows.
app = typer.Typer(
    cls=_Verbs,
    rich_markup_mode=None,
    name="troupe",
    help="A team of ADK agents built from a flat list of tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(_version_text())
        raise typer.Exit()


@app.callback()
def _troupe(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print troupe's version and the ADK version it runs on.",
        ),
    ] = False,
) -> None:
    """A team of ADK agents built from a flat list of tools."""


@app.command()
def tree(
    config: ConfigOpt = None,
    model: ModelOpt = None,
    workspace: WorkspaceOpt = None,
    topology: TopologyOpt = None,
    single_agent: SingleOpt = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also start each MCP server to list its tools, and fetch each remote "
            "agent's A2A card.",
        ),
    ] = False,
    trust_workspace_config: TrustOpt = False,
) -> None:
    """Show the agent tree: each agent's tools and capabilities, and unmatched tools."""
    from ..models.resolve import model_label
    from ..routing.partition import partition_tools
    from ..settings import load_settings
    from ..tree import build_agent_tree

    quiet_logs(False)
    try:
        settings = load_settings(
            config_path=config,
            model=model,
            workspace=workspace,
            topology=topology,
            multi_agent=False if single_agent else None,
            trust_workspace_config=trust_workspace_config or None,
        )
        root = build_agent_tree(settings.config)
        unmatched = (
            partition_tools(settings.config.tools, settings.config.topology).unmatched
            if settings.config.multi_agent
            else []
        )
        mcp_reports = _mcp_reports(settings.config, start=check)
    except TroupeError as exc:
        raise fail(exc) from None
    from .render import agent_tree

    label = model_label(getattr(root, "model", "") or "")
    from ..topology import resolve_topology

    team = resolve_topology(settings.config.topology)
    team_prefixes = [p for spec in team.agents for p in spec.prefixes]
    console.print(
        agent_tree(
            root,
            unmatched=unmatched,
            model_label=label,
            mcp=mcp_reports,
            prefixes=team_prefixes or ("fs_", "browser_"),
        )
    )
    failed = False
    if check:
        from .remote import report_remote_agents

        failed = not report_remote_agents(console, root.sub_agents)
    from ..builtins.browser_session import browser_unavailable_reason
    from ..sandbox import sandbox_status

    jail = sandbox_status()
    # One sentence each: soft_wrap leaves long paths whole for the terminal to fold,
    # instead of Rich breaking them at a hyphen to fit its idea of the width.
    console.print(
        f"[{'green' if jail.active else 'bold red'}]{for_rich(jail.describe())}[/]", soft_wrap=True
    )
    from ..builtins._limits import describe_process_limit
    from ..sandbox.jail import Jail

    holds, limit_line = describe_process_limit(
        jailed=jail.active,
        workspace=settings.workspace,
        as_uid_works=Jail(settings.workspace).starts_as,
    )
    console.print(f"[{'green' if holds else 'bold red'}]{for_rich(limit_line)}[/]", soft_wrap=True)
    if (no_browser := browser_unavailable_reason(settings.chromium)) is not None:
        console.print(
            f"[yellow]navigator tools not registered:[/] {for_rich(no_browser)}", soft_wrap=True
        )
    else:
        from ..sandbox.browser import confinement, describe

        console.print(f"[green]{for_rich(describe(confinement()))}[/]", soft_wrap=True)
    for line in _left_out(settings.config, root):
        console.print(f"[yellow]{for_rich(line)}[/]", soft_wrap=True)
    if dead := [r.placement.server.name for r in mcp_reports if r.started and r.error]:
        console.print(
            f"[bold red]--check failed:[/] MCP server(s) {for_rich(', '.join(dead))} could not "
            "start (see above).",
            soft_wrap=True,
        )
        failed = True
    if failed:
        raise typer.Exit(code=1)


def _left_out(config: Config, root: BaseAgent) -> list[str]:
    """A sentence for each agent of the topology that is not in the tree, and why."""
    if not config.multi_agent:
        return []
    from ..topology import resolve_topology

    present = {agent.name for agent in root.sub_agents}
    return [
        f"agent {spec.name!r} left out: no tool's name starts with "
        f"{' or '.join(spec.prefixes) or '(no prefixes)'}"
        for spec in resolve_topology(config.topology).agents
        if spec.name not in present
    ]


def _mcp_reports(config: Config, *, start: bool) -> list[McpServerReport]:
    """Each MCP server's place in the tree; with ``start``, each is started briefly
    to list its tools (none configured: no wait)."""
    if not config.mcp_servers:
        return []
    from ..mcp import describe_servers

    return asyncio.run(
        describe_servers(config, start=start, approve_unjailed=approve_unjailed_server)
    )


@app.command()
def chat(
    message: Annotated[
        str | None, typer.Argument(help="Send one message; omit for a REPL.")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Resume (or name) a stored session.")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per step.")
    ] = False,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    router: RouterOpt = None,
    workspace: WorkspaceOpt = None,
    topology: TopologyOpt = None,
    single_agent: SingleOpt = False,
    data_dir: DataDirOpt = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show ADK's logs.")] = False,
    approve: Annotated[
        str | None,
        typer.Option(
            "--approve",
            help="Tools that need approval: ask, auto or deny "
            "(default: ask on a terminal, deny otherwise).",
        ),
    ] = None,
    trust_workspace_config: TrustOpt = False,
) -> None:
    """Chat with the team: one message, or an interactive session."""
    from .repl import new_session_id
    from .session import ChatSession

    quiet_logs(verbose)
    try:
        with working("starting troupe: the model client and the agent tree"):
            chat_session = ChatSession.open(
                config_path=config,
                model=model,
                workspace=workspace,
                topology=topology,
                single_agent=single_agent,
                data_dir=data_dir,
                session_id=session or new_session_id(),
                persist=message is None or session is not None,
                json_output=json_output,
                # With --json, standard output carries the steps' JSON only.
                console=err_console if json_output else console,
                approve=approve,
                api_base=api_base,
                router=router,
                trust_workspace_config=trust_workspace_config or None,
            )
    except TroupeError as exc:
        raise fail(exc) from None
    try:
        if message is not None:
            ok = chat_session.send_once(message)
            # 130: stopped by Ctrl-C, as a shell reports SIGINT.
            raise typer.Exit(code=130 if ok is None else 0 if ok else 1)
        chat_session.repl()
    except TroupeError as exc:
        raise fail(exc) from None


@app.command()
def demo(
    model: ModelOpt = None,
) -> None:
    """Run a short scripted session in a scratch workspace (offline by default)."""
    from ..settings import load_settings
    from .demo import run_demo

    quiet_logs(False)
    try:
        settings = load_settings()
        ok = asyncio.run(
            run_demo(
                console,
                model=model or "offline",
                chromium=settings.chromium,
                environ=settings.environ,
            )
        )
    except TroupeError as exc:
        raise fail(exc) from None
    raise typer.Exit(code=0 if ok else 1)


@app.command()
def version() -> None:
    """Print troupe's version and the ADK version it runs on."""
    typer.echo(_version_text())


serve.register(app)
trust.register(app)
sessions.register(app)
register_eval(app)
app.add_typer(bench.bench_app, name="bench")
app.add_typer(routing_app, name="routing")
app.add_typer(trace.trace_app, name="trace")
app.add_typer(secrets.secrets_app, name="secrets")


def main() -> None:
    """Entry point of the ``troupe`` script."""
    app()
