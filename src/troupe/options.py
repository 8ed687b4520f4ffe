"""The options of a team, declared once: name, default, bounds and help text.

:class:`TeamOptions` is shared by :class:`troupe.Config` (what a library user
passes in Python) and :class:`troupe.settings.Settings` (what ``troupe.yaml``,
``TROUPE_*`` variables and CLI options set). Bounds sit where a user could hurt
themselves: a timeout of 1e23 seconds or a million model calls per message is
refused with the field named, not carried into the runtime.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ROUTER_MODES = ("auto", "off")
"""The fast-path router's modes."""
NO_LIMIT = "no_limit"
"""Marks a field whose ``None`` means no limit (said in the error message)."""


class TeamOptions(BaseModel):
    """Options of the agent team and its runtime, with their defaults and bounds."""

    model_config = ConfigDict(populate_by_name=True, validate_default=False)

    api_base: str | None = Field(
        default=None, description="Base URL for LiteLLM models (Ollama, OpenAI-compatible)."
    )
    api_key: str | None = Field(
        default=None,
        repr=False,
        description="API key for LiteLLM models; prefer api_key_env to keep it out of the file.",
    )
    api_key_env: str | None = Field(
        default=None,
        description="Environment variable holding the model's API key, e.g. GROQ_API_KEY.",
    )
    system_prompt: str | None = Field(
        default=None, description="Base system prompt at the top of the orchestrator's instruction."
    )
    multi_agent: bool = Field(
        default=True,
        alias="multiAgent",
        description="Orchestrator plus specialists (true) or one agent holding every tool.",
    )
    max_delegation_rounds: int = Field(
        default=0,
        ge=0,
        le=100,
        alias="maxDelegationRounds",
        description="Delegation rounds allowed per user message; 0 means the default of 5.",
    )
    session_store: str | None = Field(
        default=None,
        description="Session store URL (sqlite:///..., postgresql+asyncpg://..., memory://); "
        "none means sessions.db in the data directory.",
    )
    transfer_repair: bool = Field(
        default=True, description="Repair bad transfer targets in flight."
    )
    guards: bool = Field(
        default=True,
        description="Enforce limits, stop repeated calls, re-route rejections, nudge empty turns.",
    )
    max_model_calls: int = Field(
        default=24, ge=1, le=1000, description="Model calls allowed per user message."
    )
    max_repeated_calls: int = Field(
        default=3, ge=2, le=100, description="Identical tool calls in a row before a stop."
    )
    model_retries: int = Field(
        default=3, ge=0, le=10, description="Retries on rate limits and server errors (0: none)."
    )
    retry_base_delay: float = Field(
        default=0.5, ge=0, le=60, description="Seconds before the first retry; doubles each time."
    )
    turn_timeout_s: float | None = Field(
        default=300.0,
        gt=0,
        le=86400,
        description="Seconds one user message may take (at most a day); none means no limit.",
        json_schema_extra={NO_LIMIT: True},
    )
    router: str | None = Field(
        default=None,
        description="auto: the fast-path router sends confident requests to their agent with "
        "no orchestrator model call; off: the model decides every turn; none is auto.",
    )
    router_threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Confidence the router's best agent needs to be routed "
        "(see docs/routing.md); none: the default.",
    )

    router_require_transfer: bool = Field(
        default=False,
        description="When the router leaves a request to the model with a best guess, the "
        "orchestrator's model must call transfer_to_agent (tool_choice 'required'; a server "
        "that supports it, such as llama.cpp's, then constrains the agent name to the team's "
        "names). For small local models that answer in prose; greetings and general questions "
        "stay the model's to answer.",
    )

    router_agent_schema: bool = Field(
        default=False,
        description="When the router leaves a request to the model with a best guess, the "
        "orchestrator's first call asks for a JSON reply that names a team member (or "
        "'none' with an answer), under a JSON schema the server enforces (llama.cpp, vLLM, "
        "OpenAI); troupe turns the named member into the transfer. For small local models "
        "whose server ignores tool_choice; greetings and general questions stay the "
        "model's to answer.",
    )

    router_encoder_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Threads one routing decision's encoder pass may use (process-wide; "
        "1 suits servers, where sessions and replicas share the cores).",
    )

    @field_validator("router", mode="before")
    @classmethod
    def _a_router_mode(cls, value: Any) -> Any:
        # YAML reads a bare off/on as a boolean.
        if isinstance(value, bool):
            return "auto" if value else "off"
        if value is not None and value not in ROUTER_MODES:
            raise ValueError("must be 'auto' or 'off'")
        return value

    @field_validator(
        "max_delegation_rounds",
        "max_model_calls",
        "max_repeated_calls",
        "model_retries",
        "retry_base_delay",
        "turn_timeout_s",
        "router_threshold",
        "router_encoder_threads",
        mode="before",
    )
    @classmethod
    def _a_number(cls, value: Any, info: Any) -> Any:
        """Numbers only: no ``True`` for 1, no ``"10"`` for 10, no 2.5 for a count."""
        whole = cls.model_fields[info.field_name].annotation is int
        if value is None:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(_kind(whole))
        if whole and isinstance(value, float):
            raise ValueError(_kind(whole))
        return value


def _kind(whole: bool) -> str:
    return "must be a whole number" if whole else "must be a number"


def describe_errors(exc: ValidationError, model: type[BaseModel]) -> list[tuple[str, str]]:
    """(field, problem) per error; the problem names the value and what is accepted."""
    return [(".".join(str(p) for p in err["loc"]), _describe(err, model)) for err in exc.errors()]


def _describe(error: Any, model: type[BaseModel]) -> str:
    value = error.get("input")
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "greater_than_equal":
        said = f"must be {ctx['ge']:g} or more"
    elif kind == "greater_than":
        said = f"must be greater than {ctx['gt']:g}"
    elif kind == "less_than_equal":
        said = f"must be {ctx['le']:g} or less"
    elif kind == "value_error":
        said = str(ctx.get("error", error["msg"]))
        if not said.startswith("must be"):
            return said  # a check of ours: it names the value itself
    elif kind == "extra_forbidden":
        return "is not a known setting (Extra inputs are not permitted); fix its spelling"
    elif kind == "missing":
        return "is required"
    else:
        said = f"is invalid ({error['msg']})"
    text = f"{said}, not {value!r}"
    field = model.model_fields.get(str(error["loc"][0])) if error["loc"] else None
    extra = field.json_schema_extra if field is not None else None
    if isinstance(extra, dict) and extra.get(NO_LIMIT):
        text += " (None means no limit)"
    return text
