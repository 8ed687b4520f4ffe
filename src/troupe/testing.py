"""Test helpers for code built on troupe: a scripted model and event simplifier.

:class:`ScriptedModel` stands in for a language model at the LLM boundary. It
replays a fixed list of replies, one per model call, and records every request
it receives, so a test can drive ADK's real Runner and then check both what
happened (with :func:`simplify`) and what the model was shown::

    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_list", path="."),
            "Here are the files.",
        ]
    )
    root = build_agent_tree(Config(tools=builtin_tools(), model=model))
    events = [e async for e in Assistant(root).run("s1", "list the files")]
    assert simplify(events) == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_call", "fs_list"),
        ("operator", "tool_result", "fs_list"),
        ("operator", "text", None),
    ]
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr
from typing_extensions import override

from .errors import TroupeError
from .models._request import system_text, user_texts
from .runtime.events import steps

SCRIPTED_MODEL_NAME = "scripted"


@dataclass(frozen=True)
class FunctionCallReply:
    """A scripted reply that calls a tool (or ``transfer_to_agent``)."""

    name: str
    """The function the model calls."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """Its arguments."""


Reply = str | FunctionCallReply | tuple[str, Mapping[str, Any]] | BaseException | LlmResponse
"""One scripted model turn: text, a function call, an exception to raise, or a raw response."""


def call(name: str, /, **args: Any) -> FunctionCallReply:
    """A scripted function call: ``call("fs_list", path=".")``."""
    return FunctionCallReply(name=name, args=args)


class ScriptExhaustedError(TroupeError):
    """The model was called more times than the script has replies."""


class ScriptedModel(BaseLlm):
    """A fake ADK model that replays ``replies`` in order and records its requests.

    Each model call consumes one reply:

    * a ``str`` becomes a text answer;
    * a :class:`FunctionCallReply` (see :func:`call`) or a ``(name, args)``
      tuple becomes a function call;
    * an exception instance is raised from the model call;
    * an ``LlmResponse`` is yielded as it is.

    One instance may serve every agent of a tree: the replies are consumed in
    the order the agents call the model.
    """

    model: str = SCRIPTED_MODEL_NAME
    replies: list[Any] = Field(default_factory=list)
    """The scripted replies, in the order they are given."""

    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)
    _next: int = PrivateAttr(default=0)

    @classmethod
    @override
    def supported_models(cls) -> list[str]:
        return [SCRIPTED_MODEL_NAME]

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request the model received, oldest first."""
        return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used yet."""
        return len(self.replies) - self._next

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request)
        if self._next >= len(self.replies):
            raise ScriptExhaustedError(
                f"ScriptedModel received call {len(self._requests)} but the script has only "
                f"{len(self.replies)} replies; add replies for the extra model calls."
            )
        reply = self.replies[self._next]
        self._next += 1
        if isinstance(reply, BaseException):
            raise reply
        yield _to_response(reply)


def _to_response(reply: Any) -> LlmResponse:
    if isinstance(reply, LlmResponse):
        return reply
    if isinstance(reply, str):
        part = types.Part(text=reply)
    elif isinstance(reply, FunctionCallReply):
        part = types.Part(function_call=types.FunctionCall(name=reply.name, args=dict(reply.args)))
    elif isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[0], str):
        name, args = reply
        part = types.Part(function_call=types.FunctionCall(name=name, args=dict(args)))
    else:
        raise TypeError(
            f"ScriptedModel cannot replay {reply!r}; use a str, call(name, **args), "
            "a (name, args) tuple, an exception or an LlmResponse."
        )
    return LlmResponse(content=types.Content(role="model", parts=[part]), turn_complete=True)


def simplify(events: Iterable[Event]) -> list[tuple[str, str, str | None]]:
    """``(author, kind, name)`` for every step of ``events``.

    ``kind`` is transfer, tool_call, tool_result or text; ``name`` is the
    transfer target or the tool, and None for text.
    """
    return [(s.author, s.kind, s.name) for event in events for s in steps(event)]


def declared_tools(request: LlmRequest) -> list[str]:
    """Names of the functions declared to the model in ``request``."""
    names: list[str] = []
    for tool in request.config.tools or []:
        for decl in getattr(tool, "function_declarations", None) or []:
            if decl.name:
                names.append(decl.name)
    return names


__all__ = [
    "FunctionCallReply",
    "Reply",
    "ScriptExhaustedError",
    "ScriptedModel",
    "call",
    "declared_tools",
    "simplify",
    "system_text",
    "user_texts",
]
