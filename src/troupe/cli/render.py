"""Rich rendering of agent steps and trees for the terminal."""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence

from google.adk.agents.base_agent import BaseAgent
from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from ..mcp import McpServerReport
from ..models.resilient import describe_model_error
from ..routing.capabilities import capability_list
from ..runtime.events import Step
from ..terminal_text import for_rich, visible
from ..tools import Tool
from ..tree import agent_tools

_MAX_RESULT = 160


def _short(text: str, limit: int = _MAX_RESULT) -> str:
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_MAX_REASON = 400


def _preview(text: str, limit: int = _MAX_RESULT) -> str:
    """Untrusted ``text`` on one line of at most ``limit`` characters, for Rich markup."""
    return escape(_short(text, limit))


def _call_args(text: str) -> str:
    try:
        args = json.loads(text)
    except ValueError:
        return text
    if not isinstance(args, dict):
        return text
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())


def error_line(exc: BaseException) -> str:
    """One line for a failed turn: the error's kind and the first line of its message.

    Provider errors carry the provider's whole response, sometimes with a
    traceback; the first line says what went wrong. A model error no retry can
    fix (a bad key, a malformed request) is described with its fix.
    """
    if described := describe_model_error(exc):
        return described
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = _short(lines[0], 400) if lines else ""
    kind = type(exc).__name__
    return f"{kind}: {first}" if first else kind


def render_step(console: Console, step: Step) -> None:
    """Print one step as it happens: transfers, tool calls, results, text."""
    # Every text here comes from the model, a tool or a remote agent: for_rich
    # shows its control characters escaped, so none reaches the terminal.
    who = f"[bold]{for_rich(step.author)}[/]"
    if step.kind == "transfer":
        console.print(f"{who} [dim]→[/] [bold cyan]{for_rich(step.name or '')}[/]")
    elif step.kind == "tool_call":
        console.print(
            f"{who} [dim]→[/] [yellow]{for_rich(step.name or '')}[/]"
            f"([dim]{_preview(_call_args(step.text), 120)}[/])"
        )
    elif step.kind == "tool_result":
        name = for_rich(step.name or "")
        if _declined(step):
            return  # the approval decision was shown above, in the person's words
        if (reason := _failure(step)) is not None:
            # The reason whole (to a point): it is what the person needs to fix it.
            console.print(
                f"  [red]↳ {name} failed:[/] [dim]{_preview(reason, _MAX_REASON)}[/]",
                soft_wrap=True,
            )
        else:
            console.print(f"  [dim]↳ {name}: {_preview(step.text)}[/]")
    elif step.kind == "error":
        reason = step.text.strip()
        if step.author != "troupe" and step.author not in reason:
            reason = f"{step.author}: {reason}"
        # One line at any width: a wrapped error reads as several.
        console.print(f"[bold red]turn failed:[/] {for_rich(reason)}", soft_wrap=True)
    else:
        console.print(f"{who}: {for_rich(step.text.strip())}")


def _failure(step: Step) -> str | None:
    """The error a tool result reports ({"error": ...}), else None."""
    try:
        result = json.loads(step.text)
    except ValueError:
        return None
    if isinstance(result, dict) and "error" in result:
        return str(result["error"])
    return None


def _declined(step: Step) -> bool:
    """True for the result of a call nobody approved (the model's copy of the refusal)."""
    try:
        result = json.loads(step.text)
    except ValueError:
        return False
    return isinstance(result, dict) and result.get("declined") is True


def _failed(step: Step) -> bool:
    """True for a tool result that reports an error ({"error": ...})."""
    return _failure(step) is not None


def path_summary(steps: Sequence[Step]) -> str:
    """The delegation path of a turn, e.g. 'orchestrator → operator → fs_list → answer'.

    A tool call that returned an error shows as ``name (failed)``; a turn that
    failed ends with ``failed`` instead of ``answer``.
    """
    path: list[str] = []
    for step in steps:
        if not path:
            path.append(step.author)
        if (step.kind == "transfer" and step.name) or (step.kind == "tool_call" and step.name):
            path.append(step.name)
        elif step.kind == "tool_result" and _failed(step) and path[-1] == step.name:
            path[-1] = f"{step.name} (failed)"
    if any(step.kind == "error" for step in steps):
        path.append("failed")
    elif steps and steps[-1].kind == "text":
        path.append("answer")
    return " → ".join(path)


def _capabilities(
    tools: Sequence[str], servers: Sequence[McpServerReport], known: Sequence[str] = ()
) -> str:
    caps = list(known) or capability_list(tools)
    caps += [
        r.placement.capability
        for r in servers
        if r.placement.capability and r.placement.capability not in caps
    ]
    return ", ".join(caps)


def _add_servers(branch: Tree, servers: Sequence[McpServerReport], *, style: str) -> None:
    for report in servers:
        head = f"[magenta]MCP {for_rich(report.placement.server.name)}[/]"
        if report.fix:
            head += f" [dim]fix: {for_rich(report.fix)}[/]"
        node = branch.add(head)
        if not report.started:
            node.add("[dim]not started; `troupe tree --check` starts it to list its tools[/]")
        elif report.error:
            node.add(f"[red]{for_rich(report.error)}[/]")
        elif not report.tools:
            node.add("[dim]no tools[/]")
        for name in report.tools:
            line = f"[{style}]{for_rich(name)}[/]"
            if name in report.renamed:
                line += f" [dim](renamed from {for_rich(report.renamed[name])})[/]"
            # The server wrote the description: shown, never interpreted.
            if description := report.descriptions.get(name, "").strip():
                line += f" [dim]— {_preview(description.splitlines()[0], 80)}[/]"
            node.add(line)


def agent_tree(
    root: BaseAgent,
    *,
    unmatched: Sequence[Tool],
    model_label: str,
    mcp: Sequence[McpServerReport] = (),
    prefixes: Sequence[str] = ("fs_", "browser_"),
) -> Tree:
    """A rich Tree of the agents, their tools and capabilities, and unmatched tools.

    ``mcp`` lists each MCP server's tools under the agent that gets them, and
    unmatched servers (no prefix, no agent) under ``unmatched`` with the fix.
    troupe's built-in tools that no agent of the team owns are counted on one
    line (a team of the user's own need not have them); the user's own
    unmatched tools are listed with the team's ``prefixes`` as the fix.
    """
    tree = Tree(f"[bold]{for_rich(root.name)}[/] [dim]model: {for_rich(model_label)}[/]")
    own = agent_tools(root)
    if not root.sub_agents:
        servers = [r for r in mcp if r.owner == root.name]
        caps = _capabilities(own, servers) or "no tools"
        branch = tree.add(f"[dim]{for_rich(caps)}[/]")
        for name in own:
            branch.add(f"[yellow]{for_rich(name)}[/]")
        _add_servers(branch, servers, style="yellow")
    for sub in root.sub_agents:
        tools = agent_tools(sub)
        servers = [r for r in mcp if r.owner == sub.name]
        remote = not hasattr(sub, "instruction")
        caps = _capabilities(tools, servers, getattr(sub, "capabilities", ())) or (
            sub.description or "remote agent" if remote else "no tools (reasoning only)"
        )
        kind = f" [magenta]({type(sub).__name__})[/]" if remote else ""
        # A remote agent's description comes from its card, written by its server.
        branch = tree.add(f"[bold cyan]{for_rich(sub.name)}[/]{kind} [dim]{_preview(caps, 200)}[/]")
        for name in tools:
            branch.add(f"[yellow]{for_rich(name)}[/]")
        _add_servers(branch, servers, style="yellow")
    stray = [r for r in mcp if r.owner is None]
    builtin = [t for t in unmatched if is_builtin_tool(t)]
    own_unmatched = [t for t in unmatched if not is_builtin_tool(t)]
    if own_unmatched or stray:
        such_as = " or ".join(for_rich(p) for p in prefixes[:2])
        branch = tree.add(
            "[bold red]unmatched[/] [dim](no agent owns these; rename tools "
            f"with one of the team's prefixes such as {such_as}, and give MCP servers "
            "a prefix or an agent)[/]"
        )
        for tool in own_unmatched:
            branch.add(f"[red]{for_rich(tool.name)}[/]")
        _add_servers(branch, stray, style="red")
    if builtin:
        names = ", ".join(t.name for t in builtin[:3]) + (", …" if len(builtin) > 3 else "")
        tree.add(
            f"[dim]{len(builtin)} of troupe's built-in tools ({for_rich(names)}) are on "
            "no agent of this team, so no agent can call them; set builtin_tools: false "
            "in the config to leave them out[/]"
        )
    return tree


def is_builtin_tool(tool: Tool) -> bool:
    """Whether ``tool`` is one of troupe's built-in tools (its function is troupe's)."""
    module = getattr(inspect.unwrap(tool.func), "__module__", "") or ""
    return module == "troupe.builtins" or module.startswith("troupe.builtins.")
