"""The models a door test's script drives: in-process (scripted) or over HTTP (fake server),
and the Visit each turn gets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from door_runs import Visit
from failure_shapes import Call, Say, Shape
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import Field
from typing_extensions import override

from fakes.openai_server import serve, slow, text_reply, tool_call_reply, wire_replies
from troupe.testing import Reply, ScriptedModel, call


class DelayedScript(ScriptedModel):
    """A ScriptedModel whose replies may wait first (``delays`` by call index)."""

    delays: dict[int, float] = Field(default_factory=dict)

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        delay = self.delays.get(len(self.requests), 0.0)
        if delay:
            await asyncio.sleep(delay)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def _scripted(script: tuple[Call | Say, ...]) -> DelayedScript:
    replies: list[Any] = [call(r.name, **r.args) if isinstance(r, Call) else r.text for r in script]
    delays = {i: r.delay for i, r in enumerate(script) if isinstance(r, Say) and r.delay}
    return DelayedScript(replies=replies, delays=delays)


def _openai(script: tuple[Call | Say, ...]) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for i, reply in enumerate(script):
        if isinstance(reply, Call):
            replies.append(tool_call_reply(reply.name, dict(reply.args), f"call_{i}"))
        elif reply.delay:
            replies.append(slow(reply.delay, text_reply(reply.text)))
        else:
            replies.append(text_reply(reply.text))
    return replies


class Visits:
    """Builds a Visit for each turn, with the model ready to answer it.

    Each visit gets its own config file and data directory, so a test may
    send the same turn through several doors and compare their traces.
    """

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self._tmp = tmp_path
        self._patch = monkeypatch
        self._servers: list[Any] = []
        self._count = 0
        self._calls: Callable[[], int] = lambda: 0
        self.scripted_model: ScriptedModel | None = None
        """The in-process model of the latest scripted visit."""

    def __call__(self, model: str, shape: Shape) -> Visit:
        """A visit for one of the door shapes, with either kind of model.

        Over HTTP, ``adk run`` runs as a new process (the ``adk`` command).
        """
        if model == "scripted":
            return self.scripted(_scripted(shape.script), shape.settings, shape.request)
        return self._served(_openai(shape.script), shape.settings, shape.request, own_process=True)

    def replies(
        self, model: str, replies: Sequence[Reply], settings: Mapping[str, Any], request: str
    ) -> Visit:
        """A visit whose model answers with ``replies`` (a ScriptedModel script), in order.

        ``model`` is ``"scripted"`` (patched into this process) or
        ``"openai_fake"`` (the fake server on 127.0.0.1, reached through
        LiteLLM; ``adk run`` then runs in this process too, the model still
        over HTTP).
        """
        if model == "scripted":
            return self.scripted(ScriptedModel(replies=list(replies)), settings, request)
        return self._served(wire_replies(replies), settings, request, own_process=False)

    def model_calls(self) -> int:
        """Model requests the latest visit's model received."""
        return self._calls()

    def scripted(self, model: ScriptedModel, settings: Mapping[str, Any], request: str) -> Visit:
        """A visit whose turn the given scripted model answers, in this process."""
        self.scripted_model = model
        visit = self.patched(model, settings, request)
        self._calls = lambda: len(model.requests)
        return visit

    def patched(self, model: BaseLlm, settings: Mapping[str, Any], request: str) -> Visit:
        """A visit whose every agent uses ``model``, patched into this process."""
        self._calls = lambda: 0
        self._patch.setattr("troupe.tree.resolve_model", lambda *_a, **_k: model)
        # "offline" is replaced by the model above.
        return self._visit({**settings, "model": "offline"}, request)

    def _served(
        self,
        wire: list[dict[str, Any]],
        settings: Mapping[str, Any],
        request: str,
        *,
        own_process: bool,
    ) -> Visit:
        context = serve(wire)
        fake = context.__enter__()
        self._servers.append(context)
        self._calls = lambda: len(fake.requests)
        self._patch.setenv("OPENAI_API_KEY", "sk-test-dummy")
        self._patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            self._patch.delenv(name, raising=False)
        self._patch.setenv("TROUPE_MODEL", "openai/fake-model")
        entries = {**settings, "model": "openai/fake-model", "api_base": fake.api_base}
        return self._visit(entries, request, own_process=own_process)

    def _visit(
        self,
        entries: dict[str, Any],
        request: str,
        *,
        own_process: bool = False,
    ) -> Visit:
        turn, self._count = self._count, self._count + 1
        workspace = self._tmp / "workspace"
        workspace.mkdir(exist_ok=True)
        (workspace / "notes.txt").write_text("notes for the door tests\n", encoding="utf-8")
        config = self._tmp / f"troupe-{turn}.yaml"
        config.write_text(yaml.safe_dump({"model_retries": 0, **entries}), encoding="utf-8")
        return Visit(
            config=config,
            workspace=workspace,
            data_dir=self._tmp / f"data-{turn}",
            request=request,
            own_process=own_process,
        )

    def close(self) -> None:
        for context in self._servers:
            context.__exit__(None, None, None)
