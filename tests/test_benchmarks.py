"""The benchmarks run end to end at a small size and write what they print."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from troupe.cli.app import app
from troupe_bench.faults import load_requests


def test_labelled_request_set_covers_every_agent() -> None:
    requests = load_requests()
    assert len(requests) >= 150
    expected = {r.expected for r in requests}
    assert expected == {
        "operator",
        "navigator",
        "vault",
        "librarian",
        "planner",
        "chronicler",
        "orchestrator",
    }


def test_fault_benchmark_writes_json_for_three_strategies(tmp_path: Path) -> None:
    out = tmp_path / "faults.json"
    result = CliRunner().invoke(app, ["bench", "faults", "--turns", "40", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    names = [r["strategy"] for r in data["results"]]
    assert names == ["plain-adk", "retry-only", "troupe"]
    troupe_row = data["results"][2]
    assert troupe_row["leaked_rejects"] == 0
    assert troupe_row["completed_pct"] == 100.0
    assert "troupe" in result.output and "plain-adk" in result.output


def test_overhead_benchmark_reports_a_ratio(tmp_path: Path) -> None:
    out = tmp_path / "overhead.json"
    result = CliRunner().invoke(app, ["bench", "overhead", "--turns", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["ratio_troupe_to_plain"] > 0
    assert "ratio troupe / plain ADK" in result.output


def test_sandbox_benchmark_times_jailed_and_unjailed_commands(tmp_path: Path) -> None:
    import runpy

    bench = runpy.run_path(str(Path(__file__).parent.parent / "bench" / "sandbox.py"))
    out = tmp_path / "sandbox.json"

    assert bench["main"](["--runs", "3", "--out", str(out)]) == 0

    data = json.loads(out.read_text())
    assert [row["command"] for row in data["results"]] == list(bench["COMMANDS"])
    assert all(row["jailed_median_ms"] > 0 for row in data["results"])
