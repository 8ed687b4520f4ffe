"""``troupe tree --check``: report which remote A2A agents answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from google.adk.agents.base_agent import BaseAgent
from rich.console import Console

from ..remote import check_remote_agents
from ..terminal_text import for_rich


def report_remote_agents(console: Console, agents: Sequence[BaseAgent]) -> bool:
    """Fetch each remote agent's card and print one line per agent; True if all answered."""
    statuses = asyncio.run(check_remote_agents(agents))
    if not statuses:
        console.print("[dim]no remote agents configured[/]")
        return True
    for status in statuses:
        if status.ok:
            console.print(
                f"[green]reachable[/]   [bold]{for_rich(status.name)}[/] "
                f"[dim]{for_rich(status.url)} · {for_rich(status.detail)}[/]"
            )
        else:
            console.print(
                f"[red]unreachable[/] [bold]{for_rich(status.name)}[/] "
                f"[dim]{for_rich(status.url)}[/]\n"
                f"            {for_rich(status.detail)}\n"
                "            Local agents keep working; turns routed to this agent fail "
                "until it is up."
            )
    return all(status.ok for status in statuses)
