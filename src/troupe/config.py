"""Configuration: the :class:`Config` dataclass and the YAML file loader."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from google.adk.agents.base_agent import BaseAgent
from google.adk.tools.base_tool import BaseTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .builtins._process import check_pass_env
from .builtins.shell_policy import compile_deny_list
from .errors import ConfigError
from .mcp import McpServer, McpServerEntry
from .models.resolve import ModelLike
from .remote import RemoteAgentEntry
from .tools import Tool
from .topology import Topology

ToolAdapter = Callable[[Tool], BaseTool]
ROUTER_MODES = ("auto", "off")
ROUTER_ENV = "TROUPE_ROUTER"


def router_mode(config: Config) -> str:
    """The router mode in force for ``config``: its own, else ``TROUPE_ROUTER``, else auto.

    Raises:
        ConfigError: when ``TROUPE_ROUTER`` holds another value.
    """
    if config.router is not None:
        return config.router
    value = os.environ.get(ROUTER_ENV, "").strip().lower() or "auto"
    if value not in ROUTER_MODES:
        raise ConfigError(f"{ROUTER_ENV}={value!r} is not a router mode; use auto or off.")
    return value


@dataclass(kw_only=True)
class Config:
    """Everything :func:`troupe.build_agent_tree` needs."""

    tools: Sequence[Tool] = ()
    """The flat list of tools to distribute among the specialists."""
    model: ModelLike | None = None
    """A model name (``offline``, ``gemini-2.5-flash``, ``openai/gpt-4o-mini``) or an
    ADK ``BaseLlm``. None picks the default: offline unless a key is configured."""
    api_base: str | None = None
    """Base URL for LiteLLM models (an Ollama or OpenAI-compatible server)."""
    system_prompt: str | None = None
    """Base system prompt at the top of the orchestrator's instruction."""
    multi_agent: bool = True
    """Orchestrator plus specialists (True) or one agent holding every tool (False)."""
    max_delegation_rounds: int = 0
    """Delegation rounds allowed per user message; 0 means the default of 5."""
    topology: str | Path | Topology = "default"
    """``default``, ``classic``, a YAML file path, or a Topology."""
    adapt_tool: ToolAdapter | None = None
    """Turns a Tool into an ADK tool; called once per routed tool."""
    remote_agents: Sequence[BaseAgent] = ()
    """Extra sub-agents (e.g. RemoteA2aAgent) appended with a routing entry each."""
    mcp_servers: Sequence[McpServer] = ()
    """MCP servers whose tools go to the agent their ``prefix`` or ``agent`` names."""
    session_store: str | None = None
    """Session store URL (``sqlite:///...``, ``postgresql+asyncpg://...``) for the CLI and
    server; None means ``sessions.db`` in the data directory."""
    transfer_repair: bool = True
    """Repair bad transfer targets in flight; False leaves only the specified retry."""
    guards: bool = True
    """Enforce limits, stop repeated calls, re-route rejections, nudge empty turns."""
    max_model_calls: int = 24
    """Model calls allowed per user message, over all agents."""
    max_repeated_calls: int = 3
    """Identical tool calls in a row before the turn is stopped."""
    model_retries: int = 3
    """Retries with backoff on rate limits and server errors (0 disables)."""
    retry_base_delay: float = 0.5
    """Seconds before the first retry; doubles each time."""
    fallback_model: ModelLike | None = None
    """Model used when the primary still fails after its retries."""
    turn_timeout_s: float | None = 300.0
    """Seconds one user message may take; then the turn ends with a clear message."""
    router: str | None = None
    """``auto``: the fast-path router transfers confident requests without an
    orchestrator model call; ``off``: every turn goes through the model. None
    reads ``TROUPE_ROUTER``, else ``auto``."""
    router_threshold: float | None = None
    """Lead the router's best agent needs over the runner-up (None: the default)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Settings read from a config file that later features use."""

    def __post_init__(self) -> None:
        problems = [p for limit in _LIMITS if (p := limit.problem(getattr(self, limit.field)))]
        if isinstance(self.tools, str | bytes):
            problems.append(
                f"tools must be a list of troupe.Tool objects, not the string {self.tools!r}"
            )
        if self.router is not None and self.router not in ROUTER_MODES:
            problems.append(f"router must be 'auto' or 'off', not {self.router!r}")
        if self.router_threshold is not None and not (
            isinstance(self.router_threshold, int | float) and 0 <= self.router_threshold <= 1
        ):
            problems.append(
                f"router_threshold must be a number from 0 to 1, not {self.router_threshold!r}"
            )
        if problems:
            raise ConfigError("Invalid Config: " + "; ".join(problems) + ".")


@dataclass(frozen=True)
class _Limit:
    """The numbers one Config field accepts."""

    field: str
    low: float
    whole: bool = True
    """Only whole numbers (else any number)."""
    above: bool = False
    """Strictly greater than ``low`` (else ``low`` or more)."""
    optional: bool = False
    """None is accepted and means no limit."""

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` for this field, or None."""
        if value is None and self.optional:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (self.whole and not isinstance(value, int))
        ):
            found = f"{self.field} must be {'a whole number' if self.whole else 'a number'}"
        elif self.above and value <= self.low:
            found = f"{self.field} must be greater than {self.low:g}"
        elif not self.above and value < self.low:
            found = f"{self.field} must be {self.low:g} or more"
        else:
            return None
        return f"{found}, not {value!r}" + (" (None means no limit)" if self.optional else "")


_LIMITS = (
    _Limit("max_delegation_rounds", 0),
    _Limit("max_model_calls", 1),
    _Limit("max_repeated_calls", 2),
    _Limit("model_retries", 0),
    _Limit("retry_base_delay", 0, whole=False),
    _Limit("turn_timeout_s", 0, whole=False, above=True, optional=True),
)


class _AgentSection(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    multi_agent: bool | None = Field(default=None, alias="multiAgent")
    max_delegation_rounds: int | None = Field(default=None, alias="maxDelegationRounds", ge=0)


class ShellSection(BaseModel):
    """The ``shell`` section of ``troupe.yaml``: how exec_shell and skill_run run commands."""

    model_config = ConfigDict(extra="forbid")

    deny_commands: list[str] = Field(
        default_factory=list,
        description="More regular expressions to refuse, on top of the built-in deny list.",
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Credential-like variables of troupe's environment that commands may see.",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds a command may run (default 30)."
    )

    @field_validator("deny_commands")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        compile_deny_list(patterns)
        return patterns

    @field_validator("pass_env")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        check_pass_env(names)
        return names


class RouterSection(BaseModel):
    """The ``router`` section of ``troupe.yaml`` (or just ``router: auto|off``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["auto", "off"] | None = Field(
        default=None,
        description="auto (the default): route confident requests without a model call.",
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Lead over the runner-up needed to route."
    )


class ConfigFile(BaseModel):
    """The schema of ``troupe.yaml``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str | None = Field(default=None, description="Model name.")
    api_base: str | None = Field(default=None, description="LiteLLM API base URL.")
    system_prompt: str | None = Field(default=None, description="Base system prompt.")
    topology: str | None = Field(default=None, description="default, classic or a YAML path.")
    workspace: str | None = Field(default=None, description="Directory the file tools may use.")
    multi_agent: bool | None = Field(default=None, alias="multiAgent")
    max_delegation_rounds: int | None = Field(default=None, alias="maxDelegationRounds", ge=0)
    builtin_tools: bool = Field(default=True, description="Register troupe's built-in tools.")
    data_dir: str | None = Field(
        default=None, description="Where sessions and the built-in stores live (--data-dir)."
    )
    agent: _AgentSection | None = Field(default=None, description="The spec's agent.* keys.")
    session_store: str | None = Field(
        default=None, description="Session store URL: sqlite:///..., postgresql+asyncpg://..."
    )
    auth_token: str | None = Field(
        default=None, description="Bearer token `troupe serve` requires (or TROUPE_AUTH_TOKEN)."
    )
    remote_agents: list[RemoteAgentEntry] = Field(
        default_factory=list, description="A2A agents added as sub-agents."
    )
    mcp_servers: list[McpServerEntry] = Field(
        default_factory=list, description="MCP servers (stdio command or streamable HTTP url)."
    )
    fallback_model: str | None = Field(
        default=None, description="Model used when the primary still fails after retries."
    )
    model_retries: int | None = Field(
        default=None, ge=0, description="Retries on rate limits and server errors (default 3)."
    )
    turn_timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds one message may take (default 300)."
    )
    transfer_repair: bool | None = Field(
        default=None, description="Repair bad transfer targets in flight (default true)."
    )
    guards: bool | None = Field(
        default=None, description="Limits, re-routing and nudges (default true)."
    )
    shell: ShellSection = Field(
        default_factory=ShellSection, description="Deny list, environment and timeout of commands."
    )
    router: RouterSection = Field(
        default_factory=RouterSection, description="The fast-path router: auto or off."
    )

    @field_validator("router", mode="before")
    @classmethod
    def _router_mode(cls, value: Any) -> Any:
        # YAML reads a bare off/on as a boolean.
        if isinstance(value, bool):
            return {"mode": "auto" if value else "off"}
        return {"mode": value} if isinstance(value, str) else value


def read_config_file(path: str | Path) -> ConfigFile:
    """Parse and validate a YAML config file.

    Raises:
        ConfigError: naming the file and each bad field.
    """
    file = Path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {str(file)!r}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"Config file {str(file)!r} is not valid YAML: {exc}.") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"Config file {str(file)!r} must be a mapping of settings.")
    try:
        parsed = ConfigFile.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(
            f"field {'.'.join(str(p) for p in err['loc'])!r}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Config file {str(file)!r} is invalid: {details}.") from None
    if (
        parsed.topology
        and not Path(parsed.topology).is_absolute()
        and parsed.topology.endswith((".yaml", ".yml"))
    ):
        parsed.topology = str((file.parent / parsed.topology).resolve())
    return parsed


def merged_agent_options(parsed: ConfigFile) -> tuple[bool | None, int | None]:
    """multi_agent and max_delegation_rounds, the spec's ``agent.*`` keys winning."""
    multi = parsed.multi_agent
    rounds = parsed.max_delegation_rounds
    if parsed.agent is not None:
        if parsed.agent.multi_agent is not None:
            multi = parsed.agent.multi_agent
        if parsed.agent.max_delegation_rounds is not None:
            rounds = parsed.agent.max_delegation_rounds
    return multi, rounds
