"""``troupe tree --check``: report which remote A2A agents answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from google.adk.agents.base_agent import BaseAgent
from rich.console import Console
from rich.markup import escape

from ..remote import check_remote_agents


def report_remote_agents(console: Console, agents: Sequence[BaseAgent]) -> bool:
    """Fetch each remote agent's card and print one line per agent; True if all answered."""
    statuses = asyncio.run(check_remote_agents(agents))
    if not statuses:
        console.print("[dim]no remote agents configured[/]")
        return True
    for status in statuses:
        if status.ok:
            console.print(
                f"[green]reachable[/]   [bold]{escape(status.name)}[/] "
                f"[dim]{escape(status.url)} · {escape(status.detail)}[/]"
            )
        else:
            console.print(
                f"[red]unreachable[/] [bold]{escape(status.name)}[/] [dim]{escape(status.url)}[/]\n"
                f"            {escape(status.detail)}\n"
                "            Local agents keep working; turns routed to this agent fail "
                "until it is up."
            )
    return all(status.ok for status in statuses)
