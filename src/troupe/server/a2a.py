"""The team as an A2A agent: ADK's ``to_a2a`` with a card that lists capabilities.

ADK's own card builder turns every tool into a skill; troupe's card instead
has one skill per specialist, described by its role and its capabilities
("command execution, file operations"), so a caller routes by what the team
can do and never sees a tool name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.runners import Runner

from .. import __version__
from ..errors import ConfigError
from ..routing.capabilities import capability_list
from ..tree import agent_tools

if TYPE_CHECKING:
    from starlette.applications import Starlette

A2A_PREFIX = "/a2a"
"""Where the A2A endpoint is mounted; the card is at ``/a2a/.well-known/agent-card.json``."""
CARD_PATH = f"{A2A_PREFIX}/.well-known/agent-card.json"
"""The agent card's path on the server."""
PROTOCOL_VERSIONS = ("1.0", "0.3")
"""A2A protocol versions the card announces, newest first, all over JSON-RPC at one URL.

ADK's A2A routes answer both dialects on the same endpoint. Announcing a 0.3
interface makes the served JSON carry the 0.3 card fields (``url``,
``preferredTransport``, ``protocolVersion``), which a2a-sdk 0.3 clients
require; 1.x clients pick the 1.0 interface."""


def _a2a_types() -> Any:
    try:
        import a2a.types as types
    except ImportError:
        raise ConfigError(
            "troupe serve --a2a needs the A2A SDK, which is not installed: "
            "pip install 'troupe[a2a]'."
        ) from None
    return types


def _skill(types: Any, agent: BaseAgent) -> Any:
    tools = agent_tools(agent)
    capabilities = list(getattr(agent, "capabilities", ())) or capability_list(tools)
    keywords = list(getattr(agent, "troupe_keywords", ()) or ())
    return types.AgentSkill(
        id=agent.name,
        name=agent.name.replace("_", " "),
        description=agent.description or f"The {agent.name} agent.",
        tags=capabilities or keywords or ["reasoning"],
    )


def build_agent_card(root: BaseAgent, *, url: str, bearer: bool) -> Any:
    """An A2A ``AgentCard`` for ``root``: one skill per specialist, by capability.

    ``url`` is the JSON-RPC endpoint clients post to. With ``bearer`` the card
    declares that requests need an HTTP bearer token.
    """
    types = _a2a_types()
    members = list(root.sub_agents) or [root]
    skills = [_skill(types, agent) for agent in members]
    if root.sub_agents:
        summary = "; ".join(f"{skill.name} ({', '.join(skill.tags)})" for skill in skills)
        description = f"A troupe team of agents. It can route work to: {summary}."
    else:
        # A specialist's description already names its capabilities.
        description = root.description or skills[0].description
    card = types.AgentCard(
        name=root.name,
        description=description,
        version=__version__,
        supported_interfaces=[
            types.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version)
            for version in PROTOCOL_VERSIONS
        ],
        capabilities=types.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )
    if bearer:
        card.security_schemes["bearer"].CopyFrom(
            types.SecurityScheme(
                http_auth_security_scheme=types.HTTPAuthSecurityScheme(
                    scheme="bearer", description="The token set in troupe's auth_token."
                )
            )
        )
        requirement = card.security_requirements.add()
        requirement.schemes["bearer"].SetInParent()
    return card


def build_a2a_app(
    root: BaseAgent, runner: Runner, *, url: str, bearer: bool, task_store: Any = None
) -> Starlette:
    """ADK's ``to_a2a`` Starlette app for ``root``, running on ``runner``.

    The caller mounts it at :data:`A2A_PREFIX` and runs its lifespan (which
    attaches the routes). ``task_store`` keeps the A2A tasks (None: in memory).
    """
    card = build_agent_card(root, url=url, bearer=bearer)
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    return to_a2a(root, agent_card=card, runner=runner, task_store=task_store)
