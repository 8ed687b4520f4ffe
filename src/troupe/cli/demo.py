"""``troupe demo``: a scripted session in a scratch workspace."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from ..builtins import builtin_tools
from ..config import Config
from ..models.resolve import model_label
from ..runtime.assistant import Assistant
from ..runtime.events import steps
from ..tree import build_agent_tree
from .render import path_summary, render_step

DEMO_MESSAGES = (
    "hello",
    "list the files here",
    "read notes.txt",
    "run `uname -a`",
    "plan the release: write the changelog, then tag it",
)


async def run_demo(console: Console, *, model: str) -> bool:
    """Run DEMO_MESSAGES through the full tree; True when every turn answered."""
    with tempfile.TemporaryDirectory(prefix="troupe-demo-") as tmp:
        workspace = Path(tmp)
        (workspace / "notes.txt").write_text("troupe demo: the operator read this file.\n")
        (workspace / "data").mkdir()
        (workspace / "data" / "numbers.csv").write_text("a,b\n1,2\n")
        data_dir = Path(tempfile.mkdtemp(prefix="troupe-demo-data-"))
        tools = builtin_tools(workspace=workspace, data_dir=data_dir)
        root = build_agent_tree(Config(tools=tools, model=model))
        assistant = Assistant(root)
        console.print(f"[bold]troupe demo[/] · model {model_label(getattr(root, 'model', ''))}")
        console.print(f"[dim]agents: {', '.join(a.name for a in root.sub_agents)}[/]")
        ok = True
        for message in DEMO_MESSAGES:
            console.print(Rule(f"you: {message}", align="left"))
            done = []
            async for event in assistant.run("demo", message):
                for step in steps(event):
                    done.append(step)
                    render_step(console, step)
            if not done or done[-1].kind != "text":
                ok = False
            console.print(f"[dim]path: {path_summary(done)}[/]")
        return ok
