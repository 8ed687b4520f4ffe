"""Helpers for tests of concurrent turns on one session: a model that shows whether turns
overlapped, the request each turn sends, and the check that the stored history
keeps each turn in one piece."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr
from typing_extensions import override

from troupe.testing import user_texts


def turn_request(n: int) -> str:
    return f"run `echo turn-{n}`"


def _user_text(event: Event) -> str:
    parts = event.content.parts if event.content else None
    return "".join(part.text for part in parts or [] if part.text)


def assert_turns_kept_apart(events: list[Event], count: int) -> None:
    """``count`` turns, each a contiguous block that starts with its request and holds its echo."""
    blocks: list[list[Event]] = []
    for event in events:
        if not blocks or event.invocation_id != blocks[-1][0].invocation_id:
            ids_so_far = {block[0].invocation_id for block in blocks}
            assert event.invocation_id not in ids_so_far, "two turns were interleaved"
            blocks.append([])
        blocks[-1].append(event)
    assert len(blocks) == count
    asked = []
    for block in blocks:
        assert block[0].author == "user"
        request = _user_text(block[0])
        token = request.removeprefix("run `echo ").removesuffix("`")
        assert any(token in str(e.model_dump()) for e in block[1:] if e.author != "user"), (
            f"the turn for {request!r} holds no answer with {token!r}"
        )
        asked.append(request)
    assert sorted(asked) == sorted(turn_request(n) for n in range(count))


class GatedModel(BaseLlm):
    """Answers every call with the request's own text, after ``gate`` lets it through.

    It records how many calls were inside it at once, so a test sees whether
    two turns overlapped without timing anything.
    """

    model: str = "gated"
    _gate: Callable[[], Awaitable[None]] = PrivateAttr()
    _active: int = PrivateAttr(default=0)
    _most: int = PrivateAttr(default=0)

    def __init__(self, gate: Callable[[], Awaitable[None]]) -> None:
        super().__init__(model="gated")
        self._gate = gate

    @property
    def most_at_once(self) -> int:
        return self._most

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._active += 1
        self._most = max(self._most, self._active)
        try:
            await self._gate()
        finally:
            self._active -= 1
        asked = user_texts(llm_request)[-1]
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"{asked} done")]),
            turn_complete=True,
        )
