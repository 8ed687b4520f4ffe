"""``troupe chat`` streams the replies of a model that streams (LiteLLM, the fake server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.openai_server import serve, text_reply, tool_call_reply
from troupe.cli.app import app

REPLY = "The workspace holds notes.txt and nothing else."


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def _chat(tmp_path: Path, api_base: str, *extra: str) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("milk\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "chat", "--model", "openai/streamer", "--api-base", api_base,
            "--workspace", str(workspace), *extra, "what is in the workspace?",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def _script() -> list[dict[str, object]]:
    return [
        tool_call_reply("transfer_to_agent", {"agent_name": "operator"}, "c1"),
        tool_call_reply("fs_list", {"path": "."}, "c2"),
        text_reply(REPLY),
    ]


def test_chat_asks_for_a_stream_and_prints_the_reply_once(tmp_path: Path) -> None:
    with serve(_script()) as fake:
        out = _chat(tmp_path, fake.api_base)

    assert all(body.get("stream") is True for body in fake.requests)
    assert out.count(REPLY) == 1, out
    assert f"operator: {REPLY}" in out
    assert "operator → fs_list" in out  # tool calls still arrive whole


def test_chat_json_output_keeps_one_object_a_step_without_streaming(tmp_path: Path) -> None:
    with serve(_script()) as fake:
        out = _chat(tmp_path, fake.api_base, "--json")

    assert not any(body.get("stream") for body in fake.requests)
    assert out.count(REPLY) == 1


async def test_a_streaming_assistant_yields_the_reply_in_pieces_then_whole(tmp_path: Path) -> None:
    from troupe import Assistant, Config, build_agent_tree
    from troupe.builtins import Workspace, operator_tools
    from troupe.runtime.events import partial_text, steps

    (tmp_path / "notes.txt").write_text("milk\n", encoding="utf-8")
    with serve(_script()) as fake:
        config = Config(
            tools=operator_tools(Workspace(tmp_path)),
            model="openai/streamer",
            api_base=fake.api_base,
        )
        assistant = Assistant(build_agent_tree(config), stream=True)
        events = [event async for event in assistant.run("s1", "what is in the workspace?")]

    pieces = [partial_text(e) for e in events if partial_text(e)]
    assert len(pieces) > 1 and "".join(pieces) == REPLY
    finals = [s.text for e in events for s in steps(e) if s.kind == "text"]
    assert finals == [REPLY]
