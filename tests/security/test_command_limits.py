"""A command that grabs processes, memory, files or output: each is bounded and the turn goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

import troupe
from fakes.containment import a_person_says_yes, check_contained, jail_active
from fakes.tool_runs import call_tool
from troupe import Tool, builtin_tools
from troupe.builtins._limits import CommandLimits

FLOOD_BYTES = 50_000_000


async def test_a_command_starting_thousands_of_processes_is_held_at_the_limit(
    workspace: Path, data_dir: Path
) -> None:
    tools = builtin_tools(
        workspace=workspace, data_dir=data_dir, shell_limits=CommandLimits(processes=64)
    )
    # The inner shell gives up at the first fork refused; its sleeps still run, and the
    # outer one counts them with builtins alone (any fork of its own would be refused too).
    command = (
        "sh -c 'for i in $(seq 3000); do sleep 30 & done' 2>/dev/null; set -- /proc/[0-9]*; echo $#"
    )

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="auto")

    if jail_active():
        assert run.response["exit_code"] == 0, run.response
        assert 32 <= int(run.response["stdout"]) <= 64  # the jail's init and shell included
    else:  # unjailed the count would be the whole user's, so it is never run unasked
        check_contained(run, "auto", leaked="exit_code" in run.response)


@pytest.mark.parametrize(
    ("limits", "grab", "refusal"),
    [
        (CommandLimits(memory_mb=512), "b = bytearray(2 * 1024**3)", "MemoryError"),
        (
            CommandLimits(open_files=100),
            "fs = [open('/dev/null') for _ in range(5000)]",
            "Too many open files",
        ),
    ],
    ids=["a large allocation", "thousands of open files"],
)
async def test_a_command_over_its_memory_or_file_limit_fails_cleanly_and_the_turn_goes_on(
    workspace: Path, data_dir: Path, limits: CommandLimits, grab: str, refusal: str
) -> None:
    tools = builtin_tools(workspace=workspace, data_dir=data_dir, shell_limits=limits)
    command = f'python3 -c "{grab}" || echo refused'

    run = await call_tool(
        tools, "exec_shell", {"command": command}, policy="auto", ask=a_person_says_yes
    )

    assert refusal in run.response["stderr"]
    assert run.response["stdout"] == "refused\n"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("max_processes: 1000000", "max_processes"),
        ("max_memory_mb: 1", "max_memory_mb"),
        ("max_open_files: 10", "max_open_files"),
    ],
)
def test_a_resource_limit_out_of_bounds_is_refused_naming_it(
    tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "troupe.yaml"  # outside the workspace, so its shell section counts
    path.write_text(f"shell:\n  {line}\n", encoding="utf-8")
    (tmp_path / "ws").mkdir()

    with pytest.raises(troupe.ConfigError, match=field):
        troupe.load_config(path, workspace=tmp_path / "ws")


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
