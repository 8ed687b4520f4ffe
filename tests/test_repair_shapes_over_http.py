"""Every failure shape over real HTTP: LiteLLM against an OpenAI-compatible fake on 127.0.0.1."""

from __future__ import annotations

import pytest

import troupe
from fakes.openai_server import serve, wire_replies
from fakes.shapes import SHAPES, FailureShape, check_outcome, shape_id
from troupe_bench.stub_tools import stub_tools


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
async def test_shape_is_repaired_or_ended_over_http(shape: FailureShape) -> None:
    with serve(wire_replies(shape.replies)) as fake:
        config = troupe.Config(
            tools=stub_tools(),
            model="openai/fake-model",
            api_base=fake.api_base,
            max_delegation_rounds=shape.max_delegation_rounds,
        )
        assistant = troupe.Assistant(troupe.build_agent_tree(config))
        events = [e async for e in assistant.run("s1", shape.request)]

    check_outcome(shape, events, len(fake.requests))
