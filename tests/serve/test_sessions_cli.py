"""``troupe chat --session`` resumes, ``troupe sessions list|show|delete`` read the store."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app


@pytest.fixture
def cli(session_store: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("TROUPE_SESSION_STORE", session_store)
    return CliRunner()


def _chat(cli: CliRunner, workspace: Path, session: str, text: str) -> None:
    result = cli.invoke(
        app, ["chat", "--session", session, "--workspace", str(workspace), "--json", text]
    )
    assert result.exit_code == 0, result.output


def _show(cli: CliRunner, session: str) -> list[dict[str, object]]:
    result = cli.invoke(app, ["sessions", "show", session, "--json"])
    assert result.exit_code == 0, result.output
    lines: list[dict[str, object]] = json.loads(result.stdout)  # one JSON array
    return lines


def test_chat_with_a_session_id_resumes_the_stored_conversation(
    cli: CliRunner, workspace: Path
) -> None:
    session = f"cli-{uuid.uuid4().hex[:8]}"
    _chat(cli, workspace, session, "hello")
    # A second command is a new process as far as troupe is concerned.
    _chat(cli, workspace, session, "list the files here")

    lines = _show(cli, session)
    said = [line["text"] for line in lines if line["kind"] == "message"]
    assert said == ["hello", "list the files here"]
    steps = [(line["author"], line["kind"], line["name"]) for line in lines]
    assert ("orchestrator", "transfer", "operator") in steps
    assert ("operator", "tool_call", "fs_list") in steps
    answers = [line["text"] for line in lines if line["kind"] == "text"]
    assert any("notes.txt" in str(text) for text in answers)


def test_sessions_show_prints_who_said_what_with_transfers_and_tool_calls(
    cli: CliRunner, workspace: Path
) -> None:
    session = f"show-{uuid.uuid4().hex[:8]}"
    _chat(cli, workspace, session, "list the files here")
    result = cli.invoke(app, ["sessions", "show", session])
    assert result.exit_code == 0, result.output
    text = unwrapped(result.stdout)
    assert "you: list the files here" in text
    assert "orchestrator → transfers to operator" in text
    assert "operator calls fs_list" in text


def test_sessions_list_names_each_stored_session(cli: CliRunner, workspace: Path) -> None:
    session = f"list-{uuid.uuid4().hex[:8]}"
    _chat(cli, workspace, session, "hello")
    result = cli.invoke(app, ["sessions", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)  # one JSON array
    mine = [row for row in rows if row["id"] == session]
    assert mine and mine[0]["user"] == "user" and mine[0]["events"] >= 2


def test_sessions_delete_asks_first_and_keeps_the_session_on_no(
    cli: CliRunner, workspace: Path
) -> None:
    session = f"keep-{uuid.uuid4().hex[:8]}"
    _chat(cli, workspace, session, "hello")
    result = cli.invoke(app, ["sessions", "delete", session], input="n\n")
    assert result.exit_code == 1
    assert "Delete session" in result.output
    assert _show(cli, session)


def test_sessions_delete_with_yes_removes_the_session(cli: CliRunner, workspace: Path) -> None:
    session = f"gone-{uuid.uuid4().hex[:8]}"
    _chat(cli, workspace, session, "hello")
    result = cli.invoke(app, ["sessions", "delete", session, "--yes"])
    assert result.exit_code == 0, result.output
    shown = cli.invoke(app, ["sessions", "show", session])
    assert shown.exit_code == 2
    assert f"No session '{session}'" in shown.output


def test_sessions_list_limit_keeps_the_most_recently_active(
    cli: CliRunner, workspace: Path
) -> None:
    older, newer = (f"{name}-{uuid.uuid4().hex[:8]}" for name in ("older", "newer"))
    _chat(cli, workspace, older, "hello")
    _chat(cli, workspace, newer, "hello")
    result = cli.invoke(app, ["sessions", "list", "--limit", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)  # one JSON array
    assert [row["id"] for row in rows] == [newer]


def test_sessions_show_prints_an_approval_as_the_question_and_the_answer(
    cli: CliRunner, workspace: Path
) -> None:
    session = f"approve-{uuid.uuid4().hex[:8]}"
    (workspace / "gone.txt").write_text("x", encoding="utf-8")
    result = cli.invoke(
        app,
        ["chat", "--session", session, "--workspace", str(workspace), "--approve", "ask",
         "--json", "run `rm gone.txt`"],
        input="y\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert not (workspace / "gone.txt").exists()

    lines = _show(cli, session)
    steps = [(line["author"], line["kind"], line["name"]) for line in lines]
    assert ("operator", "approval", "exec_shell") in steps
    assert [line["text"] for line in lines if line["kind"] == "decision"] == [
        "approved: approved by the user"
    ]
    # ADK's pause for approval is plumbing, not a tool the agent ran.
    assert all(line["name"] != "adk_request_confirmation" for line in lines)
    assert not any("requires confirmation" in str(line["text"]) for line in lines)
    shown = unwrapped(cli.invoke(app, ["sessions", "show", session]).stdout)
    assert "operator asks to run exec_shell: run 'rm gone.txt'" in shown
