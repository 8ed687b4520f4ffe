"""Output masking against a command asked to print a secret in disguise."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.containment import a_person_says_yes
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import ToolRun, call_tool, everything_shown
from troupe import builtin_tools
from troupe.builtins import SecretStore

DISGUISES = [
    'printf %s "$T"',
    'printf %s "$T" | base64',
    'printf xy%s "$T" | base64',
    'printf %s "$T" | base64 -w 7',
    'printf %s "$T" | rev',
    'printf %s "$T" | od -An -tx1',
    'printf %s "$T" | xxd -p',
    'printf %s "$T" | fold -w 5',
    'python3 -c \'import os, urllib.parse as u; print(u.quote(os.environ["T"], safe=""))\'',
    'python3 -c \'import os; print("".join("%%%02X" % b for b in os.environ["T"].encode()))\'',
]


@pytest.mark.parametrize("command", DISGUISES)
async def test_a_stored_secret_is_masked_in_every_easy_disguise(
    workspace: Path, data_dir: Path, command: str
) -> None:
    run = await _run_with_secret_in_t(workspace, data_dir, command)

    assert run.response["exit_code"] == 0
    assert "{{secret:deploy}}" in run.response["stdout"]
    assert SECRET_TEXT not in everything_shown(run)


async def _run_with_secret_in_t(workspace: Path, data_dir: Path, command: str) -> ToolRun:
    """Run ``command`` approved, with the stored secret ``deploy`` in ``$T``."""
    SecretStore(data_dir).set("deploy", SECRET_TEXT)
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)
    return await call_tool(
        tools,
        "exec_shell",
        {"command": command, "env": {"T": "{{secret:deploy}}"}},
        policy="auto",
        ask=a_person_says_yes,
    )


async def test_a_secret_at_the_output_cut_is_masked_whole(workspace: Path, data_dir: Path) -> None:
    # The secret starts a few characters before the 20,000-character cut and runs past it.
    command = (
        'python3 -c \'import os,sys; sys.stdout.write("x" * 19990 + os.environ["T"] * 3 '
        '+ "y" * 10_000_000)\''
    )

    run = await _run_with_secret_in_t(workspace, data_dir, command)

    assert run.response["truncated"] is True
    shown = everything_shown(run)
    assert SECRET_TEXT not in shown and SECRET_TEXT[:8] not in shown


@pytest.mark.parametrize("command", ['printf %s "$OPENAI_API_KEY" | base64', "env | rev"])
async def test_the_key_troupe_runs_with_is_masked_even_when_passed_on(
    workspace: Path, data_dir: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + SECRET_TEXT)
    tools = builtin_tools(workspace=workspace, data_dir=data_dir, pass_env=["OPENAI_API_KEY"])

    run = await call_tool(
        tools, "exec_shell", {"command": command}, policy="auto", ask=a_person_says_yes
    )

    assert run.response["exit_code"] == 0
    shown = everything_shown(run)
    assert SECRET_TEXT not in shown and SECRET_TEXT[::-1] not in shown
