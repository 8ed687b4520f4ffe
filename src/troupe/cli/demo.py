"""``troupe demo``: a scripted session in a scratch workspace."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from ..builtins import browser_unavailable_reason, builtin_tools
from ..builtins.browser_session import close_shared_browser
from ..config import Config
from ..models.clients import close_model_clients
from ..models.resolve import model_label
from ..runtime.assistant import Assistant
from ..runtime.events import steps
from ..terminal_text import for_rich
from ..tree import build_agent_tree
from .render import path_summary, render_step

DEMO_MESSAGES = (
    "hello",
    "list the files here",
    "read notes.txt",
    "run `uname -a`",
    "plan the release: write the changelog, then tag it",
)
PAGE_MESSAGE = "open {url} and read the page"
"""Sent after DEMO_MESSAGES when the navigator is available, with a page served locally."""
DEMO_PAGE = """<!doctype html>
<html><head><title>Release notes</title></head>
<body><h1>Release 0.1</h1><p>The navigator read this page in headless Chromium.</p>
<a href="/changes.html">All changes</a></body></html>
"""


async def run_demo(
    console: Console,
    *,
    model: str,
    chromium: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Run DEMO_MESSAGES through the full tree; True when every turn answered.

    When the navigator has its browser, a last turn reads a page served on
    127.0.0.1 from the scratch workspace; otherwise the demo says why it is left out.
    """
    with tempfile.TemporaryDirectory(prefix="troupe-demo-") as tmp:
        workspace = Path(tmp)
        (workspace / "notes.txt").write_text("troupe demo: the operator read this file.\n")
        (workspace / "data").mkdir()
        (workspace / "data" / "numbers.csv").write_text("a,b\n1,2\n")
        site = workspace / "site"
        site.mkdir()
        (site / "index.html").write_text(DEMO_PAGE)
        data_dir = Path(tempfile.mkdtemp(prefix="troupe-demo-data-"))
        # The demo's own page is served on 127.0.0.1, which the navigator refuses
        # unless it is allowed, as here.
        tools = builtin_tools(
            workspace=workspace,
            data_dir=data_dir,
            browser_allow_hosts=["127.0.0.1"],
            environ=environ,
            chromium=chromium,
        )
        root = build_agent_tree(Config(tools=tools, model=model))
        assistant = Assistant(root)
        agents = [a.name for a in root.sub_agents]
        console.print(
            f"[bold]troupe demo[/] · model {for_rich(model_label(getattr(root, 'model', '')))}"
        )
        console.print(f"[dim]agents: {for_rich(', '.join(agents))}[/]")
        if (reason := browser_unavailable_reason(chromium)) is not None:
            console.print(f"[dim]navigator left out: {for_rich(reason)}[/]")
        try:
            with _serve(site) as url:
                messages = list(DEMO_MESSAGES)
                if "navigator" in agents:
                    messages.append(PAGE_MESSAGE.format(url=url))
                results = [await _turn(console, assistant, message) for message in messages]
        finally:
            await close_shared_browser()
            await close_model_clients()
        return all(results)


async def _turn(console: Console, assistant: Assistant, message: str) -> bool:
    """Send one message, printing each step; True when the turn ended with text."""
    console.print(Rule(f"you: {message}", align="left"))
    done = []
    async for event in assistant.run("demo", message):
        for step in steps(event):
            done.append(step)
            render_step(console, step)
    console.print(f"[dim]path: {for_rich(path_summary(done))}[/]")
    return bool(done) and done[-1].kind == "text"


@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) while the block runs; yields its URL."""
    handler = partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Keep the demo's output to the agents' steps."""
