"""Closing the HTTP clients model providers keep between calls.

LiteLLM caches an async HTTP client per provider and event loop for the life
of the process. A door that owns its event loop (a chat session, ``troupe
serve``, ``troupe eval``, the demo) closes them when it shuts down, so their
connections end there instead of being collected unclosed at exit.
"""

from __future__ import annotations

import logging
import sys

logger = logging.getLogger("troupe.models")


async def close_model_clients() -> None:
    """Close LiteLLM's cached async clients; nothing when LiteLLM was never loaded.

    A failure is only logged: shutting down goes on whatever a client says.
    """
    litellm = sys.modules.get("litellm")
    close = getattr(litellm, "close_litellm_async_clients", None) if litellm else None
    if close is None:
        return
    try:
        await close()
    except Exception as exc:
        logger.debug("closing the model clients failed: %s", exc, exc_info=exc)
