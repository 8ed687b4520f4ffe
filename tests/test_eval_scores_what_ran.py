"""``troupe eval`` measures the shipped product: the built-in tools by default, a
compound request counted only when each step's agent ran a tool, and a request
no agent can serve counted only when the reply says so without handing it on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from troupe import Assistant, Tool
from troupe.cli.app import app
from troupe.errors import ConfigError
from troupe.evaluation import (
    CANNOT,
    RoutingCase,
    build_eval_tree,
    evaluate_case,
    load_cases,
    run_evaluation,
    says_cannot,
)
from troupe.testing import ScriptedModel, call
from troupe_bench.stub_tools import stub_tools

THREE_STEPS = "Read config.yaml, encrypt the database password in it and store it as a secret."


def _compound(steps: tuple[str, ...]) -> RoutingCase:
    return RoutingCase(
        text=THREE_STEPS, expected=("planner",), kind="compound", lang="en", steps=steps
    )


def _cannot(text: str = "Send 5 USDC to Bob.") -> RoutingCase:
    return RoutingCase(text=text, expected=(CANNOT,), kind="plain", lang="en")


async def test_a_compound_request_counts_when_each_steps_agent_ran_a_tool() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("operator", request="Read config.yaml"),
            call("fs_read", path="config.yaml"),
            "config.yaml says db_password: hunter2",
            call("vault", request="encrypt hunter2"),
            call("crypto_encrypt", text="hunter2"),
            "encrypted",
            "1. read (operator) 2. encrypted (vault)",
        ]
    )

    [result] = await run_evaluation(
        [_compound(("operator", "vault"))], model=model, tools=stub_tools(), router="off"
    )

    assert result.routed == "planner"
    assert result.ran == ["operator", "vault"]
    assert result.correct
    assert model.remaining == 0  # the turn ran to its end


async def test_a_plan_written_but_not_carried_out_does_not_count() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            "Plan: 1. read config.yaml (operator) 2. encrypt it (vault) 3. store it (vault)",
        ]
    )

    [result] = await run_evaluation(
        [_compound(("operator", "vault"))], model=model, tools=stub_tools(), router="off"
    )

    assert result.routed == "planner"  # the route was right ...
    assert result.ran == []
    assert not result.correct  # ... but nothing ran


async def test_a_compound_request_with_a_step_skipped_does_not_count() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("operator", request="Read config.yaml"),
            call("fs_read", path="config.yaml"),
            "db_password: hunter2",
            "Done: read config.yaml. (The rest is left to you.)",
        ]
    )

    [result] = await run_evaluation(
        [_compound(("operator", "vault"))], model=model, tools=stub_tools(), router="off"
    )

    assert (result.ran, result.correct) == (["operator"], False)


async def test_a_request_that_never_ends_is_a_failed_result_not_a_hung_eval() -> None:
    async def fs_wait(path: str) -> dict[str, Any]:
        """Read a file (this one never answers)."""
        await asyncio.Event().wait()
        return {}

    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("operator", request="Read config.yaml"),
            call("fs_wait", path="config.yaml"),
        ]
    )
    root = build_eval_tree(model, tools=[*stub_tools(), Tool.from_function(fs_wait)], router="off")

    result = await evaluate_case(
        Assistant(root), _compound(("operator", "vault")), "s1", timeout_s=0.5
    )

    assert result.error is not None and result.error.startswith("TimeoutError")
    assert not result.correct


async def test_an_honest_cannot_counts_for_a_request_no_agent_has_the_tool_for() -> None:
    model = ScriptedModel(
        replies=["I can't send USDC: no agent on this team has a tool for payments."]
    )

    [result] = await run_evaluation([_cannot()], model=model, tools=stub_tools(), router="off")

    assert (result.routed, result.correct) == ("orchestrator", True)


async def test_a_generic_fallback_that_names_nothing_does_not_count_as_cannot() -> None:
    model = ScriptedModel(replies=["No agent on the team matches this request."])

    [result] = await run_evaluation([_cannot()], model=model, tools=stub_tools(), router="off")

    assert result.routed == "orchestrator"
    assert not result.correct


async def test_handing_a_payment_to_an_agent_without_the_tool_does_not_count() -> None:
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name="vault"), "I cannot send payments."]
    )

    [result] = await run_evaluation([_cannot()], model=model, tools=stub_tools(), router="off")

    assert result.routed == "vault"
    assert not result.correct


async def test_a_direct_answer_that_pretends_to_pay_does_not_count() -> None:
    model = ScriptedModel(replies=["Done! 5 USDC are on their way to Bob."])

    [result] = await run_evaluation([_cannot()], model=model, tools=stub_tools(), router="off")

    assert result.routed == "orchestrator"
    assert not result.correct


@pytest.mark.parametrize(
    ("reply", "declines"),
    [
        ("I cannot do this with my tools.", True),
        ("Sorry, I can't book flights.", True),
        ("I'm unable to make payments.", True),
        ("No agent on the team matches this request.", True),
        ("I don't have a tool for payments.", True),
        ("Sure, the payment is sent.", False),
        ("", False),
    ],
)
def test_says_cannot_reads_a_refusal(reply: str, declines: bool) -> None:
    assert says_cannot(reply) is declines


def test_a_routing_set_line_with_bad_steps_is_one_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "set.jsonl"
    row = {"text": "do a and b", "expected": "planner", "steps": "operator"}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")

    with pytest.raises(ConfigError, match=r"line 1: 'steps' must be a list of agent names"):
        load_cases(data)


def test_the_test_sets_payment_requests_expect_cannot_and_compounds_name_their_steps() -> None:
    cases = load_cases("test")
    payments = [c for c in cases if "Pay " in c.text or "Send 20 dollars" in c.text]
    assert payments and all(c.label == CANNOT for c in payments)
    compounds = [c for c in cases if c.kind == "compound"]
    assert compounds and all(len(c.steps) >= 2 for c in compounds)


def _eval(tmp_path: Path, *extra: str) -> tuple[int, str, dict[str, object]]:
    out = tmp_path / "eval.json"
    args = ["eval", "--model", "offline", "--limit", "8", "--out-json", str(out)]
    args += ["--out-html", str(tmp_path / "eval.html"), *extra]
    result = CliRunner().invoke(app, args)
    report = json.loads(out.read_text()) if out.exists() else {}
    return result.exit_code, result.output, report


def test_troupe_eval_scores_the_built_in_tools_in_a_scratch_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "mine"
    work.mkdir()
    monkeypatch.chdir(work)

    code, output, report = _eval(tmp_path)

    assert code == 0, output
    assert str(report["model"]).endswith("built-in tools")
    assert list(work.iterdir()) == []  # nothing was written where the user stands


def test_troupe_eval_stub_tools_runs_from_a_checkout(tmp_path: Path) -> None:
    code, output, report = _eval(tmp_path, "--stub-tools")

    assert code == 0, output
    assert str(report["model"]).endswith("stub tools")
