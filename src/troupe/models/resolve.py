"""Turn a model name into something an ADK agent accepts.

The provider table is data: each row says which names it takes and how to
build the model. Names ADK knows itself (Gemini) are passed through as
strings; ``provider/model`` names go to LiteLLM; ``offline`` is troupe's
rule-based stand-in.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from google.adk.models.base_llm import BaseLlm

from ..environment import quiet_litellm
from ..errors import ConfigError
from .keys import keyless_placeholder
from .known import did_you_mean
from .offline import OFFLINE_MODEL_NAME, OfflineModel

ModelLike = str | BaseLlm

logger = logging.getLogger("troupe.models")


@dataclass(frozen=True)
class Provider:
    """One way of naming a model."""

    label: str
    pattern: str
    example: str
    build: Callable[[str, str | None, str | None], ModelLike]
    """Builds the model from its name, ``api_base`` and ``api_key``."""


def _offline(name: str, api_base: str | None, api_key: str | None) -> ModelLike:
    return OfflineModel()


def _adk_registry(name: str, api_base: str | None, api_key: str | None) -> ModelLike:
    """A name ADK's LLMRegistry resolves (Gemini, Gemma, gpt-*, o*-, Claude ...), as is."""
    from google.adk.models.registry import LLMRegistry

    if api_key:
        raise ConfigError(
            f"api_key is passed to LiteLLM models; ADK's own client for {name!r} reads "
            "its provider's variable (GOOGLE_API_KEY, ...). Set that variable, or write "
            f"the model as provider/model, e.g. 'gemini/{name}'."
        )
    try:
        LLMRegistry.resolve(name)
    except ValueError:
        raise ConfigError(
            f"Unknown model {name!r}: ADK's model registry does not know it; other "
            f"providers go through LiteLLM as provider/model. Accepted: {accepted_models()}."
        ) from None
    return name


def _litellm(name: str, api_base: str | None, api_key: str | None) -> ModelLike:
    # Without this LiteLLM downloads its model price list on import, a network
    # call (and a delay when offline) that resolving a name should not make.
    quiet_litellm()
    try:
        import litellm
        from google.adk.models.lite_llm import LiteLlm
    except ImportError:  # pragma: no cover - litellm is a core dependency
        raise ConfigError(f"Model {name!r} needs LiteLLM: pip install litellm") from None
    # No "Give Feedback / Get Help" banner printed around every provider error.
    litellm.suppress_debug_info = True
    provider = name.split("/", 1)[0]
    if provider not in litellm.provider_list:
        raise ConfigError(
            f"Unknown LiteLLM provider {provider!r} in model {name!r}. Accepted: "
            f"{accepted_models()}; any provider LiteLLM knows may come before the "
            "slash (openai/, anthropic/, ollama_chat/, gemini/ ...)."
        )
    # troupe retries transient failures itself (with backoff, then the fallback
    # model); the provider client's own retries would multiply those attempts.
    kwargs: dict[str, object] = {"max_retries": 0}
    if api_base:
        kwargs["api_base"] = api_base
    key = api_key or keyless_placeholder(name, api_base)
    if key:
        kwargs["api_key"] = key
    return LiteLlm(model=name, **kwargs)


PROVIDERS: tuple[Provider, ...] = (
    Provider("offline rule-based stand-in", r"offline", "offline", _offline),
    Provider(
        "any LiteLLM provider",
        r"[a-z][\w-]*/.+",
        "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama_chat/llama3.2",
        _litellm,
    ),
    Provider(
        "any name ADK's LLMRegistry knows",
        r".+",
        "gemini-2.5-flash, gemma-3-27b-it, gpt-4o",
        _adk_registry,
    ),
)
"""Model-name patterns and their builders, tried in order; ADK's registry takes the rest."""

DEFAULT_GEMINI = "gemini-2.5-flash"


def accepted_models() -> str:
    """A one-line summary of the model names troupe accepts."""
    return "; ".join(f"{p.example} ({p.label})" for p in PROVIDERS)


GOOGLE_KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""The variables that make Gemini the default model of :func:`troupe.load_settings`."""


def default_model_name(environ: Mapping[str, str] | None = None) -> str:
    """The model when none is named: Gemini when ``environ`` (the settings' snapshot
    of the environment) holds a Google key, else offline. A :class:`troupe.Config`
    passes no environment, so its default is offline wherever it runs."""
    if environ and any(environ.get(name) for name in GOOGLE_KEY_ENVS):
        return DEFAULT_GEMINI
    return OFFLINE_MODEL_NAME


def resolve_model(
    model: ModelLike | None, *, api_base: str | None = None, api_key: str | None = None
) -> ModelLike:
    """A model name or BaseLlm as a value for ``LlmAgent(model=...)``.

    ``api_key`` goes to LiteLLM models (see :mod:`troupe.models.keys`).

    Raises:
        ConfigError: for a name no provider accepts, listing what is accepted.
    """
    if isinstance(model, BaseLlm):
        return model
    name = (model or default_model_name()).strip()
    if name.endswith("/"):
        raise ConfigError(
            f"Model {name!r} names a provider but no model; write provider/model, "
            "e.g. openai/gpt-4o-mini or ollama_chat/llama3.2."
        )
    # The offline model needs no check: it would only read LiteLLM's model list
    # (a megabyte of JSON) on every start-up for nothing.
    if name != OFFLINE_MODEL_NAME and api_base is None and (guess := did_you_mean(name)):
        # A warning, not a refusal: LiteLLM's list lags behind the providers.
        logger.warning(
            "model %r is not in LiteLLM's list of known models; did you mean %r?", name, guess
        )
    for provider in PROVIDERS:
        if re.fullmatch(provider.pattern, name):
            return provider.build(name, api_base, api_key)
    raise ConfigError(f"Unknown model {name!r}. Accepted: {accepted_models()}.")


def model_label(model: ModelLike) -> str:
    """A human label for a resolved model."""
    if isinstance(model, OfflineModel):
        return f"{OFFLINE_MODEL_NAME} (rule-based stand-in, not a language model)"
    if isinstance(model, BaseLlm):
        return model.model
    return model
