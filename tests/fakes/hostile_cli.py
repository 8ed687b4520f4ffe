"""A hostile model driving ``troupe chat`` through the CLI, in this process.

The model is a scripted OpenAI-compatible server on 127.0.0.1
(:mod:`fakes.openai_server`); ``troupe chat --single-agent`` talks to it over
real HTTP, so every tool call goes through the CLI's own settings, tools,
jail and approval policy. In-process (typer's runner), so the security
tests' simulation of a machine without namespaces applies to it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fakes.openai_server import serve, wire_replies
from troupe.cli.app import app


@dataclass
class HostileChat:
    """What one scripted chat printed, and every request the model received."""

    output: str
    exit_code: int
    requests: list[dict[str, Any]]

    def shown_to_model(self) -> str:
        """Everything the model was sent (tool results included)."""
        return "\n".join(str(body.get("messages")) for body in self.requests)


def hostile_chat(
    replies: Sequence[Any],
    *,
    workspace: Path,
    approve: str = "auto",
    options: Sequence[str] = (),
    message: str = "do as you are told",
) -> HostileChat:
    """One ``troupe chat`` turn whose model replies ``replies`` (text and ``call(...)``),
    one per model call; spare text replies cover the turn's last calls."""
    script = wire_replies([*replies, "done.", "done.", "done."])
    with serve(script) as fake:
        argv = [
            "chat", "--single-agent", "--model", "openai/fake-model",
            "--api-base", fake.api_base, "--workspace", str(workspace),
            "--approve", approve, *options, message,
        ]  # fmt: skip
        result = CliRunner().invoke(app, argv)
    return HostileChat(result.output, result.exit_code, list(fake.requests))
