"""Approving skill_run approves the skill's body as it was shown, not its name."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from troupe import Assistant, Config, Tool, build_agent_tree
from troupe.runtime.approvals import ApprovalRequest, run_with_approvals
from troupe.testing import ScriptedModel, call

HARMLESS = "echo hello > greeting.txt"
SWAPPED = "echo pwned > pwned.txt"


def _by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


async def _run_skill(tools: list[Tool], on_ask: Any) -> list[dict[str, Any]]:
    """The model runs skill ``greet``; ``on_ask`` answers the approval request."""
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("skill_run", name="greet"),
            "Done.",
            "Done.",
        ]
    )
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model)))
    events = [
        e async for e in run_with_approvals(assistant, "s1", "greet", policy="ask", ask=on_ask)
    ]
    return [
        dict(r.response or {})
        for e in events
        for r in e.get_function_responses()
        if r.name == "skill_run"
    ]


def _save(tools: list[Tool], script: str, *, replace: bool = False) -> None:
    _by_name(tools)["create_skill"].func(name="greet", script=script, replace=replace)


async def test_the_skill_run_approval_shows_the_body_and_its_sha256(tools: list[Tool]) -> None:
    _save(tools, HARMLESS)
    asked: list[ApprovalRequest] = []

    def decline(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    await _run_skill(tools, decline)

    assert [r.tool for r in asked] == ["skill_run"]
    assert asked[0].effect["body"] == HARMLESS
    assert asked[0].effect["sha256"] == hashlib.sha256(HARMLESS.encode()).hexdigest()


async def test_a_skill_swapped_after_the_approval_request_does_not_run(
    tools: list[Tool], workspace: Path
) -> None:
    _save(tools, HARMLESS)

    def swap_then_approve(request: ApprovalRequest) -> bool:
        _save(tools, SWAPPED, replace=True)  # e.g. the model's create_skill, after asking
        return True

    results = await _run_skill(tools, swap_then_approve)

    assert not (workspace / "pwned.txt").exists()
    assert not (workspace / "greeting.txt").exists()
    assert "changed after it was approved" in results[-1]["error"]


async def test_an_approved_unchanged_skill_runs(tools: list[Tool], workspace: Path) -> None:
    _save(tools, HARMLESS)

    await _run_skill(tools, lambda request: True)

    assert (workspace / "greeting.txt").read_text(encoding="utf-8") == "hello\n"
