"""The chat prompt: line editing and a history file, and the commands the REPL answers itself.

At a terminal, lines are read through GNU readline (Python's ``readline``
module): arrow keys, Ctrl-R search and ↑ for earlier messages, kept between
runs in ``chat_history`` in the data directory (owner-only). Piped input is
read as plain lines, with no history.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TextIO

from ..terminal_text import visible

HISTORY_FILE = "chat_history"
HISTORY_LENGTH = 1000

COMMANDS: dict[str, str] = {
    "/help": "show these commands",
    "/new": "start a new session (the current one stays stored)",
    "/sessions": "list this store's recent sessions",
    "/exit": "leave (also /quit, exit, quit, Ctrl-D)",
}
"""What the REPL answers without the model, and what each does."""


def new_session_id() -> str:
    """A fresh chat session id."""
    return f"chat-{uuid.uuid4().hex[:8]}"


def command_of(text: str) -> str | None:
    """The REPL command ``text`` is (``/new``), or None for a message to the team.

    A single ``/word`` is a command; anything with a space or a second slash
    (``/etc/hosts``, ``/tmp is full, why?``) is a message.
    """
    word = text.strip()
    if word.startswith("/") and word[1:].isalpha():
        return word.lower()
    return None


def _readline() -> ModuleType | None:
    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return None
    return readline


@dataclass
class LineReader:
    """Reads the user's lines; at a terminal with editing and a persistent history."""

    history_dir: Path | None
    prompt_stream: TextIO | None = None
    """Where prompts (and, from a pipe, the lines read) are written, when not to
    standard output: standard error while standard output carries JSON."""
    _readline: ModuleType | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._readline = _readline()
        if self._readline is None or self.history_dir is None:
            return
        self._readline.set_history_length(HISTORY_LENGTH)
        with contextlib.suppress(OSError):
            self._readline.read_history_file(self.history_path)

    @property
    def history_path(self) -> str:
        assert self.history_dir is not None
        return str(self.history_dir / HISTORY_FILE)

    def read(self, prompt: str) -> str:
        """One line (EOFError at the end of input, KeyboardInterrupt on Ctrl-C)."""
        if not sys.stdin.isatty():
            return _echoed_input(prompt, self.prompt_stream)
        if self.prompt_stream is not None:
            self.prompt_stream.write(prompt)
            self.prompt_stream.flush()
            return input()
        return input(prompt)

    def save(self) -> None:
        """Write the history, readable by its owner only."""
        if self._readline is None or self.history_dir is None:
            return
        with contextlib.suppress(OSError):
            self.history_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.history_path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
            os.chmod(self.history_path, 0o600)
            self._readline.write_history_file(self.history_path)


def prompt_text(colour: bool) -> str:
    """``you> ``, green and bold at a colour terminal; readline is told the escape
    codes take no width (\\001 … \\002), so editing a long line stays aligned."""
    return _styled("you>", "1;32", " ", colour)


ALLOW_CHOICES = " [y]es / [N]o / [a]lways this session: "


def allow_prompt(colour: bool) -> str:
    """The approval question's prompt (colour codes only at a colour terminal)."""
    prompt = _styled("allow?", "1", ALLOW_CHOICES, colour)
    return prompt.replace("\001", "").replace("\002", "")


ANSWER_POLL_SECONDS = 0.2
"""How often a question waiting at a terminal lets a pending Ctrl-C through."""


def _echoed_input(prompt: str, stream: TextIO | None = None) -> str:
    """A line read from a pipe after ``prompt`` (written to ``stream``, standard
    output by default), then written after the prompt as a terminal would have
    echoed it: the transcript shows what was sent, and what follows starts on a
    line of its own."""
    out = stream or sys.stdout
    out.write(prompt)
    out.flush()
    line = input()
    out.write(visible(line) + "\n")
    out.flush()
    return line


def ask(prompt: str) -> str:
    """One answer typed at the terminal after ``prompt`` (EOFError on Ctrl-D).

    At a terminal the wait is a poll that wakes every :data:`ANSWER_POLL_SECONDS`:
    a Ctrl-C that lands between the prompt being printed and the wait beginning
    (under load, a real window) is acted on then, where a blocking read would sit
    on it until the next key. Bytes are read one at a time, so nothing typed
    after the answer is taken from the next prompt. Elsewhere (pipes, tests) it
    is ``input()``, the answer echoed (:func:`_echoed_input`).
    """
    if not sys.stdin.isatty():
        return _echoed_input(prompt)
    fd = sys.stdin.fileno()
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = bytearray()
    while True:
        while not select.select([fd], [], [], ANSWER_POLL_SECONDS)[0]:
            pass
        byte = os.read(fd, 1)
        if not byte:
            if not line:
                raise EOFError
            break
        if byte == b"\n":
            break
        line += byte
    return line.decode(errors="replace")


def _styled(word: str, sgr: str, rest: str, colour: bool) -> str:
    if not colour:
        return word + rest
    return f"\001\x1b[{sgr}m\002{word}\001\x1b[0m\002{rest}"
