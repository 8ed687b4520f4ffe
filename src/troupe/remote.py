"""Remote agents: specialists that live in another process, reached over A2A.

A ``remote_agents`` entry in the config file names an agent and the URL of its
A2A agent card; :func:`build_remote_agents` turns the entries into ADK
``RemoteA2aAgent`` sub-agents that the tree routes to like any specialist
(their keywords go into the routing table). Nothing is fetched when the tree
is built: an unreachable remote only fails the turns routed to it, and
:func:`check_remote_agents` reports it up front (``troupe tree --check``).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .environment import process_environ
from .errors import ConfigError

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.events.event import Event

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
REMOTE_FAILED = "REMOTE_AGENT_FAILED"
"""``error_code`` of the event that ends a turn whose remote agent failed."""
CHECK_TIMEOUT = 5.0
"""Seconds ``troupe tree --check`` waits for each agent card."""


class RemoteAgentEntry(BaseModel):
    """One ``remote_agents`` item of ``troupe.yaml``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(description="Agent name used for routing (an identifier).")
    agent_card: str = Field(
        alias="agent_card",
        description="URL of the agent card, e.g. http://127.0.0.1:8001/a2a/.well-known/agent-card.json",
    )
    description: str | None = Field(
        default=None, description="What the agent does; the routing table shows it."
    )
    keywords: list[str] = Field(
        default_factory=list, description="Words in a request that should route to it."
    )
    auth_token_env: str | None = Field(
        default=None,
        description="Environment variable holding a bearer token the remote server expects.",
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds to wait for an answer.")

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                f"{value!r} is not a valid agent name; use letters, digits and underscores"
            )
        return value

    @field_validator("agent_card")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"{value!r} is not an http(s) URL of an agent card, e.g. "
                "http://127.0.0.1:8001/a2a/.well-known/agent-card.json"
            )
        return value


def _a2a_missing() -> ConfigError:
    return ConfigError(
        "remote_agents need the A2A SDK, which is not installed: pip install 'troupe[a2a]'."
    )


def _bearer_factory(entry: RemoteAgentEntry, environ: Mapping[str, str]) -> tuple[Any, Any]:
    """An A2A client factory whose HTTP client sends the entry's bearer token,
    and that HTTP client; (None, None) without a token.

    ADK does not close an HTTP client it was given; :func:`close_remote_agents` does.
    """
    if entry.auth_token_env is None:
        return None, None
    token = environ.get(entry.auth_token_env)
    if not token:
        raise ConfigError(
            f"remote agent {entry.name!r}: environment variable {entry.auth_token_env!r} "
            "is not set; export the remote server's token in it."
        )
    import httpx
    from a2a.client import ClientConfig, ClientFactory

    client = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(entry.timeout)
    )
    return ClientFactory(ClientConfig(httpx_client=client)), client


@functools.cache
def _remote_class() -> Any:
    try:
        from google.adk.a2a import agent as a2a_agent

        # ADK exports it lazily (module __getattr__), which type checkers see as object.
        base: Any = a2a_agent.RemoteA2aAgent
    except ImportError:
        raise _a2a_missing() from None

    class TroupeRemoteAgent(base):
        """A RemoteA2aAgent that carries what troupe routes and checks by."""

        troupe_keywords: tuple[str, ...] = ()
        """Routing keywords for the orchestrator's table."""
        troupe_card_url: str = ""
        """The agent card URL, for ``troupe tree --check``."""
        troupe_token_env: str | None = None
        """Environment variable with the bearer token the remote expects."""
        troupe_http_client: Any = None
        """The HTTP client of troupe's own client factory (closed by troupe)."""

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
            # ADK reports a remote failure as an event with an error message and
            # then hands control back, so the parent would go on as if the remote
            # had answered nothing. Here the failure ends the turn instead, with
            # a code callers can test for and the reason.
            failed = False
            async for event in super()._run_async_impl(ctx):
                if event.error_message and not failed:
                    failed = True
                    event.error_code = REMOTE_FAILED
                    event.error_message = f"remote agent {self.name!r} failed: " + (
                        event.error_message
                    )
                yield event
            if failed:
                ctx.end_invocation = True

    return TroupeRemoteAgent


def build_remote_agents(
    entries: Sequence[RemoteAgentEntry], environ: Mapping[str, str] | None = None
) -> list[BaseAgent]:
    """ADK ``RemoteA2aAgent`` sub-agents for ``entries``, in order.

    Tokens (``auth_token_env``) are read from ``environ``, the settings' snapshot
    of the environment (None: this process's).

    Raises:
        ConfigError: a name is used twice, a token variable is unset, or the
            A2A SDK is not installed.
    """
    if not entries:
        return []
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise ConfigError(
                f"remote_agents lists {entry.name!r} twice; give each remote agent its own name."
            )
        seen.add(entry.name)
    cls = _remote_class()
    source = process_environ() if environ is None else environ
    agents = []
    for entry in entries:
        factory, client = _bearer_factory(entry, source)
        agents.append(
            cls(
                name=entry.name,
                agent_card=entry.agent_card,
                # A description up front keeps ADK from fetching the card while
                # it builds the orchestrator's transfer instructions.
                description=entry.description or f"A remote agent reached over A2A ({entry.name}).",
                timeout=entry.timeout,
                a2a_client_factory=factory,
                troupe_keywords=tuple(entry.keywords),
                troupe_card_url=entry.agent_card,
                troupe_token_env=entry.auth_token_env,
                troupe_http_client=client,
            )
        )
    return agents


async def close_remote_agents(root: BaseAgent) -> None:
    """Close the HTTP clients of every remote agent under ``root`` (safe to repeat)."""
    for agent in root.sub_agents:
        if not getattr(agent, "troupe_card_url", ""):
            continue
        await agent.cleanup()  # type: ignore[attr-defined]
        client = getattr(agent, "troupe_http_client", None)
        if client is not None:
            await client.aclose()


@dataclass(frozen=True)
class RemoteStatus:
    """Whether one remote agent's card could be fetched."""

    name: str
    """The agent's name in the tree."""
    url: str
    """The agent card URL that was tried."""
    ok: bool
    """True when the card was fetched and parsed."""
    detail: str
    """The remote agent's own name and description, or why it failed."""


async def _check_one(agent: BaseAgent) -> RemoteStatus:
    import httpx
    from a2a.client import A2ACardResolver

    url = str(getattr(agent, "troupe_card_url", ""))
    parts = urlsplit(url)
    # The token the agent was built with, as its own HTTP client sends it.
    own = getattr(agent, "troupe_http_client", None)
    bearer = own.headers.get("Authorization") if own is not None else None
    headers = {"Authorization": bearer} if bearer else {}
    try:
        async with httpx.AsyncClient(timeout=CHECK_TIMEOUT, headers=headers) as client:
            resolver = A2ACardResolver(client, f"{parts.scheme}://{parts.netloc}")
            card = await resolver.get_agent_card(relative_card_path=parts.path or "/")
    except Exception as exc:
        return RemoteStatus(agent.name, url, False, f"{type(exc).__name__}: {exc}")
    return RemoteStatus(agent.name, url, True, f"{card.name}: {card.description}")


async def check_remote_agents(agents: Sequence[BaseAgent]) -> list[RemoteStatus]:
    """Fetch every remote agent's card at once; one status each, in order."""
    remote = [a for a in agents if getattr(a, "troupe_card_url", "")]
    return list(await asyncio.gather(*(_check_one(agent) for agent in remote)))
