"""Can the configured model answer at all? Checked before ``troupe chat`` shows a prompt.

* A provider's model with no ``api_base`` needs that provider's key: the
  variable is named (LiteLLM's ``validate_environment`` knows each provider's;
  ADK's own Gemini client reads ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``).
* A model behind ``api_base`` needs the server to answer and to serve it:
  ``GET /models`` (OpenAI-compatible servers; Ollama's ``/api/tags``), and on
  llama.cpp ``GET /props`` says whether its chat template takes tools.

What stops every turn raises :class:`~troupe.errors.ConfigError` with one
line naming the cause and the fix; what only weakens the team (a llama.cpp
template without tools, where the router still decides the clear requests)
is returned as a warning.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from google.adk.models.base_llm import BaseLlm

from ..errors import ConfigError
from .known import did_you_mean
from .offline import OFFLINE_MODEL_NAME

PROBE_TIMEOUT_S = 3.0
"""How long one request to a model server may take before it counts as unreachable."""
GOOGLE_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
VERTEX_SWITCH = "GOOGLE_GENAI_USE_VERTEXAI"
OLLAMA_PROVIDERS = ("ollama", "ollama_chat")
OLLAMA_DEFAULT_BASE = "http://localhost:11434"


def check_model_setup(
    model: str | BaseLlm | None,
    *,
    api_base: str | None,
    api_key: str | None,
    environ: Mapping[str, str],
) -> list[str]:
    """Warnings about ``model``'s setup; raises ConfigError for what no turn can get past."""
    if model is None or isinstance(model, BaseLlm) or model.strip() == OFFLINE_MODEL_NAME:
        return []
    name = model.strip()
    provider = name.split("/", 1)[0] if "/" in name else ""
    if provider in OLLAMA_PROVIDERS:
        _check_ollama(name, api_base or OLLAMA_DEFAULT_BASE)
        return []
    if api_base and provider:
        return _check_server(name, api_base, api_key)
    if not api_key:
        _check_key(name, provider, environ)
    return []


def _missing_key_message(name: str, variables: list[str], *, litellm: bool) -> str:
    where = ", api_key_env in troupe.yaml" if litellm else ""
    return (
        f"{' or '.join(variables)} is not set: model {name!r} needs it "
        f"(export {variables[0]}=...{where}, or --model offline)."
    )


def _check_key(name: str, provider: str, environ: Mapping[str, str]) -> None:
    needed = _litellm_keys(name) if provider else _adk_keys(name, environ)
    if needed and not any(environ.get(var, "").strip() for var in needed):
        message = _missing_key_message(name, needed, litellm=bool(provider))
        # The chat stops here, before resolve_model would warn about a misspelt name.
        if (guess := did_you_mean(name)) is not None:
            message += f" Did you mean {guess!r}?"
        raise ConfigError(message)


def _litellm_keys(name: str) -> list[str]:
    """The key variables LiteLLM says ``name``'s provider needs (names ending in _KEY)."""
    from ..environment import quiet_litellm

    quiet_litellm()
    import litellm

    try:
        missing = litellm.validate_environment(model=name).get("missing_keys") or []
    except Exception:  # a provider LiteLLM cannot judge: the first turn will say
        return []
    return [str(var) for var in missing if str(var).endswith("_KEY")]


def _adk_keys(name: str, environ: Mapping[str, str]) -> list[str]:
    """The variables ADK's own client for ``name`` reads its key from."""
    from google.adk.models.google_llm import Gemini
    from google.adk.models.registry import LLMRegistry

    try:
        model_class = LLMRegistry.resolve(name)
    except ValueError:
        return []  # resolve_model names the accepted forms
    if issubclass(model_class, Gemini):
        vertex = environ.get(VERTEX_SWITCH, "").strip().lower() in ("1", "true", "yes")
        return [] if vertex else list(GOOGLE_KEYS)
    if model_class.__name__ == "OpenAILlm":
        return ["OPENAI_API_KEY"]
    return []


def _get(url: str, api_key: str | None) -> tuple[int, Any]:
    """(status, parsed JSON or None) of ``GET url``; URLError when nothing answers."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
            status, body = response.status, response.read(1_000_000)
    except urllib.error.HTTPError as exc:
        return exc.code, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def _unreachable(api_base: str, exc: Exception) -> ConfigError:
    reason = getattr(exc, "reason", exc)
    return ConfigError(
        f"cannot reach the model server at {api_base} ({reason}): start the server, "
        "or correct api_base (--api-base)."
    )


def _check_server(name: str, api_base: str, api_key: str | None) -> list[str]:
    base = api_base.rstrip("/")
    wanted = name.split("/", 1)[1]
    try:
        status, listing = _get(f"{base}/models", api_key)
    except (urllib.error.URLError, OSError) as exc:
        raise _unreachable(api_base, exc) from None
    if status in (401, 403):
        raise ConfigError(
            f"the model server at {api_base} refused the key (HTTP {status}) when asked "
            "which models it serves: give its key with api_key_env (or api_key) in troupe.yaml."
        )
    root = base.removesuffix("/v1")
    try:
        props_status, props = _get(f"{root}/props", api_key)
    except (urllib.error.URLError, OSError):
        props_status, props = 0, None
    llama_cpp = props_status == 200 and isinstance(props, dict)
    served = _ids(listing) if status == 200 else []
    # llama.cpp answers under any model name with the model it loaded.
    if served and wanted not in served and not llama_cpp:
        raise ConfigError(
            f"the model server at {api_base} does not serve {wanted!r}; it serves "
            f"{', '.join(served[:10])}. Use --model {name.split('/', 1)[0]}/{served[0]}."
        )
    caps = props.get("chat_template_caps") if llama_cpp and isinstance(props, dict) else None
    if isinstance(caps, dict) and caps.get("supports_tools") is False:
        return [
            f"llama.cpp at {api_base} says its chat template takes no tools "
            "(/props: supports_tools false): its model can neither call a tool nor hand a "
            "request to an agent, so only the requests the router decides will reach one. "
            "Start llama-server with --jinja and a template with tools (--chat-template-file)."
        ]
    return []


def _ids(listing: Any) -> list[str]:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return []
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]


def _check_ollama(name: str, api_base: str) -> None:
    base = api_base.rstrip("/").removesuffix("/v1")
    wanted = name.split("/", 1)[1]
    try:
        status, tags = _get(f"{base}/api/tags", None)
    except (urllib.error.URLError, OSError) as exc:
        raise _unreachable(api_base, exc) from None
    models = tags.get("models") if status == 200 and isinstance(tags, dict) else None
    if not isinstance(models, list):
        return
    served = [str(m.get("name")) for m in models if isinstance(m, dict)]
    if served and wanted not in served and f"{wanted}:latest" not in served:
        raise ConfigError(
            f"Ollama at {api_base} has no model {wanted!r}; it has {', '.join(served[:10])}. "
            f"Pull it first (ollama pull {wanted}), or use one of those."
        )
