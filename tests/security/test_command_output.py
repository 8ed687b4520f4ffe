"""A command that floods its output: troupe keeps the limit, drops the rest, and says so."""

from __future__ import annotations

from fakes.containment import a_person_says_yes
from fakes.tool_runs import call_tool
from troupe import Tool

FLOOD_BYTES = 50_000_000


async def test_a_command_printing_far_over_the_limit_returns_cut_output_with_a_note(
    tools: list[Tool],
) -> None:
    command = f"head -c {FLOOD_BYTES} /dev/zero | tr '\\0' a; echo done >&2"

    run = await call_tool(
        tools, "exec_shell", {"command": command}, policy="auto", ask=a_person_says_yes
    )

    assert run.response["exit_code"] == 0
    assert run.response["stdout"] == "a" * 20_000
    assert run.response["stderr"] == "done\n"
    assert run.response["truncated"] is True
    note = run.response["note"]
    assert "output cut at 20000 characters" in note and f"wrote {FLOOD_BYTES} bytes" in note
