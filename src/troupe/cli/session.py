"""A chat session in the terminal: one-shot messages and the REPL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..errors import TroupeError
from ..models.resolve import model_label
from ..runtime.assistant import Assistant
from ..runtime.events import Step, steps
from ..settings import load_settings
from ..tree import build_agent_tree
from .render import path_summary, render_step

EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}


@dataclass
class ChatSession:
    """An Assistant bound to one session id, printing steps as they happen."""

    assistant: Assistant
    session_id: str
    console: Console
    json_output: bool
    label: str

    @classmethod
    def open(
        cls,
        *,
        config_path: Path | None,
        model: str | None,
        workspace: Path | None,
        topology: str | None,
        single_agent: bool,
        data_dir: Path | None,
        session_id: str,
        persist: bool,
        json_output: bool,
        console: Console,
    ) -> ChatSession:
        settings = load_settings(
            config_path=config_path,
            model=model,
            workspace=workspace,
            topology=topology,
            data_dir=data_dir,
            multi_agent=False if single_agent else None,
        )
        root = build_agent_tree(settings.config)
        service = None
        if persist:
            from google.adk.sessions.sqlite_session_service import SqliteSessionService

            settings.data_dir.mkdir(parents=True, exist_ok=True)
            service = SqliteSessionService(str(settings.data_dir / "sessions.db"))
        assistant = Assistant(root, service)
        label = model_label(getattr(root, "model", "") or "")
        return cls(assistant, session_id, console, json_output, label)

    async def send(self, text: str) -> bool:
        """Send one message, printing each step; False when the turn failed."""
        done: list[Step] = []
        try:
            async for event in self.assistant.run(self.session_id, text):
                for step in steps(event):
                    done.append(step)
                    if self.json_output:
                        print(step.to_json(), flush=True)
                    else:
                        render_step(self.console, step)
        except TroupeError:
            raise
        except Exception as exc:  # a model or network failure ends the turn, not the program
            if self.json_output:
                print(
                    json.dumps(
                        {
                            "author": "troupe",
                            "kind": "error",
                            "name": type(exc).__name__,
                            "text": str(exc),
                        }
                    ),
                    flush=True,
                )
            else:
                self.console.print(f"[bold red]turn failed:[/] {type(exc).__name__}: {exc}")
            return False
        if not self.json_output and done:
            self.console.print(f"[dim]path: {path_summary(done)}[/]")
        return True

    async def repl(self) -> None:
        """Read messages until /exit or end of input."""
        self.console.print(
            f"[bold]troupe[/] chat · model {self.label} · session [cyan]{self.session_id}[/]"
            " · /exit to leave"
        )
        while True:
            try:
                text = self.console.input("[bold green]you>[/] ").strip()
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                break
            if not text:
                continue
            if text in EXIT_WORDS:
                break
            await self.send(text)
        self.console.print(f"[dim]resume with: troupe chat --session {self.session_id}[/]")
