"""Ctrl-C and Ctrl-D at a real terminal: a turn is cancelled and the chat goes on;
at the prompt Ctrl-C clears the line, and Ctrl-D leaves with the resume line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.terminal import Terminal, chat_dirs
from troupe.cli.app import app

CTRL_C, CTRL_D = "\x03", "\x04"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return chat_dirs(tmp_path)


def _traces(data_dir: Path) -> list[dict[str, object]]:
    listed = CliRunner().invoke(app, ["trace", "list", "--json", "--data-dir", str(data_dir)])
    assert listed.exit_code == 0, listed.output
    rows: list[dict[str, object]] = json.loads(listed.output)
    return rows


def _cancel_at(term: Terminal, message: str, *, approve: bool) -> None:
    """Send ``message``; Ctrl-C at its approval question, or once the call was approved."""
    term.expect(b"you>")
    term.type(message + "\r")
    term.expect(b"allow?")
    if approve:
        term.type("y\r")
        term.expect(b"exec_shell approved")
    term.type(CTRL_C)
    term.expect(b"turn cancelled", within=30)
    term.expect(b"you>", count=2)


def test_ctrl_c_during_a_shell_command_cancels_the_turn_and_the_next_message_runs(
    dirs: tuple[Path, Path],
) -> None:
    workspace, data_dir = dirs
    term = Terminal(workspace, data_dir, "--approve", "ask")
    try:
        _cancel_at(term, "run `sleep 60 && touch finished`", approve=True)
        assert b"Traceback" not in term.seen and b"never retrieved" not in term.seen
        term.type("list the files\r")
        term.expect(b"notes.txt", within=60)
        term.expect(b"you>", count=3)
        assert b"Traceback" not in term.seen and b"never retrieved" not in term.seen
    finally:
        term.close()
    assert term.proc.returncode == 0
    assert not (workspace / "finished").exists()
    newest, cancelled = _traces(data_dir)[:2]
    assert newest["outcome"] == "answered" and newest["request"] == "list the files"
    assert cancelled["outcome"] == "cancelled"
    assert cancelled["request"] == "run `sleep 60 && touch finished`"


def test_ctrl_c_at_the_approval_question_cancels_the_turn(dirs: tuple[Path, Path]) -> None:
    workspace, data_dir = dirs
    term = Terminal(workspace, data_dir, "--approve", "ask")
    try:
        _cancel_at(term, "run `touch made`", approve=False)
        term.type("hello\r")
        term.expect(b"you>", count=3)
    finally:
        term.close()
    assert not (workspace / "made").exists()
    assert [t["outcome"] for t in _traces(data_dir)][:2] == ["answered", "cancelled"]


def test_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_leaves_with_the_resume_line(
    dirs: tuple[Path, Path],
) -> None:
    term = Terminal(*dirs)
    try:
        term.expect(b"you>")
        term.type("half a thought")
        # As a person does: Ctrl-C once the line shows and the prompt waits.
        term.expect(b"half a thought")
        term.wait_until_idle()
        term.type(CTRL_C)
        term.expect(b"the line was cleared", within=30.0)
        term.expect(b"you>", count=2)
        term.wait_until_idle()  # the prompt shows before readline waits for a key
        term.type(CTRL_C)
        term.expect(b"you>", count=3, within=30.0)
        term.type(CTRL_D)
        term.expect(b"resume with: troupe chat --session chat-")
        assert term.exit_code() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()
    assert b"half a thought" not in term.seen.split(b"the line was cleared")[1]
    assert b"Traceback" not in term.seen
    assert _traces(dirs[1]) == []  # the cleared line never became a turn


def test_ctrl_c_during_a_one_shot_message_exits_130_with_the_turn_cancelled(
    dirs: tuple[Path, Path],
) -> None:
    workspace, data_dir = dirs
    term = Terminal(workspace, data_dir, "--approve", "ask", "run `sleep 60`")
    try:
        term.expect(b"allow?")
        term.type("y\r")
        term.expect(b"exec_shell approved")
        term.type(CTRL_C)
        assert term.exit_code() == 130
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert b"turn cancelled" in term.seen and b"Traceback" not in term.seen
    assert _traces(data_dir)[0]["outcome"] == "cancelled"
