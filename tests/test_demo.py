"""`troupe demo`: every scripted turn reaches its agent and ends with an answer."""

from __future__ import annotations

from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app


def test_the_demo_routes_every_message_and_reads_a_local_page_in_the_browser() -> None:
    result = CliRunner().invoke(app, ["demo"])

    text = unwrapped(result.output)
    assert result.exit_code == 0, result.output
    assert "agents: operator, navigator, vault, librarian, planner, chronicler" in text
    for path in (
        "path: orchestrator → answer",
        "path: orchestrator → operator → fs_list → answer",
        "path: orchestrator → operator → fs_read → answer",
        "path: orchestrator → operator → exec_shell → answer",
        "path: orchestrator → planner → answer",
        "path: orchestrator → navigator → browser_navigate → answer",
    ):
        assert path in text
    assert "The navigator read this page in headless Chromium." in text
