"""Build the FastAPI app ``troupe serve`` runs.

ADK's ``ApiServer`` (``DevServer`` with the web UI) serves troupe's App
(:func:`troupe.runtime.app.build_app`: the tree plus the runtime plugins, the
same App ``troupe chat`` runs) through an agent loader that returns it, with
the session store from the settings. troupe adds liveness and readiness probes,
an optional bearer token, and with ``a2a`` ADK's ``to_a2a`` app mounted at
``/a2a``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from google.adk.agents.base_agent import BaseAgent
from google.adk.apps import App
from google.adk.auth.credential_service.in_memory_credential_service import (
    InMemoryCredentialService,
)
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService

from .._adk_compat import server_with_runner
from ..builtins.browser_session import close_shared_browser
from ..errors import ConfigError
from ..models.clients import close_model_clients
from ..remote import check_remote_agents
from ..runtime.app import DEFAULT_APP_NAME
from ..runtime.app import build_app as build_runtime_app
from ..runtime.warm_up import warm_up
from ..sandbox.private import private_dir
from ..settings import Settings
from ..stores.artifacts import open_artifact_store
from ..stores.lock_limits import SessionBusyError
from ..stores.postgres import dispose_engines
from ..stores.session_lock import QueuedRunner
from ..stores.sessions import (
    close_session_store,
    is_postgres,
    probe_session_store,
    redact,
    store_parts,
)
from ..tree import TroupeAgent, build_agent_tree
from .auth import OPEN_PATHS, BearerAuthMiddleware
from .body_limit import BodyLimit
from .browser_scopes import CloseBrowserOnDelete
from .database_errors import DatabaseErrors
from .idempotency import IdempotentRuns
from .request_log import RequestLog
from .traces_api import add_trace_routes

logger = logging.getLogger("troupe.server")

APP_NAME = DEFAULT_APP_NAME
"""The ADK app name the tree is served under (``/apps/troupe/...``)."""
READY_TIMEOUT = 5.0
"""Seconds ``/readyz`` waits for the session store."""


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """How ``troupe serve`` exposes the tree."""

    host: str = "127.0.0.1"
    """Address to bind; loopback by default."""
    port: int = 8000
    """Port to bind."""
    web: bool = False
    """Serve ADK's dev UI at ``/dev-ui/`` too."""
    a2a: bool = False
    """Mount the team as an A2A agent at ``/a2a``."""
    agent: str | None = None
    """Serve only this specialist (with its tools) instead of the whole team."""
    public_url: str | None = None
    """Base URL clients use to reach the server, for the A2A card; default http://host:port."""
    freeze_heap: bool = False
    """After the warm-up, freeze what start-up built out of the garbage
    collector's way (:func:`troupe.runtime.warm_up.warm_up`). It is process-wide,
    so only ``troupe serve``, which owns its process, turns it on."""

    @property
    def base_url(self) -> str:
        """The server's URL as clients should see it."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _AppLoader(BaseAgentLoader):
    """Hands ADK's server the App troupe built, under one app name."""

    def __init__(self, app: App) -> None:
        self._app = app

    def load_agent(self, agent_name: str) -> App:
        if agent_name != APP_NAME:
            raise ValueError(f"No app named {agent_name!r}; this server serves {APP_NAME!r}.")
        return self._app

    def list_agents(self) -> list[str]:
        return [APP_NAME]


def served_agent(settings: Settings, agent: str | None) -> BaseAgent:
    """The whole tree, or with ``agent`` one specialist of it on its own.

    Raises:
        ConfigError: ``agent`` is not a specialist of the tree.
    """
    root = build_agent_tree(settings.config)
    if agent is None:
        return root
    for sub in root.sub_agents:
        if sub.name == agent:
            # The specialist keeps its instruction and tools; as the root of
            # its own runner it must not point back at the orchestrator.
            sub.parent_agent = None
            if isinstance(sub, TroupeAgent) and isinstance(root, TroupeAgent):
                sub._troupe_guards = root.troupe_guards  # the runtime plugins run them
            return sub
    names = ", ".join(a.name for a in root.sub_agents) or "none"
    raise ConfigError(f"--agent {agent!r} is not an agent of this tree; choose one of: {names}.")


async def _startup_report(root: BaseAgent, service: BaseSessionService, store: str) -> None:
    try:
        await asyncio.wait_for(probe_session_store(service, app_name=APP_NAME), READY_TIMEOUT)
    except Exception as exc:
        logger.warning("Session store %s is not reachable yet: %s", redact(store), exc)
    for status in await check_remote_agents(root.sub_agents):
        if not status.ok:
            logger.warning(
                "Remote agent %r is unreachable (%s); local agents keep working. %s",
                status.name,
                status.url,
                status.detail,
            )


def _web_assets() -> Path:
    import google.adk.cli as adk_cli

    return Path(adk_cli.__file__).parent / "browser"


def build_app(settings: Settings, options: ServeOptions) -> FastAPI:
    """The ASGI app for ``troupe serve``: ADK's REST API, probes, auth, and A2A.

    Raises:
        ConfigError: a bad session store URL, agent name or missing extra.
    """
    check_connection_budget(settings)
    root = served_agent(settings, options.agent)
    troupe_app = build_runtime_app(root, name=APP_NAME, trace_store=settings.trace_store())
    service = settings.open_session_store()
    parts = store_parts(service)
    services: dict[str, Any] = {
        "session_service": service,
        "artifact_service": open_artifact_store(settings.artifact_store, parts.records),
        "memory_service": InMemoryMemoryService(),
        "credential_service": InMemoryCredentialService(),
    }

    a2a_app = None
    open_paths = set(OPEN_PATHS)
    if options.a2a:
        from .a2a import A2A_PREFIX, CARD_PATH, build_a2a_app
        from .a2a_tasks import task_store

        runner = QueuedRunner(app=troupe_app, **services)
        a2a_app = build_a2a_app(
            root,
            runner,
            url=f"{options.base_url}{A2A_PREFIX}/",
            bearer=bool(settings.auth_token),
            task_store=task_store(parts.records),
        )
        # The card says what the agent can do and how to authenticate, so it
        # is public, as the A2A specification expects.
        open_paths.add(CARD_PATH)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await _startup_report(root, service, settings.session_store)
        # Readiness includes the first turn's one-off costs (runtime/warm_up.py).
        logger.debug("warm-up took %.2f s", await warm_up(root, freeze=options.freeze_heap))
        async with AsyncExitStack() as stack:
            if a2a_app is not None:
                await stack.enter_async_context(a2a_app.router.lifespan_context(a2a_app))
            try:
                yield
            finally:
                await close_shared_browser()
                await close_model_clients()
                await close_session_store(service)  # and the engine every store shared
                dispose_engines()  # the built-in stores' PostgreSQL pools, if any

    server_cls: Any
    extra: dict[str, Any] = {}
    if options.web:
        from google.adk.cli.dev_server import DevServer

        server_cls = DevServer
        extra["web_assets_dir"] = str(_web_assets())
    else:
        from google.adk.cli.api_server import ApiServer

        server_cls = ApiServer
    from google.adk.evaluation.local_eval_set_results_manager import (
        LocalEvalSetResultsManager,
    )
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager

    evals_dir = str(private_dir(settings.data_dir / "evals"))
    server = _queued(server_cls)(
        agent_loader=_AppLoader(troupe_app),
        eval_sets_manager=LocalEvalSetsManager(agents_dir=evals_dir),
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=evals_dir),
        agents_dir=evals_dir,
        **services,
    )
    server.default_app_name = APP_NAME
    app: FastAPI = server.get_fast_api_app(
        lifespan=lifespan,
        # A loopback bind turns on ADK's DNS-rebinding guard.
        bind_host=options.host if is_loopback(options.host) else None,
        **extra,
    )
    _add_probes(app, root, service)
    add_trace_routes(app, settings.trace_store())
    app.add_exception_handler(SessionBusyError, _session_busy)
    app.add_middleware(CloseBrowserOnDelete)
    app.add_middleware(DatabaseErrors)
    app.add_middleware(
        IdempotentRuns, service=service, records=parts.turn_records, default_app=APP_NAME
    )
    if a2a_app is not None:
        app.mount(A2A_PREFIX, a2a_app)
    if settings.auth_token:
        app.add_middleware(BearerAuthMiddleware, token=settings.auth_token, open_paths=open_paths)
    elif not is_loopback(options.host):
        logger.warning(
            "Serving on %s without auth_token: anyone who can reach it can use every "
            "session. Set auth_token in the config or TROUPE_AUTH_TOKEN.",
            options.host,
        )
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(RequestLog)  # outermost: every request, refused ones too
    return app


def check_connection_budget(settings: Settings) -> None:
    """Refuse to serve when this many replicas would exceed the server's connections.

    Reads ``max_connections`` over one short connection; a server that cannot
    be reached now is left to the readiness probe (the replica starts, not ready).

    Raises:
        ConfigError: the budget does not fit; one line with the arithmetic and the fix.
    """
    if not is_postgres(settings.session_store):
        return
    from ..stores.budget import budget_problem, server_limits
    from ..stores.urls import postgres_url

    url = postgres_url(settings.session_store)
    assert url is not None
    try:
        max_connections, reserved = server_limits(url)
    except Exception as exc:
        logger.warning(
            "Could not read max_connections from %s (%s); the connection budget is unchecked.",
            redact(settings.session_store),
            " ".join(str(exc).split()),
        )
        return
    problem = budget_problem(settings.pool_budget, max_connections, reserved)
    if problem is not None:
        raise ConfigError(f"{problem} ({redact(settings.session_store)})")


def _queued(server_cls: type[Any]) -> type[Any]:
    """``server_cls`` whose runners take turns on a session one at a time.

    Each runner is a :class:`QueuedRunner` over the services the server holds,
    so ``/run``, ``/run_sse`` and the dev UI queue concurrent turns on a
    session instead of failing them as stale.
    """
    return server_with_runner(server_cls, _queued_runner, name=f"Queued{server_cls.__name__}")


def _queued_runner(server: Any, agentic_app: App, app_name: str) -> Runner:
    return QueuedRunner(
        app=agentic_app,
        app_name=app_name,
        artifact_service=server.artifact_service,
        session_service=server.session_service,
        memory_service=server.memory_service,
        credential_service=server.credential_service,
        auto_create_session=server.auto_create_session,
    )


async def _session_busy(request: Request, exc: Exception) -> JSONResponse:
    """409 for a turn whose session stayed busy for the whole wait, with when to retry."""
    retry = exc.retry_after_s if isinstance(exc, SessionBusyError) else 1
    return JSONResponse(
        {"detail": str(exc), "retry_after_s": retry},
        status_code=409,
        headers={"Retry-After": str(retry)},
    )


def _add_probes(app: FastAPI, root: BaseAgent, service: BaseSessionService) -> None:
    agents = [root.name, *(a.name for a in root.sub_agents)]

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> JSONResponse:
        try:
            await asyncio.wait_for(probe_session_store(service, app_name=APP_NAME), READY_TIMEOUT)
        except Exception as exc:
            return JSONResponse(
                {
                    "status": "unavailable",
                    "tree": "built",
                    "session_store": f"{type(exc).__name__}: {exc}",
                },
                status_code=503,
            )
        return JSONResponse(
            {"status": "ready", "tree": "built", "agents": agents, "session_store": "ok"}
        )
