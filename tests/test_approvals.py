"""Approvals: dangerous tools wait for a yes through ADK's tool confirmation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from typer.testing import CliRunner

from fakes.approvals import AskLog
from fakes.cli import unwrapped
from troupe import Assistant, Config, ConfigError, Workspace, build_agent_tree, builtin_tools
from troupe.builtins.operator import operator_tools
from troupe.builtins.shell_policy import (
    DEFAULT_DENY_COMMANDS,
    compile_deny_list,
    denied_by,
    is_read_only,
)
from troupe.cli.app import app
from troupe.runtime.approvals import (
    ApprovalPolicy,
    ApprovalRequest,
    AskUser,
    default_policy,
    is_approval_plumbing,
    parse_policy,
    run_with_approvals,
)
from troupe.runtime.assistant import visible_text
from troupe.testing import ScriptedModel, call, simplify


def _assistant(workspace: Path, replies: list[Any]) -> tuple[Assistant, ScriptedModel]:
    model = ScriptedModel(replies=replies)
    tools = operator_tools(Workspace(workspace))
    return Assistant(build_agent_tree(Config(tools=tools, model=model))), model


async def _run(
    assistant: Assistant, text: str, policy: ApprovalPolicy, ask: AskUser | None = None
) -> list[Event]:
    return [
        event async for event in run_with_approvals(assistant, "s1", text, policy=policy, ask=ask)
    ]


def _last_tool_response(request: LlmRequest) -> dict[str, Any]:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_response is not None:
                return dict(part.function_response.response or {})
    raise AssertionError("the model was shown no tool result")


WRITE_SCRIPT: list[Any] = [
    call("transfer_to_agent", agent_name="operator"),
    call("fs_write", path="out.txt", content="hello"),
    "Reported.",
]


async def test_a_declined_call_is_not_run_and_the_model_hears_the_user_declined(
    tmp_path: Path,
) -> None:
    assistant, model = _assistant(tmp_path, WRITE_SCRIPT)

    events = await _run(assistant, "write hello to out.txt", "ask", AskLog(False))

    assert not (tmp_path / "out.txt").exists()
    told = _last_tool_response(model.requests[-1])
    assert told["declined"] is True
    assert "the user declined to run fs_write" in told["error"]
    assert visible_text(events[-1]) == "Reported."
    assert model.remaining == 0


async def test_the_deny_policy_refuses_without_asking_and_says_how_to_allow(
    tmp_path: Path,
) -> None:
    assistant, model = _assistant(tmp_path, WRITE_SCRIPT)
    ask = AskLog(True)

    await _run(assistant, "write hello to out.txt", "deny", ask)

    assert ask.asked == []
    assert not (tmp_path / "out.txt").exists()
    told = _last_tool_response(model.requests[-1])
    assert "--approve ask" in told["error"]


async def test_the_auto_policy_runs_the_tool(tmp_path: Path) -> None:
    assistant, model = _assistant(tmp_path, WRITE_SCRIPT)

    events = await _run(assistant, "write hello to out.txt", "auto")

    assert (tmp_path / "out.txt").read_text() == "hello"
    assert _last_tool_response(model.requests[-1]) == {"path": "out.txt", "bytes": 5}
    shown = [s for e in events if not is_approval_plumbing(e) for s in simplify([e])]
    assert shown == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_call", "fs_write"),
        ("operator", "tool_result", "fs_write"),
        ("operator", "text", None),
    ]


async def test_ask_is_shown_the_agent_tool_and_arguments(tmp_path: Path) -> None:
    assistant, _ = _assistant(tmp_path, WRITE_SCRIPT)
    ask = AskLog(True)

    await _run(assistant, "write hello to out.txt", "ask", ask)

    assert [(r.agent, r.tool, r.args) for r in ask.asked] == [
        ("operator", "fs_write", {"path": "out.txt", "content": "hello"})
    ]
    assert (tmp_path / "out.txt").read_text() == "hello"


async def test_an_async_ask_callback_is_awaited(tmp_path: Path) -> None:
    assistant, _ = _assistant(tmp_path, WRITE_SCRIPT)

    async def ask(request: ApprovalRequest) -> bool:
        return request.tool == "fs_write"

    await _run(assistant, "write hello to out.txt", "ask", ask)

    assert (tmp_path / "out.txt").exists()


async def test_a_turn_paused_for_approval_gets_no_extra_model_call(tmp_path: Path) -> None:
    # The pause ends the first run without an answer; nothing may fill that
    # gap (a nudge, a fallback note) before the decision is sent back.
    assistant, model = _assistant(tmp_path, WRITE_SCRIPT)

    events = await _run(assistant, "write hello to out.txt", "ask", AskLog(False))

    texts = [visible_text(e) for e in events if visible_text(e)]
    assert texts == ["Reported."]
    assert len(model.requests) == 3


async def test_a_deny_listed_command_is_refused_without_asking(tmp_path: Path) -> None:
    assistant, model = _assistant(
        tmp_path,
        [
            call("transfer_to_agent", agent_name="operator"),
            call("exec_shell", command="sudo rm -rf /"),
            "Refused.",
        ],
    )
    ask = AskLog(True)

    await _run(assistant, "run `sudo rm -rf /`", "ask", ask)

    assert ask.asked == []
    told = _last_tool_response(model.requests[-1])
    assert "deny-list pattern" in told["error"]


async def test_a_read_only_command_runs_without_asking(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    assistant, model = _assistant(
        tmp_path,
        [
            call("transfer_to_agent", agent_name="operator"),
            call("exec_shell", command="cat notes.txt"),
            "Done.",
        ],
    )
    ask = AskLog(False)

    await _run(assistant, "run `cat notes.txt`", "deny", ask)

    assert ask.asked == []
    assert _last_tool_response(model.requests[-1])["stdout"] == "remember the milk\n"


async def test_a_command_that_changes_files_asks_first(tmp_path: Path) -> None:
    assistant, _ = _assistant(
        tmp_path,
        [
            call("transfer_to_agent", agent_name="operator"),
            call("exec_shell", command="touch made.txt"),
            "Not done.",
        ],
    )
    ask = AskLog(False)

    await _run(assistant, "run `touch made.txt`", "ask", ask)

    assert [(r.tool, r.args) for r in ask.asked] == [("exec_shell", {"command": "touch made.txt"})]
    assert not (tmp_path / "made.txt").exists()


def test_the_dangerous_builtins_are_those_that_change_things_go_online_or_use_a_secret(
    tmp_path: Path,
) -> None:
    tools = {t.name: t for t in builtin_tools(workspace=tmp_path, data_dir=tmp_path / "data")}

    always = {name for name, t in tools.items() if t.dangerous is True}
    by_call = {name for name, t in tools.items() if callable(t.dangerous)}

    assert always == {
        "fs_write",
        "fs_edit",
        "skill_run",
        "secrets_set",
        "secrets_delete",
        "browser_type",
    }
    assert by_call == {
        "exec_shell",
        "browser_navigate",
        "browser_screenshot",
        "crypto_encrypt",
        "crypto_decrypt",
    }


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -fr /*",
        "sudo rm -rf --no-preserve-root /",
        "/bin/rm -rf ~",
        "mkfs.ext4 /dev/sda1",
        "shutdown -h now",
        "sudo reboot",
        "systemctl poweroff",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        ":(){ :|:& };:",
        "echo ok; rm -rf /",
        "cat /dev/zero > /dev/sda",
    ],
)
def test_the_default_deny_list_catches_destructive_commands(command: str) -> None:
    assert denied_by(command, compile_deny_list(DEFAULT_DENY_COMMANDS)) is not None


@pytest.mark.parametrize(
    "command",
    ["rm -rf ./build", "ls /", "dd if=a.img of=b.img", "echo reboot", "git log", "rm -r /tmp/x"],
)
def test_the_default_deny_list_lets_ordinary_commands_through(command: str) -> None:
    assert denied_by(command, compile_deny_list(DEFAULT_DENY_COMMANDS)) is None


async def test_the_deny_list_is_configurable(tmp_path: Path) -> None:
    tools = {
        t.name: t.func
        for t in operator_tools(
            Workspace(tmp_path), deny_commands=[*DEFAULT_DENY_COMMANDS, r"^git\s+push"]
        )
    }

    result = await tools["exec_shell"]("git push origin main")

    assert "deny-list pattern `^git\\s+push`" in result["error"]


def test_a_bad_deny_pattern_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=re.escape("'(unclosed'")):
        operator_tools(Workspace(tmp_path), deny_commands=["(unclosed"])


@pytest.mark.parametrize(
    "command",
    ["uname -a", "ls -la", "pwd", "whoami", "date", "cat notes.txt", "echo hi there",
     "head -n 3 notes.txt", "wc -l notes.txt"],
)  # fmt: skip
def test_read_only_commands_need_no_approval(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    assert is_read_only(command, tmp_path)


@pytest.mark.parametrize(
    "command",
    ["touch x", "cat ../secret.key", "cat /etc/shadow", "ls; rm x", "echo $HOME",
     "cat notes.txt > copy.txt", "git push", "git diff --output=x.patch", "date -s 2020-01-01",
     "tail -f notes.txt", "echo {{secret:TOKEN}}", "uname `rm x`", "git status",
     "git log --oneline -5", "git diff HEAD~1"],
)  # fmt: skip
def test_commands_that_could_change_or_leak_need_approval(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    assert not is_read_only(command, tmp_path)


def test_an_unknown_policy_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"'maybe'.*ask, auto, deny"):
        parse_policy("maybe")


def test_the_default_policy_asks_only_at_a_terminal() -> None:
    assert default_policy(interactive=True) == "ask"
    assert default_policy(interactive=False) == "deny"


# -- the CLI -------------------------------------------------------------------


def _chat(workspace: Path, *args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(app, ["chat", "-w", str(workspace), *args], input=stdin)


def test_cli_one_shot_runs_a_read_only_command_without_a_terminal(tmp_path: Path) -> None:
    result = _chat(tmp_path, "run `uname -a`")

    assert result.exit_code == 0, result.output
    assert "exit_code: 0" in result.output
    assert "Linux" in result.output


def test_cli_one_shot_denies_by_default_without_a_terminal(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt')

    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out.txt").exists()
    flat = unwrapped(result.output)
    assert "fs_write not run" in flat
    assert "--approve ask" in flat


def test_a_piped_chat_shows_each_message_and_answer_after_its_prompt(tmp_path: Path) -> None:
    # Nothing echoes what a pipe sends: the transcript writes it after the prompt,
    # so the output reads as it did at a terminal and the next line stands alone.
    result = _chat(tmp_path, "--approve", "ask", stdin='write "hello" to out.txt\nn\n')

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert 'you> write "hello" to out.txt' in lines
    assert "allow? [y]es / [N]o / [a]lways this session: n" in lines
    assert not (tmp_path / "out.txt").exists()


def test_a_json_chat_from_a_pipe_keeps_standard_output_to_json_lines(tmp_path: Path) -> None:
    result = _chat(tmp_path, "--json", "--approve", "ask", stdin='hello\nwrite "x" to a.txt\nn\n')

    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["kind"] for r in records} >= {"text", "tool_call", "approval", "tool_result"}
    # The banner, the prompts and the lines read went to standard error.
    assert 'you> write "x" to a.txt' in result.stderr.splitlines()
    assert "resume with: troupe chat --session" in result.stderr


def test_a_declined_call_is_reported_once_not_as_a_failed_tool_result(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt')

    flat = unwrapped(result.output)
    assert flat.count("✗ fs_write not run") == 1
    assert "↳ fs_write" not in flat  # the refusal written for the model is not shown again


def test_cli_approve_auto_runs_the_tool(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt', "--approve", "auto")

    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.txt").read_text() == "hello"
    assert "fs_write approved" in result.output


def test_cli_approve_ask_shows_the_call_and_runs_it_on_yes(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt', "--approve", "ask", stdin="y\n")

    assert result.exit_code == 0, result.output
    assert "operator wants to run fs_write" in result.output
    assert "allow? [y]es / [N]o / [a]lways this session:" in result.output
    assert 'content = "hello"' in result.output
    assert (tmp_path / "out.txt").read_text() == "hello"


def test_always_allows_the_tool_for_the_rest_of_the_session_and_the_trace_shows_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    lines = 'write "one" to a.txt\na\nwrite "two" to b.txt\n/exit\n'
    args = ["--approve", "ask", "--data-dir", str(data)]

    result = _chat(tmp_path, *args, stdin=lines)

    assert result.exit_code == 0, result.output
    assert (tmp_path / "a.txt").read_text() == "one" and (tmp_path / "b.txt").read_text() == "two"
    assert result.output.count("allow?") == 1
    assert result.output.count("(allowed for this session)") == 2
    listed = CliRunner().invoke(app, ["trace", "list", "--json", "--data-dir", str(data)])
    newest = json.loads(listed.output)[0]["id"]
    shown = CliRunner().invoke(app, ["trace", "show", newest, "--data-dir", str(data)])
    assert "allowed for this session: fs_write" in shown.output


def test_cli_approve_ask_declines_on_no(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt', "--approve", "ask", stdin="n\n")

    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out.txt").exists()
    assert "the user declined to run fs_write" in unwrapped(result.output)


def test_cli_json_output_records_the_decision(tmp_path: Path) -> None:
    result = _chat(tmp_path, 'write "hello" to out.txt', "--json", "--approve", "deny")

    records = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    approvals = [r for r in records if r["kind"] == "approval"]
    assert [(r["author"], r["name"]) for r in approvals] == [("operator", "fs_write")]
    assert json.loads(approvals[0]["text"])["approved"] is False
    assert not any(r["name"] == "adk_request_confirmation" for r in records)


def test_cli_rejects_an_unknown_approval_policy(tmp_path: Path) -> None:
    result = _chat(tmp_path, "hello", "--approve", "maybe")

    assert result.exit_code == 2
    assert "'maybe'" in result.output
