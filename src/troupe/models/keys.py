"""API keys for models: from the config (``api_key`` or ``api_key_env``), or none at all.

A local OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...) reached
through ``api_base`` usually checks no key, but the OpenAI client refuses to
send a request without one, and LiteLLM reports that as a server error, which
would be retried. For such a server troupe sends a placeholder key instead,
so nobody has to export a fake ``OPENAI_API_KEY``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..environment import process_environ
from ..errors import ConfigError

KEYLESS = "no-key-needed"
"""The key sent to an ``api_base`` server when none is configured or in the environment."""


def configured_key(
    api_key: str | None, api_key_env: str | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The key the config gives: ``api_key`` itself, or the value of ``api_key_env``
    in ``environ`` (the settings' snapshot; None: this process's environment).

    Raises:
        ConfigError: both are set, or the variable ``api_key_env`` names is unset.
    """
    if api_key and api_key_env:
        raise ConfigError(
            f"api_key and api_key_env ({api_key_env!r}) are both set; keep one "
            "(api_key_env keeps the key out of the file)."
        )
    if api_key_env:
        source = process_environ() if environ is None else environ
        value = source.get(api_key_env, "").strip()
        if not value:
            raise ConfigError(
                f"api_key_env names {api_key_env!r}, which is not set; export the "
                "model's API key in it, or remove api_key_env for a server without keys."
            )
        return value
    return api_key or None


def keyless_placeholder(model: str, api_base: str | None) -> str | None:
    """:data:`KEYLESS` when ``model`` goes to ``api_base`` and its provider's key
    variable (``OPENAI_API_KEY`` for ``openai/``) is not set; else None."""
    if not api_base:
        return None
    import litellm

    missing = litellm.validate_environment(model).get("missing_keys") or []
    return KEYLESS if any(str(name).endswith("_API_KEY") for name in missing) else None
