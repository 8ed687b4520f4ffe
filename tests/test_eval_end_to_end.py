"""``troupe eval --end-to-end``: a single-agent request counts end to end only
when its agent's own tool ran without an error, not merely when it was routed
there; the route is still scored apart, for the router's precision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from troupe.cli.app import app
from troupe.evaluation import RoutingCase, run_evaluation
from troupe.testing import ScriptedModel, call
from troupe_bench.stub_tools import stub_tools

READ = RoutingCase("Read notes.txt", ("operator",), "plain", "en")


async def test_a_routed_request_whose_tool_ran_counts_end_to_end() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_read", path="notes.txt"),
            "notes.txt says hello",
        ]
    )

    [result] = await run_evaluation(
        [READ], model=model, tools=stub_tools(), router="off", end_to_end=True
    )

    assert (result.routed, result.correct, result.done) == ("operator", True, True)
    assert model.remaining == 0  # the turn ran to its end


async def test_a_right_route_whose_agent_ran_no_tool_is_not_done() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            "Which file do you mean?",
        ]
    )

    [result] = await run_evaluation(
        [READ], model=model, tools=stub_tools(), router="off", end_to_end=True
    )

    assert result.correct  # the route was right ...
    assert result.done is False  # ... but no work was done


async def test_a_failed_call_of_the_right_agent_is_not_done() -> None:
    def fs_read(path: str) -> dict[str, Any]:
        """Read a file."""
        raise ValueError(f"no file {path!r}: give a path inside the workspace")

    tools = [t for t in stub_tools() if t.name != "fs_read"]
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_read", path="notes.txt"),
            "I could not read it.",
        ]
    )
    from troupe import Tool

    [result] = await run_evaluation(
        [READ],
        model=model,
        tools=[*tools, Tool.from_function(fs_read)],
        router="off",
        end_to_end=True,
    )

    assert result.runs and not result.runs[0].ok
    assert (result.correct, result.done) == (True, False)


async def test_without_end_to_end_the_run_stops_at_the_route_and_done_is_unknown() -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="operator")])

    [result] = await run_evaluation([READ], model=model, tools=stub_tools(), router="off")

    assert result.correct and result.done is None


def test_the_report_shows_end_to_end_only_when_every_request_ran_to_its_end(
    tmp_path: Path,
) -> None:
    data = tmp_path / "set.jsonl"
    data.write_text(
        json.dumps({"text": "run `echo hi`", "expected": "operator", "kind": "plain"}) + "\n"
    )

    def run(*extra: str) -> dict[str, Any]:
        out = tmp_path / "eval.json"
        args = ["eval", "--dataset", str(data), "--out-json", str(out)]
        args += ["--out-html", str(tmp_path / "eval.html"), "--stub-tools", *extra]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return dict(json.loads(out.read_text()))

    routed_only = run()
    end_to_end = run("--end-to-end")

    assert "done_share" not in routed_only["overall"]
    assert end_to_end["overall"]["done_share"] == 1.0
    assert end_to_end["results"][0]["runs"][0][:2] == ["operator", "exec_shell"]
    assert str(end_to_end["model"]).endswith("end to end")


async def test_a_request_for_a_plan_counts_when_the_planner_wrote_the_plan() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            "1. list the branches 2. delete the merged ones 3. tell the team",
        ]
    )
    case = RoutingCase("Make a plan to clean up our git branches", ("planner",), "plain", "en")

    [result] = await run_evaluation(
        [case], model=model, tools=stub_tools(), router="off", end_to_end=True
    )

    assert (result.routed, result.runs, result.done) == ("planner", [], True)


async def test_a_request_for_a_plan_handed_out_step_by_step_is_not_the_plan() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="planner"),
            call("operator", request="Make a plan to clean up our git branches"),
            "I have no plan for that.",
            "Done, step by step: 1. (operator) I have no plan for that.",
        ]
    )
    case = RoutingCase("Make a plan to clean up our git branches", ("planner",), "plain", "en")

    [result] = await run_evaluation(
        [case], model=model, tools=stub_tools(), router="off", end_to_end=True
    )

    assert (result.correct, result.handed, result.done) == (True, 1, False)
