"""``troupe serve``: ADK's API server, web UI and A2A endpoint over troupe's tree."""

import contextlib
import socket
from pathlib import Path
from typing import Annotated

import typer

from ..environment import quiet_adk_a2a
from ..terminal_text import for_rich
from .common import console, fail, quiet_logs
from .options import ConfigOpt, DataDirOpt, ModelOpt, TopologyOpt, TrustOpt, WorkspaceOpt

KEEP_ALIVE_SECONDS = 30
"""How long the server keeps an idle HTTP connection open."""


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to ``app``."""

    @app.command()
    def serve(
        host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
        port: Annotated[
            int, typer.Option("--port", "-p", min=0, max=65535, help="Port to bind (0: any free).")
        ] = 8000,
        web: Annotated[bool, typer.Option("--web", help="Also serve ADK's dev UI.")] = False,
        a2a: Annotated[
            bool, typer.Option("--a2a", help="Also expose the team as an A2A agent at /a2a.")
        ] = False,
        agent: Annotated[
            str | None,
            typer.Option("--agent", help="Serve only this specialist, e.g. operator."),
        ] = None,
        public_url: Annotated[
            str | None,
            typer.Option("--public-url", help="URL clients reach the server at (A2A card)."),
        ] = None,
        session_store: Annotated[
            str | None,
            typer.Option(
                "--session-store",
                help="sqlite:///..., postgresql+asyncpg://... (or TROUPE_SESSION_STORE).",
            ),
        ] = None,
        max_request_bytes: Annotated[
            int | None,
            typer.Option(
                "--max-request-bytes",
                min=1024,
                max=1024 * 1024 * 1024,
                help="Largest request body accepted; larger get a 413 "
                "(default 1 MiB, or TROUPE_MAX_REQUEST_BYTES).",
            ),
        ] = None,
        config: ConfigOpt = None,
        model: ModelOpt = None,
        workspace: WorkspaceOpt = None,
        topology: TopologyOpt = None,
        data_dir: DataDirOpt = None,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show ADK's logs.")] = False,
        trust_workspace_config: TrustOpt = False,
    ) -> None:
        """Serve the team over HTTP: ADK's REST API, /healthz and /readyz, optional A2A."""
        run_server(
            host=host,
            port=port,
            web=web,
            a2a=a2a,
            agent=agent,
            public_url=public_url,
            session_store=session_store,
            max_request_bytes=max_request_bytes,
            config=config,
            model=model,
            workspace=workspace,
            topology=topology,
            data_dir=data_dir,
            verbose=verbose,
            trust_workspace_config=trust_workspace_config or None,
        )


def run_server(
    *,
    host: str,
    port: int,
    web: bool,
    a2a: bool,
    agent: str | None,
    public_url: str | None,
    session_store: str | None,
    max_request_bytes: int | None = None,
    config: Path | None,
    model: str | None,
    workspace: Path | None,
    topology: str | None,
    data_dir: Path | None,
    verbose: bool,
    trust_workspace_config: bool | None = None,
) -> None:
    """Build the app from the settings and run it with uvicorn until interrupted."""
    quiet_adk_a2a()
    import uvicorn

    from ..errors import ConfigError, TroupeError
    from ..logfile import attach_log_file
    from ..settings import load_settings
    from ..stores.sessions import redact

    quiet_logs(verbose)
    try:
        from ..server import ServeOptions, build_app

        settings = load_settings(
            config_path=config,
            model=model,
            workspace=workspace,
            topology=topology,
            data_dir=data_dir,
            session_store=session_store,
            max_request_bytes=max_request_bytes,
            trust_workspace_config=trust_workspace_config,
        )
        options = ServeOptions(
            host=host, port=port, web=web, a2a=a2a, agent=agent, public_url=public_url,
            freeze_heap=True,  # this process is the server's alone
        )  # fmt: skip
        with contextlib.suppress(OSError):  # build_app names an unusable data directory
            attach_log_file(settings.data_dir)  # tracebacks and MCP servers' stderr
        api = build_app(settings, options)
    except TroupeError as exc:
        raise fail(exc) from None
    if (problem := _bind_problem(host, port)) is not None:
        raise fail(ConfigError(f"cannot listen on {host}:{port}: {problem}"))
    base = options.base_url
    # The host and the session store come from options and the config: shown, never
    # interpreted (for_rich escapes control characters and Rich markup alike).
    console.print(f"[bold]troupe[/] serving on [cyan]{for_rich(base)}[/] (app 'troupe')")
    console.print(for_rich(f"  sessions: {redact(settings.session_store)}"))
    console.print(for_rich(f"  probes:   {base}/healthz  {base}/readyz"))
    if web:
        console.print(for_rich(f"  web UI:   {base}/dev-ui/"))
    if a2a:
        console.print(for_rich(f"  A2A card: {base}/a2a/.well-known/agent-card.json"))
    if settings.auth_token:
        console.print(
            for_rich(f"  auth:     bearer token required (browsers log in at {base}/login)")
        )
    else:
        console.print("  auth:     none")
    uvicorn.run(
        api,
        host=host,
        port=port,
        log_level="info" if verbose else "warning",
        # One line per request comes from troupe's own RequestLog, verbose or not.
        access_log=False,
        # Longer than clients' and proxies' usual idle expiry (httpx: 5 s), so the
        # client, not the server, closes an idle connection: no request is ever
        # sent on a connection the server is closing at that moment.
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def _bind_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, and the fix; None when it can.

    The socket is bound and released at once, so the check leaves the port free.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"the host does not resolve ({exc.strerror}); use an address such as 127.0.0.1"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return (
                f"{exc.strerror or exc}; stop what is using it or choose another "
                "address with --host / --port"
            )
    return None
