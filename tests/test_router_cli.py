"""The router on the command line: ``troupe eval`` reports its coverage and
precision, ``troupe chat`` takes ``--api-base``/``--router``, and ``troupe
routing`` stays within the instruction budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from troupe.cli.app import app

INSTRUCTION_BUDGET = 4600


def run_eval(tmp_path: Path, router: str, limit: int) -> tuple[str, dict[str, Any]]:
    """``troupe eval`` on the offline model; its output and its JSON report."""
    out_json = tmp_path / "eval.json"
    result = CliRunner().invoke(
        app,
        [
            "eval", "--model", "offline", "--router", router, "--limit", str(limit),
            "--out-json", str(out_json), "--out-html", str(tmp_path / "eval.html"),
        ],
        env={"COLUMNS": "200"},  # one table: the test reads its headings, not the layout
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output, json.loads(out_json.read_text())


def test_eval_reports_the_routers_coverage_and_precision(tmp_path: Path) -> None:
    output, report = run_eval(tmp_path, "auto", 21)

    decided = [r for r in report["results"] if r["router"] in ("route", "greeting", "direct")]
    assert decided, "the router decided nothing"
    assert report["overall"]["router_coverage"] == pytest.approx(len(decided) / 21, abs=1e-6)
    correct = sum(r["correct"] for r in decided)
    assert report["overall"]["router_precision"] == pytest.approx(correct / len(decided), abs=1e-6)
    routed = [r for r in report["results"] if r["router"] == "route"]
    assert all(r["model_calls"] == 0 for r in routed)
    assert "router auto" in report["model"]
    assert "Router cov" in output


def test_eval_with_the_router_off_decides_nothing_by_router(tmp_path: Path) -> None:
    _, report = run_eval(tmp_path, "off", 7)

    assert report["overall"]["router_coverage"] == 0.0
    assert all(r["router"] is None and r["model_calls"] >= 1 for r in report["results"])


def test_a_bad_router_option_is_named_with_the_accepted_values(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "--model", "offline", "--router", "maybe", "--limit", "1"]
    )

    assert result.exit_code != 0
    flat = " ".join(result.output.split())
    assert "router': must be 'auto' or 'off', not 'maybe' (from option --router)" in flat


def test_chat_sends_the_turn_to_the_server_given_by_api_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.openai_server import serve, text_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with serve([text_reply("Hi from the local server.")]) as fake:
        result = CliRunner().invoke(
            app,
            [
                "chat", "--model", "openai/tiny-local", "--api-base", fake.api_base,
                "--router", "auto", "--workspace", str(tmp_path), "hello",
            ],
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert "Hi from the local server." in result.output
    assert len(fake.requests) == 1
    assert fake.requests[0]["model"] == "tiny-local"


def test_routing_prints_an_instruction_within_the_budget(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["routing", "--workspace", str(tmp_path)])

    assert result.exit_code == 0, result.output
    assert len(result.output) <= INSTRUCTION_BUDGET
    assert "## Routing table" in result.output and "## Agent names" in result.output
