"""No argument a model sends ends a turn: each gets a structured error naming what to fix.

The calls go through the real runner with a scripted model (and, for
``/run``, through ``troupe serve``'s app); the config checks go through the CLI.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.tool_runs import call_tool, everything_shown, served_tool_responses
from troupe import Tool
from troupe.cli.app import app as cli_app
from troupe.settings import load_settings
from troupe.testing import ScriptedModel, call

HUGE = "x" * 10_000_000

# (tool, arguments, a word the error must contain: the argument or the value at fault)
HOSTILE_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("fs_read", {"path": "~nosuchuser/x"}, "~nosuchuser/x"),
    ("fs_read", {"path": "notes.txt\x00.png"}, "path "),
    ("fs_read", {"path": ["notes.txt", "other.txt"]}, "path "),
    ("fs_write", {"path": "~nosuchuser/x", "content": "hi"}, "~nosuchuser/x"),
    ("fs_write", {"path": "big.txt", "content": HUGE}, "content "),
    ("fs_write", {"path": "n\x00.txt", "content": "hi"}, "path "),
    ("fs_write", {"path": "list.txt", "content": ["a", "b"]}, "content "),
    ("exec_shell", {"command": "echo a\x00b"}, "command "),
    ("exec_shell", {"command": ["ls", "-la"]}, "command "),
    ("exec_shell", {"command": HUGE}, "command "),
    ("crypto_hash", {"path": "~nosuchuser/x"}, "~nosuchuser/x"),
    ("crypto_hash", {"text": 12345}, "text "),
    ("crypto_hash", {"text": "a\x00b"}, "text "),
    ("memory_store", {"text": HUGE}, "text "),
    ("memory_store", {"text": {"nested": "dict"}}, "text "),
    ("memory_recall", {"limit": "ten"}, "limit "),
]


@pytest.mark.parametrize(
    ("tool", "args", "named"),
    HOSTILE_CALLS,
    ids=[f"{tool}-{i}" for i, (tool, _, _) in enumerate(HOSTILE_CALLS)],
)
async def test_a_hostile_argument_gets_a_structured_error_naming_the_fix(
    tools: list[Tool], tool: str, args: dict[str, Any], named: str
) -> None:
    run = await call_tool(tools, tool, args)

    assert set(run.response) <= {"error", "accepted"}, run.response
    assert named in run.response["error"]
    assert run.response.get("accepted")
    assert "Traceback" not in everything_shown(run)


# (tool, arguments, the argument at fault, the shape it must have): a few tools of every role.
WRONG_SHAPES: list[tuple[str, dict[str, Any], str, str]] = [
    ("exec_shell", {"command": "ls", "env": ["A=1"]}, "env", "an object"),
    ("exec_shell", {"command": "ls", "env": {"A": 1}}, "env", "values are text"),
    ("skill_run", {"name": "x", "args": "--all"}, "args", "a list"),
    ("fs_edit", {"path": "notes.txt", "old": "a", "new": "b", "replace_all": "maybe"},
     "replace_all", "true or false"),
    ("secrets_set", {"name": "k", "value": {"v": "1"}}, "value", "text"),
    ("crypto_sign", {"text": ["a"]}, "text", "text"),
    ("save_knowledge", {"text": "t", "tags": "notalist"}, "tags", "a list"),
    ("search_knowledge", {"query": "q", "limit": [5]}, "limit", "a whole number"),
    ("graph_traverse", {"node": "n", "depth": {"d": 1}}, "depth", "a whole number"),
    ("memory_store", {"text": "t", "tags": "notalist"}, "tags", "a list"),
    ("memory_store", {"text": "t", "tags": ["ok", 7]}, "tags", "items are text"),
    ("reflect_summary", {"limit": True}, "limit", "a whole number"),
    ("browser_type", {"selector": "#q", "text": "hi", "submit": "maybe"}, "submit", "true or"),
    ("browser_screenshot", {"path": "a.png", "full_page": [True]}, "full_page", "true or"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "args", "name", "shape"),
    WRONG_SHAPES,
    ids=[f"{tool}-{name}-{i}" for i, (tool, _, name, _) in enumerate(WRONG_SHAPES)],
)
async def test_a_wrongly_shaped_argument_is_refused_naming_it_its_shape_and_an_example(
    tools: list[Tool], workspace: Path, tool: str, args: dict[str, Any], name: str, shape: str
) -> None:
    before = sorted(p.name for p in workspace.iterdir())

    run = await call_tool(tools, tool, args, policy="auto")

    assert set(run.response) == {"error", "accepted"}, run.response
    assert run.response["error"].startswith(f"{name} must be ")
    assert shape in run.response["error"]
    assert f"e.g. {name}=" in run.response["accepted"]
    assert sorted(p.name for p in workspace.iterdir()) == before


async def test_a_refused_huge_write_leaves_no_file(tools: list[Tool], workspace: Path) -> None:
    await call_tool(tools, "fs_write", {"path": "big.txt", "content": HUGE})

    assert not (workspace / "big.txt").exists()


def _exploding(path: str) -> dict[str, Any]:
    """A user tool with a bug: it raises on any input."""
    raise KeyError(f"no entry for {path}")


async def test_a_tool_that_raises_answers_with_an_error_and_logs_the_traceback_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools = [Tool(func=_exploding, name="fs_explode", description="Explodes.")]
    caplog.set_level(logging.DEBUG, logger="troupe.tools")

    run = await call_tool(tools, "fs_explode", {"path": "a.txt"})

    assert "no entry for a.txt" in run.response["error"]
    assert "KeyError" not in run.response["error"]
    assert "Traceback" not in everything_shown(run)
    failures = [r for r in caplog.records if r.name == "troupe.tools" and r.exc_info]
    assert failures and all(r.levelno == logging.DEBUG for r in failures)


@pytest.mark.parametrize(
    ("agent", "tool", "args", "said"),
    [
        ("operator", "fs_read", {"path": ["notes.txt"]}, "path must be text"),
        ("chronicler", "memory_store", {"text": "t", "tags": "notalist"}, "tags must be a list"),
        ("librarian", "search_knowledge", {"query": "q", "limit": "ten"}, "limit must be a whole"),
    ],
)
def test_run_answers_200_with_the_error_when_a_tool_gets_bad_arguments(
    workspace: Path, tmp_path: Path, agent: str, tool: str, args: dict[str, Any], said: str
) -> None:
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name=agent),
            call(tool, **args),
            "Could not do it.",
        ]
    )
    responses, _ = served_tool_responses(settings, tool, "read notes")

    assert responses and said in responses[0]["error"]


@pytest.mark.parametrize(
    "line",
    [
        "turn_timeout_s: 1e23",
        "max_model_calls: 1e23",
        "max_delegation_rounds: 1e23",
        "shell:\n  timeout_s: 1e23",
    ],
)
def test_a_config_number_out_of_bounds_is_refused_naming_the_field(
    tmp_path: Path, line: str
) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text(line + "\n", encoding="utf-8")
    field = line.split(":")[-2].strip()

    result = CliRunner().invoke(
        cli_app, ["chat", "--config", str(config), "--model", "offline"], input=""
    )

    shown = unwrapped(result.output)
    assert result.exit_code != 0
    assert field in shown and "Traceback" not in shown


@pytest.mark.parametrize("below", ["", "sub"])
def test_a_data_dir_that_is_a_file_is_one_clear_line(tmp_path: Path, below: str) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory\n", encoding="utf-8")

    result = CliRunner().invoke(
        cli_app,
        ["chat", "--data-dir", str(afile / below), "--model", "offline"],
        input="",
    )

    shown = unwrapped(result.output)
    assert result.exit_code != 0
    assert f"{str(afile)!r} is a file, not a directory" in shown
    assert "as --data-dir" in shown and "Traceback" not in shown
