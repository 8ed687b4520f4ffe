"""What every ``troupe`` command shares: the consoles, log quieting, and failing cleanly."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from ..logfile import KeepOutThirdParty, OneLineFormatter, VisibleFormatter
from ..terminal_text import for_rich

if TYPE_CHECKING:
    from ..mcp import McpServer

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def quiet_logs(verbose: bool) -> None:
    """Show troupe's and ADK's logs with ``verbose``; otherwise only errors, one line each.

    Tracebacks go to the log file (``troupe.log``, see :mod:`troupe.logfile`).
    """
    root = logging.getLogger()
    if not root.handlers:  # as logging.basicConfig: leave a configured logging alone
        handler = logging.StreamHandler()
        if verbose:
            handler.setFormatter(VisibleFormatter("%(message)s"))
        else:
            handler.setFormatter(OneLineFormatter())
            handler.addFilter(KeepOutThirdParty())
        root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    if not verbose:
        for name in ("google_adk", "google.adk", "LiteLLM", "litellm", "httpx"):
            logging.getLogger(name).setLevel(logging.ERROR)
        # ADK marks its A2A and credential services experimental on every use.
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)


def fail(exc: BaseException | str) -> typer.Exit:
    """Print ``exc`` as one escaped error line; the caller raises the returned Exit (code 2).

    The message may quote a model, a server or a file: its control characters are shown.
    """
    err_console.print(f"[bold red]error:[/] {for_rich(exc)}", soft_wrap=True)
    return typer.Exit(code=2)


@contextmanager
def working(what: str) -> Iterator[None]:
    """A spinner with ``what`` on stderr while something slow runs, at a terminal
    only: piped or captured output gets nothing extra."""
    if not err_console.is_terminal:
        yield
        return
    with err_console.status(for_rich(what)):
        yield


def approve_unjailed_server(server: McpServer) -> bool:
    """Ask the person at the terminal whether the stdio MCP ``server`` may start
    outside the jail (not active here); no terminal, no start."""
    import sys

    if not sys.stdin.isatty():
        return False
    command = " ".join([server.command or "", *server.args])
    err_console.print(
        f"[bold]MCP server {for_rich(server.name)}[/] would start [bold red]OUTSIDE the "
        f"sandbox[/] (not active on this machine), with your user's privileges: "
        f"[yellow]{for_rich(command)}[/]",
        soft_wrap=True,
    )
    answer = err_console.input("start it? " + escape("[y/N]") + " ")
    return answer.strip().lower() in ("y", "yes")
