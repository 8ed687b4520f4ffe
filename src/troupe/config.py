"""The :class:`Config` a library user passes to :func:`troupe.build_agent_tree`.

Its options (names, defaults, bounds, help) are :class:`troupe.options.TeamOptions`,
the same declarations ``troupe.yaml`` and the CLI use (:mod:`troupe.settings`);
Config adds the things only Python can hold: tools, model objects, adapters,
remote agents and MCP servers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.tools.base_tool import BaseTool
from pydantic import ConfigDict, Field, SkipValidation, ValidationError, field_validator

from .errors import ConfigError
from .mcp.entries import McpServer
from .models.resolve import ModelLike
from .options import TeamOptions, describe_errors
from .tools import Tool
from .topology import Topology

ToolAdapter = Callable[[Tool], BaseTool]
DEFAULT_ROUTER_MODE = "auto"
"""The router mode of a Config that names none (``TROUPE_ROUTER`` is read by
:func:`troupe.load_settings`, never by a Config)."""


def router_mode(config: Config) -> str:
    """The router mode in force for ``config``: its own, else :data:`DEFAULT_ROUTER_MODE`."""
    return config.router if config.router is not None else DEFAULT_ROUTER_MODE


class Config(TeamOptions):
    """Everything :func:`troupe.build_agent_tree` needs.

    Raises:
        ConfigError: naming every value that cannot work, at once.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", populate_by_name=True)

    tools: SkipValidation[Sequence[Tool]] = Field(
        default=(), description="The flat list of tools to distribute among the specialists."
    )
    model: SkipValidation[ModelLike | None] = Field(
        default=None,
        description="A model name (offline, gemini-2.5-flash, openai/gpt-4o-mini) or an ADK "
        "BaseLlm; None is offline (troupe.load_settings picks Gemini when a Google key is set).",
    )
    fallback_model: SkipValidation[ModelLike | None] = Field(
        default=None, description="Model used when the primary still fails after its retries."
    )
    topology: SkipValidation[str | Path | Topology] = Field(
        default="default", description="default, classic, a YAML file path, or a Topology."
    )
    adapt_tool: SkipValidation[ToolAdapter | None] = Field(
        default=None, description="Turns a Tool into an ADK tool; called once per routed tool."
    )
    remote_agents: SkipValidation[Sequence[BaseAgent]] = Field(
        default=(), description="Extra sub-agents (e.g. RemoteA2aAgent), one routing entry each."
    )
    mcp_servers: SkipValidation[Sequence[McpServer]] = Field(
        default=(), description="MCP servers whose tools go to the agent they name."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Settings read from a config file for later features."
    )
    router_cache_dir: Path | None = Field(
        default=None,
        description="Folder where the router keeps its phrase vectors between runs; "
        "None keeps them in memory only, so the library writes nowhere it was not told to.",
    )

    def __init__(self, **options: Any) -> None:
        try:
            super().__init__(**options)
        except ValidationError as exc:
            problems = [f"{name} {said}" for name, said in describe_errors(exc, type(self))]
            raise ConfigError("Invalid Config: " + "; ".join(problems) + ".") from None

    @field_validator("tools", mode="before")
    @classmethod
    def _a_list(cls, tools: Any) -> Any:
        if isinstance(tools, str | bytes):
            raise ValueError("must be a list of troupe.Tool objects")
        return tools
