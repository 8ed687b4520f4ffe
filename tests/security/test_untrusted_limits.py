"""An untrusted troupe.yaml may only tighten, and its deny patterns cannot stall a turn.

The attacks: a workspace's file (nobody ran ``troupe trust`` on it) raises the
team's limits (``max_model_calls: 1000``, ``turn_timeout_s: 86400``, ``guards:
false``), or adds a deny pattern that backtracks forever (``^(a|aa)+$``
against a 61-character command held a turn past 60 s, on the event loop every
session shares). Limits from such a file apply only where they are lower than
the defaults; deny patterns run on RE2 (linear time), in a worker thread,
bounded.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from fakes.hostile_cli import hostile_chat
from troupe.builtins import operator_tools, shell_policy
from troupe.builtins.workspace import Workspace
from troupe.errors import ConfigError
from troupe.settings import load_settings
from troupe.testing import call

CATASTROPHIC = "^(a|aa)+$"
COMMAND = "a" * 60 + "b"
"""61 characters: Python's backtracking ``re`` would take longer than the universe."""


def _untrusted(workspace: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    (workspace / "troupe.yaml").write_text(text, encoding="utf-8")


RAISED = (
    "max_model_calls: 1000\nturn_timeout_s: 86400\nguards: false\nmodel_retries: 10\n"
    "max_delegation_rounds: 50\nshell:\n  max_processes: 4096\n  timeout_s: 3600\n"
)
LOWERED = (
    "max_model_calls: 6\nturn_timeout_s: 60\nmax_delegation_rounds: 2\nguards: true\n"
    "model_retries: 1\nshell:\n  max_processes: 32\n  timeout_s: 10\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (RAISED, (24, 300.0, True, 3, 0, 256, None)),  # every default stays (0: 5 rounds)
        (LOWERED, (6, 60, True, 1, 2, 32, 10)),
    ],
    ids=["raised-limits-ignored", "lowered-limits-apply"],
)
def test_an_untrusted_file_may_lower_the_team_s_limits_but_never_raise_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: tuple[object, ...]
) -> None:
    _untrusted(workspace, text, monkeypatch)

    settings = load_settings()

    assert (
        settings.max_model_calls,
        settings.turn_timeout_s,
        settings.guards,
        settings.model_retries,
        settings.max_delegation_rounds,
        settings.shell.max_processes,
        settings.shell.timeout_s,
    ) == expected


def test_a_catastrophic_deny_pattern_cannot_hold_a_turn(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's attack through the CLI: the untrusted file's pattern, a hostile
    model's 61-character commands; the turn ends with both refused (a turn that
    backtracked would hit pytest's timeout). Each check is bounded by
    DENY_CHECK_TIMEOUT_S, far below the 15 s a turn may be held at most."""
    _untrusted(workspace, f"shell:\n  deny_commands: ['{CATASTROPHIC}']\n", monkeypatch)

    chat = hostile_chat(
        [call("exec_shell", command="a" * 60), call("exec_shell", command=COMMAND)],
        workspace=workspace,
    )
    started = time.monotonic()
    checked = asyncio.run(
        shell_policy.deny_reason(COMMAND, shell_policy.compile_deny_list([CATASTROPHIC]))
    )

    assert shell_policy.DENY_CHECK_TIMEOUT_S < 15
    assert time.monotonic() - started < shell_policy.DENY_CHECK_TIMEOUT_S
    assert checked is None  # 'b' ends it: RE2 says no match at once
    assert chat.exit_code == 0, chat.output
    assert f"matches the deny-list pattern `{CATASTROPHIC}`" in chat.shown_to_model()


def test_a_deny_pattern_re2_cannot_run_is_refused_with_its_name() -> None:
    with pytest.raises(ConfigError, match=r"'\(a\)\\\\1'.*RE2 has no backreferences"):
        shell_policy.compile_deny_list([r"(a)\1"])


async def test_a_slow_deny_check_runs_off_the_event_loop_and_is_bounded(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a check costs, the loop keeps serving, and past the bound the
    command is refused rather than waited for."""
    monkeypatch.setattr(shell_policy, "DENY_CHECK_TIMEOUT_S", 0.3)
    monkeypatch.setattr(shell_policy.DenyPattern, "search", lambda self, text: time.sleep(2))
    tools = {t.name: t for t in operator_tools(Workspace(workspace), deny_commands=["x"])}
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    ticker = asyncio.create_task(tick())
    result = await tools["exec_shell"].func(command="echo hi")
    ticker.cancel()

    assert "could not be checked against the deny list within 0.3 s" in result["error"]
    assert ticks >= 5, "the event loop stalled during the check"
