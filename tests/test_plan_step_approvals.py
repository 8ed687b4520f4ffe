"""A plan step whose agent calls a dangerous tool asks the person through the
planner's call, then runs exactly what was approved: the step is not lost to
ADK's nested run, which cannot pause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from typer.testing import CliRunner

from fakes.approvals import AskLog
from troupe import Assistant, Config, Tool, build_agent_tree, builtin_tools
from troupe.cli.app import app
from troupe.runtime.approvals import ApprovalPolicy, run_with_approvals
from troupe.runtime.events import Step, steps
from troupe.testing import ScriptedModel, call

THREE_STEPS = "Read config.yaml, encrypt the database password in it and store it as a secret."


def _tools(workspace: Path) -> list:
    (workspace / "config.yaml").write_text("db_password: hunter2\n", encoding="utf-8")
    data = workspace / "data"
    return [
        t
        for t in builtin_tools(workspace=workspace, data_dir=data)
        if not t.name.startswith("browser_")
    ]


def _stored_secrets(workspace: Path) -> list[str]:
    listing = next(
        t
        for t in builtin_tools(workspace=workspace, data_dir=workspace / "data")
        if t.name == "secrets_list"
    )
    return [s["name"] for s in listing.func()["secrets"]]


def _ledger(ran: list[str]) -> Tool:
    """A dangerous vault tool that records each label it was run with in ``ran``."""

    def secrets_record(label: str) -> dict[str, str]:
        """Record a label in the vault's ledger."""
        ran.append(label)
        return {"recorded": label}

    return Tool.from_function(secrets_record, dangerous=True)


def _offline(workspace: Path) -> Assistant:
    config = Config(tools=_tools(workspace), model="offline", router="auto")
    return Assistant(build_agent_tree(config))


async def _turn(
    assistant: Assistant, text: str, policy: ApprovalPolicy, ask: AskLog | None = None
) -> list[Step]:
    events: list[Event] = [
        e async for e in run_with_approvals(assistant, "s1", text, policy=policy, ask=ask)
    ]
    return [step for event in events for step in steps(event)]


def _answer(found: list[Step]) -> str:
    return [s.text for s in found if s.kind == "text"][-1]


async def test_an_approved_step_runs_its_dangerous_tool_and_the_answer_reports_it(
    tmp_path: Path,
) -> None:
    assistant = Assistant(
        build_agent_tree(Config(tools=_tools(tmp_path), model="offline", router="auto"))
    )
    asked = AskLog(True)

    found = await _turn(assistant, THREE_STEPS, "ask", asked)

    assert [(r.agent, r.tool) for r in asked.asked] == [("vault", "secrets_set")]
    assert asked.asked[0].args["name"] == "database_password"
    answer = _answer(found)
    assert "3. store it as a secret (vault): Result of secrets_set" in answer
    assert "stored: True" in answer
    assert _stored_secrets(tmp_path) == ["database_password"]


async def test_a_declined_step_runs_nothing_and_the_answer_says_so(tmp_path: Path) -> None:
    assistant = Assistant(
        build_agent_tree(Config(tools=_tools(tmp_path), model="offline", router="auto"))
    )

    found = await _turn(assistant, THREE_STEPS, "deny")

    answer = _answer(found)
    assert "1. Read config.yaml (operator): Result of fs_read" in answer
    assert "3. store it as a secret (vault)" in answer
    assert "not run" in answer and "approv" in answer
    assert _stored_secrets(tmp_path) == []


async def test_a_step_that_needs_two_approvals_asks_for_each_and_runs_each_call_once(
    tmp_path: Path,
) -> None:
    ran: list[str] = []
    ledger = _ledger(ran)
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("vault", request="record a and b"),
            call("secrets_record", label="a"),  # asks; approved
            call("secrets_record", label="a"),  # the step again: runs under the approval
            call("secrets_record", label="b"),  # asks, but this call cannot pause twice
            call("vault", request="record a and b"),  # the planner calls the step again
            call("secrets_record", label="a"),  # ran before: its result, not a second run
            call("secrets_record", label="b"),  # runs under its own approval
            "recorded a and b",
            "1. record a and b (vault): recorded a and b",
        ]
    )
    tools = [*_tools(tmp_path), ledger]
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="off")))
    asked = AskLog(True)

    found = await _turn(assistant, "record a and b", "ask", asked)

    assert [(r.agent, r.tool, r.args) for r in asked.asked] == [
        ("vault", "secrets_record", {"label": "a"}),
        ("vault", "secrets_record", {"label": "b"}),
    ]
    assert ran == ["a", "b"]
    assert _answer(found) == "1. record a and b (vault): recorded a and b"
    assert model.remaining == 0


async def test_a_declined_call_stays_refused_when_its_step_runs_again(tmp_path: Path) -> None:
    ran: list[str] = []
    ledger = _ledger(ran)
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("vault", request="record a"),
            call("secrets_record", label="a"),  # asks; declined below
            call("secrets_record", label="a"),  # the step again: refused, as answered
            "not recorded",
            "1. record a (vault): not recorded",
        ]
    )
    tools = [*_tools(tmp_path), ledger]
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="off")))

    found = await _turn(assistant, "record a", "ask", AskLog(False))

    assert ran == []
    assert _answer(found) == "1. record a (vault): not recorded"
    assert model.remaining == 0


def test_troupe_chat_asks_about_the_steps_tool_and_runs_every_step(tmp_path: Path) -> None:
    _tools(tmp_path)
    args = ["chat", "-m", "offline", "--router", "auto", "--approve", "auto", "-w", str(tmp_path)]
    args += ["--data-dir", str(tmp_path / "data"), THREE_STEPS]

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "secrets_set approved" in flat
    assert "3. store it as a secret (vault): Result of secrets_set" in flat
    assert "name: database_password" in flat


async def test_a_plans_steps_count_against_the_turns_model_call_limit(tmp_path: Path) -> None:
    replies: list[Any] = [call("transfer_to_agent", agent_name="planner")]
    for i in range(10):
        replies += [call("operator", request=f"list step {i}"), call("fs_list", path="."), "listed"]
    replies.append("done")
    model = ScriptedModel(replies=replies)
    config = Config(tools=_tools(tmp_path), model=model, router="off", max_model_calls=8)

    result = await Assistant(build_agent_tree(config)).run_turn("s1", "list the files ten times")

    # orchestrator 1, then per step: the planner's call and the operator's two.
    assert result.model_calls == 8
    assert result.stopped is not None and "8 model calls" in result.stopped
    assert model.remaining == len(replies) - 8
