"""Which of troupe's environment variables ``secrets_set(from_env=...)`` may read.

troupe's process holds the model provider's key, its own ``TROUPE_*`` settings
(the vault key among them) and whatever the user exported. A tool the model
calls reads none of it unless the user listed the variable in the config's
``vault.import_env`` (empty by default). Even a listed name is refused when it
is a model provider's key or a ``TROUPE_*`` variable: the config is rejected,
naming the entry. ``troupe secrets set --from-env`` (a person at the keyboard)
is not a tool and is not limited by this list.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError
from ._process import env_names

SETTING = "vault.import_env"
"""The config setting that names the variables a tool may import."""
TROUPE_PREFIX = "TROUPE_"

PROVIDER_KEY_ENV = frozenset(
    {
        # Model providers LiteLLM and ADK read a key from.
        "AI21_API_KEY", "ALEPH_ALPHA_API_KEY", "ANTHROPIC_API_KEY", "ANYSCALE_API_KEY",
        "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AI_API_KEY", "BASETEN_API_KEY",
        "CEREBRAS_API_KEY", "CLOUDFLARE_API_KEY", "CODESTRAL_API_KEY", "COHERE_API_KEY",
        "CO_API_KEY", "DASHSCOPE_API_KEY", "DATABRICKS_TOKEN", "DEEPINFRA_API_KEY",
        "DEEPSEEK_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_API_KEY",
        "FRIENDLIAI_API_KEY", "GEMINI_API_KEY", "GITHUB_API_KEY", "GOOGLE_API_KEY",
        "GROQ_API_KEY", "HF_TOKEN", "HUGGINGFACE_API_KEY", "HUGGING_FACE_HUB_TOKEN",
        "HYPERBOLIC_API_KEY", "LAMBDA_API_KEY", "LLAMA_API_KEY", "MISTRAL_API_KEY",
        "MOONSHOT_API_KEY", "NEBIUS_API_KEY", "NLP_CLOUD_API_KEY", "NOVITA_API_KEY",
        "NVIDIA_NIM_API_KEY", "OLLAMA_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
        "PALM_API_KEY", "PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY", "REPLICATE_API_KEY",
        "REPLICATE_API_TOKEN", "SAMBANOVA_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY",
        "TOGETHER_API_KEY", "VERTEXAI_CREDENTIALS", "VOYAGE_API_KEY", "WATSONX_APIKEY",
        "XAI_API_KEY",
        # Cloud credentials LiteLLM and ADK use for Bedrock, SageMaker and Vertex AI.
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK", "GOOGLE_APPLICATION_CREDENTIALS",
    }
)  # fmt: skip
"""Variables holding a model provider's key or cloud credentials: never importable."""


def never_importable(name: str, *, model_key_env: str | None = None) -> str | None:
    """Why ``name`` may never be imported into the vault by a tool, or None.

    ``model_key_env`` is the config's ``api_key_env`` (the variable holding the
    model's key), refused like the providers' own names.
    """
    upper = name.upper()
    if upper.startswith(TROUPE_PREFIX):
        return "is one of troupe's own TROUPE_* variables"
    if upper in PROVIDER_KEY_ENV or (model_key_env and upper == model_key_env.upper()):
        return "holds a model provider's key"
    return None


def check_import_env(names: Sequence[str], *, model_key_env: str | None = None) -> tuple[str, ...]:
    """Validate a ``vault.import_env`` list; a bad entry raises ConfigError naming it."""
    for name in env_names(SETTING, names):
        if (why := never_importable(name, model_key_env=model_key_env)) is not None:
            raise ConfigError(
                f"{SETTING} entry {name!r} {why}, which a tool may never read; remove it "
                "(a person can still store it with `troupe secrets set NAME --from-env VAR`)."
            )
    return tuple(names)
