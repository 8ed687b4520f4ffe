"""Names troupe prints that someone else chose: the model's, the session's, the config's.

The attack: a config's ``model:`` (or ``--session``, or a session store's
path) carrying an OSC sequence and Rich markup reached the terminal raw
through the REPL's banner. Every such print path goes through the one
renderer (:func:`troupe.terminal_text.for_rich`): control characters shown
escaped, ``[markup]`` shown as written.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from fakes.terminal_escapes import PAYLOAD, SHOWN, raw_escapes, shown_escaped
from troupe import Assistant, Config, build_agent_tree
from troupe.cli import serve as serve_cli
from troupe.cli.app import app
from troupe.cli.session import ChatSession
from troupe.models.resolve import model_label

MARKUP = "[red]boom[/red][link=https://example.invalid]click[/link]"
"""Rich markup that would colour text or plant a link if it were interpreted."""
NAME = f"evil {PAYLOAD} {MARKUP}"


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(
        file=out, force_terminal=True, color_system="truecolor", width=400, highlight=False
    )
    return console, out


def _unstyled(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _check(output: str) -> None:
    raw = output.encode("utf-8")
    assert raw_escapes(raw) == []
    assert shown_escaped(raw, SHOWN[:2]) == []
    assert MARKUP in _unstyled(output)  # shown as written, not interpreted
    assert "\x1b]8;" not in output  # no hyperlink escape from [link=...]


def test_the_repl_banner_shows_a_hostile_model_name_and_session_id_escaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    console, out = _terminal()
    assistant = Assistant(build_agent_tree(Config(tools=[], model="offline")))
    chat = ChatSession(
        assistant, f"s-{NAME}", console, False, model_label(f"openai/{NAME}"), "deny"
    )

    def end_of_input(prompt: str = "") -> str:  # input()'s own signature
        raise EOFError

    monkeypatch.setattr("builtins.input", end_of_input)
    chat.repl()

    banner, resume = out.getvalue().splitlines()[0], out.getvalue().splitlines()[-1]
    assert "troupe" in banner and "chat" in banner and "resume with" in resume
    _check(banner)
    _check(resume)


def test_troupe_tree_shows_a_hostile_model_name_escaped() -> None:
    result = CliRunner().invoke(app, ["tree", "--model", f"openai/{NAME}"])

    assert result.exit_code == 0, result.output
    _check(result.output)


def test_the_serve_banner_shows_a_config_s_session_store_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / f"store {PAYLOAD.replace('/', '_')} {MARKUP.replace('/', '_')}"
    folder.mkdir()
    console, out = _terminal()
    monkeypatch.setattr(serve_cli, "console", console)
    monkeypatch.setattr("uvicorn.run", lambda *args, **kwargs: None)

    result = CliRunner().invoke(
        app, ["serve", "--port", "0", "--session-store", f"sqlite:///{folder}/sessions.db"]
    )

    assert result.exit_code == 0, result.output
    shown = out.getvalue()
    assert "sessions:" in shown
    raw = shown.encode("utf-8")
    assert raw_escapes(raw) == []
    assert shown_escaped(raw, SHOWN[:2]) == []
    assert "[red]boom[_red]" in _unstyled(shown)
