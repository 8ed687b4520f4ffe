"""The LiteLLM path over real HTTP, against a scripted OpenAI-compatible server."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from fakes.openai_server import FakeOpenAI, failure, serve, text_reply, tool_call_reply
from troupe import Assistant, Config, ConfigError, TroupeAgent, build_agent_tree, resolve_model
from troupe.builtins import Workspace, operator_tools
from troupe.testing import simplify

SCRIPT = [
    tool_call_reply("transfer_to_agent", {"agent_name": "operator"}, "call_1"),
    tool_call_reply("fs_list", {"path": "."}, "call_2"),
    text_reply("The workspace holds notes.txt."),
]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@pytest.fixture
def outside_connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Refuse, and record, every connection that is not to the loopback address."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and not _is_loopback(str(address[0])):
            attempts.append(address)
            raise OSError(f"test refused a connection to {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with serve(list(SCRIPT)) as fake:
        yield fake


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("milk\n", encoding="utf-8")
    return tmp_path


def litellm_assistant(fake: FakeOpenAI, workspace: Path) -> Assistant:
    config = Config(
        tools=operator_tools(Workspace(workspace)),
        model="openai/fake-model",
        api_base=fake.api_base,
    )
    return Assistant(build_agent_tree(config))


async def run_list_files(fake: FakeOpenAI, workspace: Path) -> list[Any]:
    assistant = litellm_assistant(fake, workspace)
    return [event async for event in assistant.run("s1", "list the files here")]


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def _system_prompt(body: dict[str, Any]) -> str:
    system = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    assert system, f"no system message in {body['messages']!r}"
    content = system[0]["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


async def test_litellm_run_goes_orchestrator_operator_tool_answer(
    fake_openai: FakeOpenAI, workspace: Path, outside_connections: list[Any]
) -> None:
    events = await run_list_files(fake_openai, workspace)

    assert simplify(events) == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_call", "fs_list"),
        ("operator", "tool_result", "fs_list"),
        ("operator", "text", None),
    ]
    assert len(fake_openai.requests) == 3
    assert set(fake_openai.paths) == {"/v1/chat/completions"}
    assert outside_connections == []


async def test_server_receives_the_transfer_declaration_with_the_agent_enum(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    assistant = litellm_assistant(fake_openai, workspace)
    await assistant.run_and_collect("s1", "list the files here")

    orchestrator_body = fake_openai.requests[0]
    assert orchestrator_body["model"] == "fake-model"
    assert _tool_names(orchestrator_body) == ["transfer_to_agent"]
    params = orchestrator_body["tools"][0]["function"]["parameters"]
    enum = params["properties"]["agent_name"]["enum"]
    assert enum == assistant.agent_names
    assert {"operator", "planner"} <= set(enum)


async def test_server_receives_the_orchestrator_system_prompt(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    await run_list_files(fake_openai, workspace)

    system = _system_prompt(fake_openai.requests[0])
    assert "## Routing table" in system
    assert "### operator" in system
    assert "NEVER invent or abbreviate agent names" in system


async def test_server_receives_operator_tools_and_the_tool_result(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    await run_list_files(fake_openai, workspace)

    operator_body, answer_body = fake_openai.requests[1], fake_openai.requests[2]
    operator_names = {t.name for t in operator_tools(Workspace(workspace))}
    assert set(_tool_names(operator_body)) == operator_names
    assert "You are operator" in _system_prompt(operator_body)
    tool_messages = [m for m in answer_body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["tool_call_id"] == "call_2"
    assert "notes.txt" in tool_messages[-1]["content"]


async def test_run_and_collect_returns_the_served_answer(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    assistant = litellm_assistant(fake_openai, workspace)
    reply = await assistant.run_and_collect("s1", "list the files")

    assert reply == "The workspace holds notes.txt."


def test_resolving_a_litellm_name_keeps_litellm_off_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)

    resolve_model("openai/fake-model", api_base="http://127.0.0.1:9/v1")

    # LiteLLM reads this when first imported: True means its bundled price list.
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


@pytest.mark.parametrize("name", ["nonsense-model", "nosuchprovider/x", "gemini", "openai"])
def test_unknown_model_name_raises_config_error_listing_accepted_names(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model(name)

    message = str(caught.value)
    assert "Accepted:" in message
    assert "offline" in message
    assert "gemini-2.5-flash" in message
    assert "openai/gpt-4o-mini" in message


@pytest.mark.parametrize("name", ["nonsense-model", "nosuchprovider/x"])
def test_unknown_model_name_is_named_in_the_error(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        build_agent_tree(Config(model=name))


def test_the_connection_guard_refuses_and_records_outside_hosts(
    outside_connections: list[Any],
) -> None:
    with socket.socket() as sock, pytest.raises(OSError, match="refused"):
        sock.connect(("192.0.2.1", 443))

    assert outside_connections == [("192.0.2.1", 443)]


async def test_a_trace_shows_the_prompt_tokens_the_provider_served_from_its_cache(
    workspace: Path, tmp_path: Path
) -> None:
    from fakes.openai_server import cached
    from troupe.cli.trace import render_trace
    from troupe.stores.traces import TraceStore

    script = [
        cached(0, tool_call_reply("transfer_to_agent", {"agent_name": "operator"}, "c1")),
        cached(8, text_reply("Nothing to list.")),
    ]
    store = TraceStore(tmp_path / "traces.db")
    with serve(script) as fake:
        config = Config(
            tools=operator_tools(Workspace(workspace)),
            model="openai/fake-model",
            api_base=fake.api_base,
        )
        assistant = Assistant(build_agent_tree(config), trace_store=store)
        await assistant.run_and_collect("s1", "list the files here")

    [trace] = store.list(limit=1)
    assert [c["cached_tokens"] for c in trace.model_calls] == [0, 8]
    assert trace.cached_share() == pytest.approx(8 / 20)
    console = Console(width=200, record=True)
    console.print(render_trace(trace))
    shown = console.export_text()
    assert "40% of the prompt cached" in shown and "10 in (8 cached)" in shown


def test_the_app_asks_providers_to_cache_the_prompt_unless_told_not_to() -> None:
    from troupe.runtime.app import build_app

    root = build_agent_tree(Config(model="offline"))
    assert build_app(root).context_cache_config is not None
    assert build_app(root, prompt_cache=False).context_cache_config is None


def _routed_assistant(
    fake: FakeOpenAI, workspace: Path, *, require: bool = False, schema: bool = False
) -> Assistant:
    from troupe.builtins import builtin_tools

    config = Config(
        tools=builtin_tools(workspace=workspace),
        model="openai/fake-model",
        api_base=fake.api_base,
        router="auto",
        router_require_transfer=require,
        router_agent_schema=schema,
    )
    return Assistant(build_agent_tree(config))


DEFERRED = "Find the file where we documented the deploy steps"
"""A request the router leaves to the model with a best guess."""


@pytest.mark.parametrize("require", [True, False])
async def test_a_deferred_request_makes_the_model_pick_an_agent_only_when_asked_to(
    fake_openai: FakeOpenAI, workspace: Path, require: bool
) -> None:
    fake_openai.replies[:] = [text_reply("Which process do you mean?")]
    assistant = _routed_assistant(fake_openai, workspace, require=require)

    await assistant.run_and_collect("s1", DEFERRED)

    body = fake_openai.requests[0]
    assert _tool_names(body) == ["transfer_to_agent"]
    assert body.get("tool_choice") == ("required" if require else None)


@pytest.mark.parametrize("key", ["require_transfer", "agent_schema"])
def test_the_small_model_options_come_from_the_config_files_router_section(
    tmp_path: Path, key: str
) -> None:
    from troupe.settings import load_settings

    config = tmp_path / "troupe.yaml"
    config.write_text(f"router:\n  mode: auto\n  {key}: true\n", encoding="utf-8")
    (tmp_path / "ws").mkdir()

    settings = load_settings(config_path=config, environ={}, workspace=tmp_path / "ws")

    assert getattr(settings.config, f"router_{key}") is True


async def test_with_the_agent_schema_a_deferred_request_asks_for_a_json_choice_without_tools(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    fake_openai.replies[:] = [text_reply('{"agent": "none", "answer": "Which process?"}')]
    assistant = _routed_assistant(fake_openai, workspace, schema=True)

    await assistant.run_and_collect("s1", DEFERRED)

    body = fake_openai.requests[0]
    assert _tool_names(body) == []
    # The choices are the router's best three, best first, and "none".
    root = assistant.root_agent
    assert isinstance(root, TroupeAgent) and root.troupe_router is not None
    decision = (await root.troupe_router.router()).decide(DEFERRED)
    best = [c.name for c in decision.candidates[:3]]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["agent"]["enum"] == [*best, "none"]
    assert f"one of: {', '.join(best)};" in _system_prompt(body)


async def test_a_json_choice_of_an_agent_becomes_the_transfer(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    fake_openai.replies[:] = [
        text_reply('{"agent": "operator", "answer": ""}'),
        text_reply("Port 8080 is free."),
    ]
    assistant = _routed_assistant(fake_openai, workspace, schema=True)

    events = [event async for event in assistant.run("s1", DEFERRED)]

    assert ("orchestrator", "transfer", "operator") in simplify(events)
    assert "response_format" not in fake_openai.requests[1]  # the operator's own call
    assert _tool_names(fake_openai.requests[1])  # with its tools


async def test_a_json_choice_of_none_is_the_answer_and_other_replies_stay_as_they_are(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    fake_openai.replies[:] = [
        text_reply('{"agent": "none", "answer": "Which process?"}'),
        text_reply("Plain prose, no JSON."),
    ]
    assistant = _routed_assistant(fake_openai, workspace, schema=True)

    assert await assistant.run_and_collect("s1", DEFERRED) == "Which process?"
    assert await assistant.run_and_collect("s2", DEFERRED) == "Plain prose, no JSON."


@pytest.mark.parametrize("option", ["require", "schema"])
@pytest.mark.parametrize("message", ["hello", "What is a knowledge graph, roughly?"])
async def test_greetings_and_open_questions_stay_the_models_to_answer_freely(
    fake_openai: FakeOpenAI, workspace: Path, message: str, option: str
) -> None:
    fake_openai.replies[:] = [text_reply("Hello! A knowledge graph links facts.")]
    assistant = _routed_assistant(
        fake_openai, workspace, require=option == "require", schema=option == "schema"
    )

    await assistant.run_and_collect("s1", message)

    body = fake_openai.requests[0]
    assert body.get("tool_choice") is None and "response_format" not in body
    assert _tool_names(body) == ["transfer_to_agent"]


async def test_a_streamed_json_choice_never_reaches_the_user_as_text(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    fake_openai.replies[:] = [
        text_reply('{"agent": "operator", "answer": ""}'),
        text_reply("Port 8080 is free."),
    ]
    routed = _routed_assistant(fake_openai, workspace, schema=True)
    assistant = Assistant(routed.root_agent, stream=True)

    events = [event async for event in assistant.run("s1", DEFERRED)]

    texts = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    assert not any('"agent"' in text for text in texts)
    assert ("orchestrator", "transfer", "operator") in simplify(events)


async def test_choices_whose_call_failed_are_not_kept_past_a_bound(
    fake_openai: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from troupe.routing import fastpath

    monkeypatch.setattr(fastpath, "MAX_PENDING_CHOICES", 2)
    fake_openai.replies[:] = [failure(400)] * 3  # never retried, never answered
    assistant = _routed_assistant(fake_openai, workspace, schema=True)
    root = assistant.root_agent
    assert isinstance(root, TroupeAgent) and root.troupe_router is not None

    for session in ("s1", "s2", "s3"):
        with pytest.raises(Exception):  # noqa: B017 - the scripted failure, whatever wraps it
            await assistant.run_and_collect(session, DEFERRED)

    assert len(root.troupe_router._schema_calls) == 2
