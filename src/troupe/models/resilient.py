"""Retries with backoff on transient model errors, then an optional fallback model."""

from __future__ import annotations

import asyncio
import logging
import random
import re
from dataclasses import dataclass

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

from .bounded import disarm_calls

logger = logging.getLogger("troupe.models")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_RETRYABLE_NAMES = (
    "RateLimit",
    "ServiceUnavailable",
    "InternalServer",
    "Timeout",
    "APIConnection",
    "Overloaded",
    "ServerError",
)


class TransientModelError(RuntimeError):
    """A model failure worth retrying, such as HTTP 429 or 500."""

    def __init__(self, status_code: int, message: str = "") -> None:
        self.status_code = status_code
        super().__init__(message or f"model endpoint answered HTTP {status_code}")


PERMANENT_STATUS = {
    400: "the provider rejected the request as malformed",
    401: "authentication failed",
    403: "the key may not use this model",
    404: "the model or endpoint does not exist",
    422: "the provider rejected the request as malformed",
}
"""Statuses that never improve on retry, with what they mean."""
_PERMANENT_NAMES = {
    "Authentication": 401,
    "PermissionDenied": 403,
    "BadRequest": 400,
    "NotFound": 404,
    "ContentPolicyViolation": 400,
    "UnprocessableEntity": 422,
}
# LiteLLM reports a request the OpenAI client refused to send for want of a key
# as an InternalServerError (500); it is an authentication problem.
_MISSING_KEY = "Missing credentials"
_FIX = {
    401: "check api_key or api_key_env in troupe.yaml, or the provider's key variable",
    403: "check the key's permissions and the model name",
    404: "check the model name and api_base",
    429: "wait and retry, lower the request rate, or set fallback_model in troupe.yaml",
    500: "retry later, or set fallback_model in troupe.yaml",
    502: "retry later, or set fallback_model in troupe.yaml",
    503: "retry later, or set fallback_model in troupe.yaml",
    504: "retry later, or set fallback_model in troupe.yaml",
}
TRANSIENT_STATUS = {
    429: "rate limited by the provider",
    500: "the provider's server failed",
    502: "the provider's gateway failed",
    503: "the provider is overloaded or down",
    504: "the provider timed out",
}
"""Statuses retried before they are reported, with what they mean."""
# google-genai's client, which ADK uses for bare Gemini names, says this when no
# key variable is set.
_GOOGLE_NO_KEY = re.compile(r"No API key was provided|API key must be set", re.IGNORECASE)
_PROVIDER_NOISE = re.compile(r"^(?:(?:litellm\.\w+|\w+Error|\w+Exception)\s*[:-]\s*)*")


def permanent_status(error: BaseException) -> int | None:
    """The HTTP status of a model error that no retry can fix (401, 400, ...), else None."""
    if _MISSING_KEY in str(error):
        return 401
    status = status_of(error)
    if status in PERMANENT_STATUS:
        return status
    name = type(error).__name__
    return next((code for part, code in _PERMANENT_NAMES.items() if part in name), None)


def describe_model_error(error: BaseException) -> str | None:
    """One line for a failed model call, naming the model, the provider and the fix.

    None for an error that is not a model provider's (troupe's own, a tool's).
    """
    said = _first_line(error)
    if _GOOGLE_NO_KEY.search(said):
        status, fix = 401, "set GOOGLE_API_KEY (or GEMINI_API_KEY), or use Vertex AI"
    else:
        found = permanent_status(error)
        if found is None and is_transient(error):
            found = status_of(error)
        if found is None:
            return None
        status = found
        fix = _FIX.get(status, "check the model name, api_base and the request")
    who = _model_and_provider(error)
    meaning = PERMANENT_STATUS.get(status) or TRANSIENT_STATUS.get(status, "the request failed")
    return f"{who} failed with HTTP {status} ({meaning}): {said[:300]}; {fix}."


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return _PROVIDER_NOISE.sub("", lines[0]) if lines else type(error).__name__


def _model_and_provider(error: BaseException) -> str:
    """'model request to gpt-4o-mini (openai)' from what LiteLLM's errors carry."""
    model = getattr(error, "model", None)
    provider = getattr(error, "llm_provider", None)
    if isinstance(model, str) and model:
        if isinstance(provider, str) and provider and not model.startswith(f"{provider}/"):
            return f"model request to {model!r} ({provider})"
        return f"model request to {model!r}"
    return "model request"


def status_of(error: BaseException) -> int | None:
    """The HTTP status an exception carries, if any."""
    for attr in ("status_code", "code", "status"):
        value = getattr(error, attr, None)
        if isinstance(value, int):
            return value
    return None


def is_transient(error: BaseException) -> bool:
    """True for rate limits, server errors, timeouts and dropped connections.

    Authentication, permission and bad-request errors are never transient.
    """
    if permanent_status(error) is not None:
        return False
    status = status_of(error)
    if status is not None:
        return status in RETRYABLE_STATUS
    name = type(error).__name__
    return any(part in name for part in _RETRYABLE_NAMES) or isinstance(
        error, (asyncio.TimeoutError, ConnectionError)
    )


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed model call is retried, and what to fall back on."""

    retries: int = 3
    """Extra attempts after the first failure."""
    base_delay: float = 0.5
    """Seconds before the first retry; doubles each time, with jitter."""
    max_delay: float = 8.0
    """Upper bound of one wait."""
    fallback: BaseLlm | None = None
    """Model used once the retries are spent."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        return min(self.max_delay, self.base_delay * (2**attempt)) * (0.5 + random.random() / 2)


async def _complete(model: BaseLlm, request: LlmRequest) -> LlmResponse | None:
    final: LlmResponse | None = None
    async for response in model.generate_content_async(request, stream=False):
        if not response.partial:
            final = response
    if final is not None:
        disarm_calls(final)  # a retried or fallback reply is checked like any other
    return final


class ModelRecovery:
    """An ``on_model_error_callback``: retries transient failures with backoff,
    then asks the fallback model. Other errors pass through unchanged.

    Being a callback rather than a wrapper keeps ``agent.model`` exactly what
    the user configured.
    """

    def __init__(self, model: BaseLlm, policy: RetryPolicy) -> None:
        self.model = model
        self.policy = policy
        self.retried = 0
        """Retries made so far (all turns)."""
        self.fell_back = 0
        """Times the fallback model answered."""

    async def __call__(
        self, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        if not is_transient(error):
            return None
        last: BaseException = error
        for attempt in range(self.policy.retries):
            delay = self.policy.delay(attempt)
            logger.warning(
                "Model %s failed (%s); retry %d/%d in %.2fs",
                self.model.model,
                last,
                attempt + 1,
                self.policy.retries,
                delay,
            )
            await asyncio.sleep(delay)
            self.retried += 1
            try:
                return await _complete(self.model, llm_request)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                last = exc
        if self.policy.fallback is not None:
            logger.warning(
                "Model %s still failing (%s); using fallback %s",
                self.model.model,
                last,
                self.policy.fallback.model,
            )
            self.fell_back += 1
            return await _complete(self.policy.fallback, llm_request)
        raise last
