"""``troupe chat``'s REPL: line editing and history at a real terminal, its own commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.terminal import Terminal, chat_dirs
from troupe.cli.app import app
from troupe.cli.repl import command_of

UP = "\x1b[A"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return chat_dirs(tmp_path)


def test_the_up_arrow_recalls_the_last_message_at_a_terminal(dirs: tuple[Path, Path]) -> None:
    term = Terminal(*dirs)
    try:
        term.expect(b"you>")
        term.type("list the files\r")
        term.expect(b"you>", count=2)
        once = term.seen.count(b"fs_list")
        assert once >= 1
        term.type(UP + "\r")
        term.expect(b"you>", count=3)
        assert term.seen.count(b"fs_list") == 2 * once
    finally:
        term.close()


def test_the_history_outlives_the_chat_and_is_owner_only(dirs: tuple[Path, Path]) -> None:
    workspace, data_dir = dirs
    first = Terminal(workspace, data_dir)
    try:
        first.expect(b"you>")
        first.type("list the files\r")
        first.expect(b"fs_list")
        first.expect(b"you>", count=2)
    finally:
        first.close()
    history = data_dir / "chat_history"
    assert "list the files" in history.read_text(encoding="utf-8")
    assert history.stat().st_mode & 0o077 == 0

    second = Terminal(workspace, data_dir)
    try:
        second.expect(b"you>")
        second.type(UP + UP + "\r")  # the first chat's /exit, then its message
        second.expect(b"you>", count=2)
        assert b"fs_list" in second.seen
    finally:
        second.close()


def _piped(tmp_path: Path, lines: str) -> str:
    result = CliRunner().invoke(app, ["chat", "--workspace", str(tmp_path)], input=lines)
    assert result.exit_code == 0, result.output
    return result.output


def test_help_is_answered_by_the_repl_not_the_model(tmp_path: Path) -> None:
    out = _piped(tmp_path, "/help\n/exit\n")

    assert "/new" in out and "/sessions" in out and "/exit" in out
    assert "orchestrator" not in out  # no turn ran


def test_new_starts_another_session_and_sessions_lists_both(tmp_path: Path) -> None:
    out = _piped(tmp_path, "hello\n/new\nhello again\n/sessions\n/exit\n")

    header = out.split("session ", 1)[1].split()[0]
    new = out.split("new session ", 1)[1].split()[0]
    assert header != new
    listing = out.split("/sessions", 1)[-1] if "/sessions" in out else out
    assert header in listing and f"{new} (this one)" in listing
    assert f"resume with: troupe chat --session {new}" in out


def test_an_unknown_command_says_so_and_lists_the_commands(tmp_path: Path) -> None:
    out = _piped(tmp_path, "/frobnicate\n/exit\n")

    assert "unknown command /frobnicate" in out and "/help" in out


@pytest.mark.parametrize(
    ("text", "command"),
    [("/new", "/new"), ("/HELP", "/help"), ("/etc/hosts", None), ("/tmp is full", None)],
)
def test_only_a_single_slash_word_is_a_command(text: str, command: str | None) -> None:
    assert command_of(text) == command


def test_a_cold_start_shows_what_it_is_doing_at_a_terminal(dirs: tuple[Path, Path]) -> None:
    term = Terminal(*dirs, "list the files")
    try:
        term.expect(b"path:")
        assert b"starting troupe" in term.seen
    finally:
        term.proc.wait(timeout=60)
        os.close(term.master)


def test_piped_output_carries_no_spinner(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["chat", "--workspace", str(tmp_path), "hello"])

    assert result.exit_code == 0, result.output
    assert "starting troupe" not in result.output
