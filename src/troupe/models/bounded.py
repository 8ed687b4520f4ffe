"""A model's tool calls with arguments too deep or too large, disarmed as they arrive.

ADK walks a reply's tool-call arguments recursively as soon as the model
returns it (telemetry, the copy handed to the tool, the session's events),
so a hostile model's 900-level nested argument would end the turn with
``RecursionError`` before any callback could refuse it. :class:`BoundedModel`
sits between the agent and its model: each call whose arguments fail
:func:`~troupe.tool_arguments.shape_problem` keeps its name, and its
arguments become ``{REFUSED_ARGUMENTS: reason}``. The guards answer such a call
with a tool error naming the reason, so the turn goes on and the model can
send a smaller call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, aclosing

from google.adk.models.base_llm import BaseLlm
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

from ..tool_arguments import REFUSED_ARGUMENTS, shape_problem

logger = logging.getLogger("troupe.models")


def disarm_calls(response: LlmResponse) -> None:
    """Replace the arguments of every call in ``response`` that fail the shape check."""
    content = response.content
    for part in (content.parts if content is not None else None) or []:
        called = part.function_call
        if called is None or not called.args:
            continue
        problem = shape_problem(called.args)
        if problem is not None:
            logger.warning("Refused the arguments of %s: %s", called.name, problem)
            called.args = {REFUSED_ARGUMENTS: problem}


class BoundedModel(BaseLlm):
    """``inner`` with every reply passed through :func:`disarm_calls`."""

    inner: BaseLlm
    """The model that answers."""

    @classmethod
    def around(cls, inner: BaseLlm) -> BoundedModel:
        """``inner`` bounded, under its own model name."""
        return cls(model=inner.model, inner=inner)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        # Closed with this generator, not left to the event loop's finalizer.
        replies = self.inner.generate_content_async(llm_request, stream=stream)
        async with aclosing(replies):
            async for response in replies:
                disarm_calls(response)
                yield response

    def connect(
        self, llm_request: LlmRequest
    ) -> AbstractAsyncContextManager[BaseLlmConnection, bool | None]:
        return self.inner.connect(llm_request)
