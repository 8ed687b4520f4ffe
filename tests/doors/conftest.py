"""Fixtures for the door tests: the model each shape's script drives, and a visit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from door_runs import Visit
from failure_shapes import Call, Say, Shape
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import Field
from typing_extensions import override

from fakes.openai_server import serve, slow, text_reply, tool_call_reply
from troupe.testing import ScriptedModel, call


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


@pytest.fixture
def visit_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Builds the Visit for (model kind, shape), with the model ready to answer.

    Each call gets its own config file and data directory, so a test may
    send the same turn through several doors and compare their traces.
    """
    servers: list[Any] = []
    made: list[str] = []

    def make(model: str, shape: Shape) -> Visit:
        turn = len(made)
        made.append(shape.name)
        workspace = tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        (workspace / "notes.txt").write_text("notes for the door tests\n", encoding="utf-8")
        entries: dict[str, Any] = {"model_retries": 0, **shape.settings}
        if model == "scripted":
            scripted = _scripted(shape.script)
            monkeypatch.setattr("troupe.tree.resolve_model", lambda *_a, **_k: scripted)
            entries["model"] = "offline"  # replaced by the scripted model above
        else:
            context = serve(_openai(shape.script))
            fake = context.__enter__()
            servers.append(context)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
            monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
                monkeypatch.delenv(name, raising=False)
            entries.update(model="openai/fake-model", api_base=fake.api_base)
            monkeypatch.setenv("TROUPE_MODEL", "openai/fake-model")
        config = tmp_path / f"troupe-{turn}.yaml"
        config.write_text(yaml.safe_dump(entries), encoding="utf-8")
        return Visit(
            config=config,
            workspace=workspace,
            data_dir=tmp_path / f"data-{turn}",
            request=shape.request,
            in_process_model=model == "scripted",
        )

    yield make
    for context in servers:
        context.__exit__(None, None, None)
