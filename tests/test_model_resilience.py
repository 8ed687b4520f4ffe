"""Retries, fallback and the turn timeout against a local OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fakes.openai_server import failure, serve, slow, text_reply
from troupe import Assistant, Config, build_agent_tree
from troupe_bench.stub_tools import stub_tools

if TYPE_CHECKING:
    from google.adk.models.lite_llm import LiteLlm


@pytest.fixture(autouse=True)
def _local_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield


def _assistant(api_base: str, **options: Any) -> Assistant:
    config = Config(
        tools=stub_tools(),
        model="openai/fake-model",
        api_base=api_base,
        multi_agent=False,
        retry_base_delay=0.01,
        **options,
    )
    return Assistant(build_agent_tree(config))


async def test_rate_limit_and_server_error_are_retried_until_an_answer() -> None:
    script = [failure(429), failure(500), text_reply("hello after retries")]
    with serve(script) as fake:
        reply = await _assistant(fake.api_base, model_retries=3).run_and_collect("s", "hi")
    assert reply == "hello after retries"
    assert len(fake.requests) == 3


async def test_fallback_model_answers_when_the_primary_keeps_failing() -> None:
    with serve([failure(503)] * 50) as primary, serve([text_reply("from the fallback")]) as backup:
        config = Config(
            tools=stub_tools(),
            model="openai/fake-model",
            api_base=primary.api_base,
            multi_agent=False,
            retry_base_delay=0.01,
            model_retries=1,
            fallback_model="openai/fake-model",
        )
        # Both models share the config's api_base; point the fallback at its own server.
        config.fallback_model = _litellm(backup.api_base)
        reply = await Assistant(build_agent_tree(config)).run_and_collect("s", "hi")
    assert reply == "from the fallback"
    assert len(backup.requests) == 1
    assert len(primary.requests) == 2  # the first attempt and one retry


async def test_client_error_is_not_retried() -> None:
    with serve([failure(400)] * 10) as fake, pytest.raises(Exception, match=r"400|BadRequest"):
        await _assistant(fake.api_base, model_retries=3).run_and_collect("s", "hi")
    assert len(fake.requests) == 1


async def test_slow_model_ends_the_turn_with_a_clear_message() -> None:
    with serve([slow(3.0, text_reply("too late"))]) as fake:
        assistant = _assistant(fake.api_base, turn_timeout_s=0.5, model_retries=0)
        reply = await assistant.run_and_collect("s", "hi")
    assert "took longer than 0.5 seconds" in reply
    assert "too late" not in reply


def _litellm(api_base: str) -> LiteLlm:
    from google.adk.models.lite_llm import LiteLlm

    return LiteLlm(model="openai/fake-model", api_base=api_base, max_retries=0)
