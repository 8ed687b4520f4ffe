"""Nothing a model, a file or a server writes reaches the terminal as escape codes.

A hostile model (over a real OpenAI-compatible HTTP server), a file it reads
and an MCP server's tool description carry an OSC 52 clipboard write, a
window-title change, a CSI that erases the line, a carriage return and the
one-byte C1 forms. Every path that prints them (the chat reply and tool
previews at a real pty, the approval prompt there, ``troupe trace list`` and
``show``, a failed turn's error line, ``troupe tree --check``) is captured as
bytes: none arrives raw, and each appears visibly escaped.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fakes.openai_server import failure, serve, text_reply, tool_call_reply
from fakes.terminal_escapes import PAYLOAD, SHOWN, SHOWN_AS_JSON, raw_escapes, shown_escaped
from troupe.cli.app import app
from troupe.terminal_text import visible

FAKE_SERVER = str(Path(__file__).resolve().parent.parent / "fakes" / "mcp_server.py")
COMMAND = f"echo 'CMD {PAYLOAD}' > /dev/null"
REPLY = f"REPLY {PAYLOAD}"
FILE_TEXT = f"FILE {PAYLOAD}"
QUESTION = f"USER {PAYLOAD}"
PTY_DEADLINE_S = 120
CLIPBOARD_NAME = "\x1b]52;c;aGk=\x07"
"""An OSC 52 write, as it can stand in a folder's name (no slash)."""


@dataclass
class PtyChat:
    """One ``troupe chat`` turn at a pty, and where it left its data."""

    output: bytes
    data_dir: Path
    env: dict[str, str]


def _cli_env(data_dir: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TROUPE_")}
    env.update(
        TROUPE_DATA_DIR=str(data_dir),
        TROUPE_ROUTER="off",
        XDG_CACHE_HOME=str(cache),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
        COLUMNS="400",
        LINES="50",
    )
    return env


def _run_at_a_pty(argv: list[str], env: dict[str, str], answer: bytes) -> bytes:
    """Run ``argv`` with a pty as its terminal; type ``answer`` at the approval prompt."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    output = b""
    answered = False
    deadline = time.monotonic() + PTY_DEADLINE_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal: it has exited
                break
            if not chunk:
                break
            output += chunk
            if not answered and b"allow?" in output:
                os.write(master, answer)
                answered = True
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
    return output


@pytest.fixture(scope="module")
def pty_chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PtyChat]:
    """A hostile model reads a file, asks to run a command (refused at the prompt)
    and answers, all through ``troupe chat --approve ask`` at a real terminal."""
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "evil.txt").write_text(FILE_TEXT, encoding="utf-8")
    data_dir = tmp_path_factory.mktemp("data")
    env = _cli_env(data_dir, tmp_path_factory.mktemp("cache"))
    script = [
        tool_call_reply("fs_read", {"path": "evil.txt"}, "call_0"),
        tool_call_reply("exec_shell", {"command": COMMAND, "env": {"A": "1"}}, "call_1"),
        text_reply(REPLY),
        text_reply(REPLY),
    ]
    with serve(script) as fake:
        argv = [
            sys.executable, "-m", "troupe", "chat", "--single-agent",
            "--model", "openai/fake-model", "--api-base", fake.api_base,
            "--workspace", str(workspace), "--approve", "ask", QUESTION,
        ]  # fmt: skip
        output = _run_at_a_pty(argv, env, b"n\n")
    yield PtyChat(output, data_dir, env)


def test_chat_at_a_pty_passes_no_escape_sequence_raw(pty_chat: PtyChat) -> None:
    assert b"allow?" in pty_chat.output, pty_chat.output.decode("utf-8", "replace")
    assert raw_escapes(pty_chat.output) == []


def _line(output: bytes, marker: bytes) -> bytes:
    """The last line of ``output`` that holds ``marker``, with its CR LF."""
    start = output.rindex(marker)
    end = output.find(b"\n", start)
    return output[output.rfind(b"\n", 0, start) + 1 : end + 1 if end >= 0 else None]


def test_a_model_reply_is_shown_escaped_at_a_pty(pty_chat: PtyChat) -> None:
    reply = _line(pty_chat.output, b"REPLY")

    assert raw_escapes(reply) == []
    assert shown_escaped(reply, (f"REPLY start {SHOWN[0]}", *SHOWN)) == []


def test_a_file_s_content_in_the_tool_result_preview_is_shown_escaped(
    pty_chat: PtyChat,
) -> None:
    preview = _line(pty_chat.output, "↳ fs_read".encode())

    assert raw_escapes(preview) == []
    assert shown_escaped(preview, (f"FILE start {SHOWN_AS_JSON[0]}",)) == []


def test_the_approval_prompt_shows_the_exact_command_escaped(pty_chat: PtyChat) -> None:
    output = pty_chat.output
    prompt = output[output.index(b"wants to run") : output.index(b"allow?")]

    # The arguments as JSON, every control character escaped; the effect as repr.
    forms = (
        f"command = {json.dumps(COMMAND)}",
        f"effect: run {visible(repr(COMMAND))}",
        f"CMD start {SHOWN_AS_JSON[0]}",
    )
    assert raw_escapes(prompt) == []
    assert shown_escaped(prompt, forms) == []


def test_trace_list_and_show_show_the_turn_escaped(pty_chat: PtyChat) -> None:
    listed = _troupe(pty_chat, "trace", "list")
    # The question's trace (the turn resumed by the approval is the same trace).
    shown = b"".join(_troupe(pty_chat, "trace", "show", id) for id in _trace_ids(pty_chat))

    for output in (listed, shown):
        assert raw_escapes(output) == [], output
    assert shown_escaped(listed, (f"USER start {SHOWN[0]}",)) == []
    expected = (f"request: USER start {SHOWN[0]}", f"answer: REPLY start {SHOWN[0]}", *SHOWN)
    assert shown_escaped(shown, expected) == []


def _troupe(chat: PtyChat, *args: str) -> bytes:
    """What ``troupe ARGS`` prints on the chat's data directory, as bytes."""
    command = [sys.executable, "-m", "troupe", *args]
    return subprocess.run(command, env=chat.env, capture_output=True, check=True).stdout


def _trace_ids(chat: PtyChat) -> list[str]:
    """The ids ``troupe trace list --json`` gives, the question's first."""
    traces = json.loads(_troupe(chat, "trace", "list", "--json"))
    question = [t["id"] for t in traces if "USER" in t["request"]]
    assert question, traces
    return [*question, *(t["id"] for t in traces if t["id"] not in question)]


def test_trace_show_and_list_json_are_exact_json_with_the_escapes_json_escaped(
    pty_chat: PtyChat,
) -> None:
    question = _trace_ids(pty_chat)[0]

    raw = _troupe(pty_chat, "trace", "show", "--json", question)
    listed = _troupe(pty_chat, "trace", "list", "--json")

    assert raw_escapes(raw) == [] and raw_escapes(listed) == []
    assert json.loads(raw)["request"] == QUESTION
    assert QUESTION in [t["request"] for t in json.loads(listed)]


def test_chat_json_output_is_exact_json_with_every_control_json_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with serve([text_reply(REPLY)]) as fake:
        result = CliRunner().invoke(
            app,
            [
                "chat", "--json", "--single-agent", "--model", "openai/fake-model",
                "--api-base", fake.api_base, "--workspace", str(tmp_path), "hello",
            ],
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert raw_escapes(result.stdout_bytes) == []
    steps = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [step["text"] for step in steps if step["kind"] == "text"] == [REPLY]
    assert shown_escaped(result.stdout_bytes, SHOWN_AS_JSON) == []


def test_a_failed_turn_s_error_line_is_shown_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with serve([failure(400, f"ERR {PAYLOAD}")] * 5) as fake:
        result = CliRunner().invoke(
            app,
            [
                "chat", "--single-agent", "--model", "openai/fake-model",
                "--api-base", fake.api_base, "--workspace", str(tmp_path), "hello",
            ],
        )  # fmt: skip

    output = result.stdout_bytes + (result.stderr_bytes or b"")
    assert b"turn failed" in output, output
    assert raw_escapes(output) == []
    assert shown_escaped(output, (SHOWN[0],)) == []


def test_an_mcp_tool_description_in_troupe_tree_is_shown_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    # Where the jail is missing the server starts only on a person's yes: given here.
    monkeypatch.setattr("troupe.cli.app.approve_unjailed_server", lambda server: True)
    config = tmp_path / "troupe.yaml"
    entry = {"name": "loud", "command": sys.executable, "args": [FAKE_SERVER, "--escapes"]}
    config.write_text(
        yaml.safe_dump({"builtin_tools": False, "mcp_servers": [{**entry, "prefix": "fs_"}]}),
        encoding="utf-8",
    )

    result = CliRunner().invoke(app, ["tree", "--check", "--config", str(config)])

    assert result.exit_code == 0, result.output
    assert b"fs_shout" in result.stdout_bytes
    assert raw_escapes(result.stdout_bytes) == []
    assert shown_escaped(result.stdout_bytes, (f"Shout. start {SHOWN[0]}", SHOWN[1])) == []


def test_a_stored_conversation_is_shown_escaped_by_sessions_list_and_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("COLUMNS", "400")
    with serve([text_reply(REPLY)]) as fake:
        chat = CliRunner().invoke(
            app,
            [
                "chat", "--single-agent", "--model", "openai/fake-model", "--session", "kept",
                "--api-base", fake.api_base, "--workspace", str(tmp_path), QUESTION,
            ],
        )  # fmt: skip
    assert chat.exit_code == 0, chat.output

    listed = CliRunner().invoke(app, ["sessions", "list"])
    shown = CliRunner().invoke(app, ["sessions", "show", "kept"])

    for result in (listed, shown):
        assert result.exit_code == 0, result.output
        assert raw_escapes(result.stdout_bytes) == []
    assert shown_escaped(listed.stdout_bytes, (f"USER start {SHOWN[0]}",)) == []
    assert shown_escaped(shown.stdout_bytes, (f"USER start {SHOWN[0]}", *SHOWN)) == []


def test_the_warning_about_a_workspace_config_file_shows_its_path_escaped(
    tmp_path: Path,
) -> None:
    # A cloned repository chooses its folder names; troupe names the folder in a warning.
    workspace = tmp_path / f"repo{CLIPBOARD_NAME}"
    workspace.mkdir()
    config = workspace / "troupe.yaml"
    config.write_text("api_base: http://127.0.0.1:9/v1\n", encoding="utf-8")
    env = _cli_env(tmp_path / "data", tmp_path / "cache")

    result = subprocess.run(
        [sys.executable, "-m", "troupe", "tree", "--config", str(config)],
        cwd=workspace,
        env=env,
        capture_output=True,
        check=True,
    )

    assert b"api_base ignored: requests go to" in result.stderr, result.stderr
    assert raw_escapes(result.stderr) == []
    assert shown_escaped(result.stderr, (f"repo{visible(CLIPBOARD_NAME)}",)) == []
