"""Traces of each turn, the trace CLI, and the per-turn timeout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

import troupe
from fakes.scripted import scripted_assistant
from troupe.cli.app import app
from troupe.runtime.tracing import mask_args
from troupe.stores.traces import TraceStore
from troupe.testing import ScriptedModel, call


async def test_turn_trace_records_path_model_and_tool_calls(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="browser_agent"),
            call("browser_navigate", url="https://example.com"),
            "read it",
        ]
    )
    assistant = scripted_assistant(model, trace_store=store)
    await assistant.run_and_collect("s1", "open https://example.com")
    trace = store.get(assistant.last_trace_id or "")
    assert trace is not None
    assert trace.path == ["orchestrator", "navigator"]
    assert trace.repairs == [["browser_agent", "navigator"]]
    assert [c["agent"] for c in trace.model_calls] == ["orchestrator", "navigator", "navigator"]
    tool = next(c for c in trace.tool_calls if c["tool"] == "browser_navigate")
    assert tool["args"] == {"url": "https://example.com"}
    assert tool["result_chars"] > 0
    assert trace.outcome == "answered"
    assert trace.answer == "read it"


async def test_stopped_turn_is_traced_as_stopped(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(replies=[call("fs_list", path=".")] * 5)
    assistant = scripted_assistant(model, trace_store=store, multi_agent=False)
    await assistant.run_and_collect("s1", "list")
    trace = store.list(limit=1)[0]
    assert trace.outcome == "stopped"
    assert trace.stop_reason and "same arguments" in trace.stop_reason


def test_secret_looking_arguments_are_masked() -> None:
    masked = mask_args("secrets_set", {"name": "gh", "value": "hunter2"})
    assert masked == {"name": "gh", "value": "***"}
    assert mask_args("exec_shell", {"command": "ls", "api_key": "k"})["api_key"] == "***"


def test_trace_list_and_show_render_stored_turns(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(replies=["hello!"])
    assistant = scripted_assistant(model, trace_store=store)
    asyncio.run(assistant.run_and_collect("chat-1", "hello"))
    runner = CliRunner()
    listed = runner.invoke(app, ["trace", "list", "--data-dir", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    assert "chat-1" in listed.output
    trace_id = store.list(limit=1)[0].id
    shown = runner.invoke(
        app, ["trace", "show", trace_id[:6], "--data-dir", str(tmp_path), "--json"]
    )
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["answer"] == "hello!"
    missing = runner.invoke(app, ["trace", "show", "nope", "--data-dir", str(tmp_path)])
    assert missing.exit_code == 1
    assert "No single trace matches" in missing.output


class _SlowTool:
    @staticmethod
    async def exec_shell(command: str) -> dict:
        """Run a shell command."""
        await asyncio.sleep(5)
        return {"stdout": "late"}


async def test_turn_over_its_time_limit_ends_with_a_clear_message(tmp_path: Path) -> None:
    model = ScriptedModel(replies=[call("exec_shell", command="sleep"), "never"])
    config = troupe.Config(
        tools=[troupe.Tool.from_function(_SlowTool.exec_shell)],
        model=model,
        multi_agent=False,
        turn_timeout_s=0.3,
    )
    store = TraceStore(tmp_path / "traces.db")
    assistant = troupe.Assistant(troupe.build_agent_tree(config), trace_store=store)
    reply = await assistant.run_and_collect("s1", "run it")
    assert "took longer than 0.3 seconds" in reply
    assert store.list(limit=1)[0].outcome == "timeout"


def test_trace_list_json_is_one_array_with_every_field(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    assistant = scripted_assistant(ScriptedModel(replies=["hi!"]), trace_store=store)
    asyncio.run(assistant.run_and_collect("chat-1", "hello"))

    listed = CliRunner().invoke(app, ["trace", "list", "--json", "--data-dir", str(tmp_path)])

    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert row["id"] == store.list(limit=1)[0].id
    assert row["session_id"] == "chat-1" and row["request"] == "hello"
    assert row["outcome"] == "answered" and row["model_calls"] >= 1
