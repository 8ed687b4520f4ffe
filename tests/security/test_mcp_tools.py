"""MCP tools under --approve deny: only a tool its server marks read-only runs unasked."""

from __future__ import annotations

import sys
from pathlib import Path

from fakes.containment import a_person_says_yes, jail_active
from troupe import Assistant, Config, build_agent_tree
from troupe.mcp import McpServer, approve_unjailed_start, close_toolsets, waiting_for_approval
from troupe.runtime.approvals import ApprovalPolicy, run_with_approvals
from troupe.testing import ScriptedModel, call

FAKE_SERVER = str(Path(__file__).parent.parent / "fakes" / "mcp_server.py")


async def _call(
    tool: str, args: dict[str, str], policy: ApprovalPolicy, workspace: Path
) -> list[str]:
    """Run ``tool`` of the fake server (prefix fs_, in ``workspace``) once; the results' texts."""
    server = McpServer(
        name="files",
        command=sys.executable,
        args=[FAKE_SERVER, "--writer"],
        prefix="fs_",
        workspace=workspace,
    )
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name="operator"), call(tool, **args), "Done."]
        + ["Done."] * 2
    )
    root = build_agent_tree(Config(model=model, mcp_servers=[server]))
    for toolset in waiting_for_approval(root):  # the person said yes to its start too
        approve_unjailed_start(toolset)
    try:
        events = [
            e
            async for e in run_with_approvals(
                Assistant(root), "s1", "go", policy=policy, ask=a_person_says_yes
            )
        ]
    finally:
        await close_toolsets(root)
    return [str(r.response) for e in events for r in e.get_function_responses() if r.name == tool]


async def test_an_mcp_tool_not_marked_read_only_does_not_run_under_deny(
    workspace: Path,
) -> None:
    target = workspace / "log.txt"

    results = await _call("fs_append_line", {"path": str(target), "line": "x"}, "deny", workspace)

    assert not target.exists()
    assert results and not any("appended" in text for text in results)


async def test_an_mcp_tool_marked_read_only_runs_under_deny_when_the_server_is_jailed(
    workspace: Path,
) -> None:
    results = await _call("fs_word_count", {"text": "one two three"}, "deny", workspace)

    # Outside the jail (no namespaces) even a read-only tool asks first.
    assert any("3" in text for text in results) is jail_active()


async def test_an_approved_mcp_tool_runs(workspace: Path) -> None:
    target = workspace / "log.txt"

    await _call("fs_append_line", {"path": str(target), "line": "x"}, "auto", workspace)

    assert target.read_text(encoding="utf-8") == "x\n"
