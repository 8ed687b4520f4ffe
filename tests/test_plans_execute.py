"""A compound request is carried out step by step: the planner hands each step
to its specialist (its team are its tools), feeds each result to the next step,
and answers once with every step's outcome; a request for a plan only gets the
plan and nothing runs."""

from __future__ import annotations

from pathlib import Path

from google.adk.agents.callback_context import CallbackContext
from google.adk.events.event import Event
from typer.testing import CliRunner

from fakes.scripted import scripted_assistant, turn_events
from troupe import Assistant, Config, TroupeAgent, build_agent_tree, builtin_tools
from troupe.cli.app import app
from troupe.routing.router import RouteDecision
from troupe.runtime.approvals import is_approval_plumbing, run_with_approvals
from troupe.runtime.events import Step, steps
from troupe.testing import ScriptedModel, call

THREE_STEPS = "Read config.yaml, encrypt the database password in it and store it as a secret."


def _steps(events: list[Event]) -> list[Step]:
    return [step for event in events for step in steps(event) if not is_approval_plumbing(event)]


async def approved_turn(assistant: Assistant, text: str) -> list[Event]:
    """One turn on ``text`` with every approval granted (step 3 stores a secret)."""
    return [e async for e in run_with_approvals(assistant, "s1", text, policy="auto")]


def _offline(tmp_path: Path) -> Assistant:
    (tmp_path / "config.yaml").write_text("db_password: hunter2\n", encoding="utf-8")
    tools = [t for t in builtin_tools(workspace=tmp_path) if not t.name.startswith("browser_")]
    return Assistant(build_agent_tree(Config(tools=tools, model="offline", router="auto")))


async def test_offline_planner_hands_each_step_to_its_agent_and_reports_every_outcome(
    tmp_path: Path,
) -> None:
    events = await approved_turn(_offline(tmp_path), THREE_STEPS)

    handed = [(s.author, s.name) for s in _steps(events) if s.kind == "tool_call"]
    assert handed == [("planner", "operator"), ("planner", "vault"), ("planner", "vault")]
    answer = [s.text for s in _steps(events) if s.kind == "text"][-1]
    assert "1. Read config.yaml (operator): Result of fs_read" in answer
    assert "hunter2" in answer  # the file's content came back from step 1
    assert "2. encrypt the database password in it (vault): Result of crypto_encrypt" in answer
    assert "3. store it as a secret (vault): Result of secrets_set" in answer


async def test_a_step_is_given_the_result_of_the_step_before(tmp_path: Path) -> None:
    events = await approved_turn(_offline(tmp_path), THREE_STEPS)

    asks = [s.text for s in _steps(events) if s.kind == "tool_call" and s.author == "planner"]
    assert "hunter2" not in asks[0]
    assert "hunter2" in asks[1]  # step 2 got step 1's file content


async def test_just_a_plan_gets_the_plan_and_nothing_runs(tmp_path: Path) -> None:
    events = await turn_events(_offline(tmp_path), "just give me a plan: " + THREE_STEPS)

    assert not [s for s in _steps(events) if s.kind == "tool_call"]
    answer = [s.text for s in _steps(events) if s.kind == "text"][-1]
    assert answer.splitlines()[0] == "Plan for review:"
    assert answer.splitlines()[1] == "1. Read config.yaml -> operator"


async def test_scripted_planner_runs_three_steps_through_their_agents() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("operator", request="Read config.yaml"),
            call("fs_read", path="config.yaml"),
            "config.yaml says db_password: hunter2",
            call("vault", request="encrypt hunter2"),
            call("crypto_encrypt", text="hunter2"),
            "encrypted",
            call("vault", request="list the secrets"),
            call("secrets_list"),
            "listed",
            "1. read (operator) 2. encrypted (vault) 3. listed (vault)",
        ]
    )
    assistant = scripted_assistant(model, router="off")

    events = await turn_events(assistant, THREE_STEPS)

    handed = [(s.author, s.name) for s in _steps(events) if s.kind == "tool_call"]
    assert handed == [("planner", "operator"), ("planner", "vault"), ("planner", "vault")]
    results = [s.text for s in _steps(events) if s.kind == "tool_result"]
    assert "hunter2" in results[0] and "encrypted" in results[1] and "listed" in results[2]
    assert model.remaining == 0


def test_troupe_chat_runs_every_step_and_prints_each_outcome(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("db_password: hunter2\n", encoding="utf-8")
    args = ["chat", "-m", "offline", "--router", "auto", "--approve", "auto", "-w", str(tmp_path)]
    args += ["--data-dir", str(tmp_path / "data"), THREE_STEPS]

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "planner → operator" in flat and flat.count("planner → vault") == 2
    assert "1. Read config.yaml (operator)" in flat
    assert "2. encrypt the database password in it (vault)" in flat
    assert "3. store it as a secret (vault)" in flat


async def test_a_step_handed_back_to_the_planner_counts_against_the_users_turn() -> None:
    # The librarian turns its step down and names the planner, which plans again
    # inside the step: that inner step's calls belong to the user's turn, so the
    # turn's limits bound the nesting (an offline run once recursed without end).
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("librarian", request="Fetch the release schedule"),
            "[REJECT] This task requires planner: it has several steps",
            call("operator", request="list the files"),
            call("fs_list", path="."),
            "a.txt",
            "listed a.txt",
            "1. listed a.txt (operator)",
            "Done: 1. listed a.txt",
        ]
    )
    assistant = scripted_assistant(model, router="off")

    await turn_events(assistant, "Fetch the release schedule and save it")

    assert assistant.last_turn is not None
    ran = [(c.agent, c.tool) for c in assistant.last_turn.trace.tool_calls]
    assert ("operator", "fs_list") in ran


async def test_the_router_decides_for_the_orchestrator_only_never_inside_a_plan_step(
    tmp_path: Path,
) -> None:
    assistant = _offline(tmp_path)
    root = assistant.root_agent
    assert isinstance(root, TroupeAgent)
    fast = root.troupe_router
    assert fast is not None
    seen: list[tuple[str, str]] = []
    record = fast._on_decision
    assert record is not None

    def spy(ctx: CallbackContext, decision: RouteDecision) -> None:
        seen.append((ctx.agent_name, decision.kind))
        record(ctx, decision)

    fast._on_decision = spy
    await approved_turn(assistant, THREE_STEPS)

    # Each step's agent runs nested, with the step as its first message: the
    # router must not take that for a user's request and route it elsewhere.
    assert seen == [(assistant.root_agent.name, "route")]
