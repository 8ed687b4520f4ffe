"""The benchmarks run end to end at a small size and write what they print."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from troupe.cli.app import app
from troupe_bench.faults import DEFAULT_RATES, load_requests, run_benchmark
from troupe_bench.faulty import SHAPE_FAULTS

RESULTS = Path(__file__).parent.parent / "bench" / "results"
DOCUMENTED_KINDS = {
    "hallucination",
    "misroute",
    "ping_pong",
    "repeat",
    "transient",
    *SHAPE_FAULTS,
}
"""The fault kinds docs/benchmarks.md lists and the benchmark's default rates inject."""
REACHED_MARGIN = 8.0
"""Points troupe's reached share may fall below the committed full run at 100 turns."""


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


async def test_fault_benchmark_injects_every_documented_kind_and_troupe_reaches_agents() -> None:
    # The fault benchmark only measures something when the wrapped stand-in
    # routes (the faults hit transfers) and every kind is drawn: a wrapper that
    # stopped passing the team on would leave one kind (transient) and no routing.
    assert {k for k, v in vars(DEFAULT_RATES).items() if v and k in DOCUMENTED_KINDS} == (
        DOCUMENTED_KINDS
    )
    plain, troupe = await run_benchmark(turns=100, strategies=("plain-adk", "troupe"))

    injected = {k for k, v in troupe["faults_injected"].items() if v}
    assert injected >= DOCUMENTED_KINDS, f"kinds never injected: {DOCUMENTED_KINDS - injected}"
    committed = json.loads((RESULTS / "faults.json").read_text())["results"]
    claimed = next(r for r in committed if r["strategy"] == "troupe")["reached_expected_pct"]
    assert troupe["completed_pct"] >= 99.0
    assert troupe["reached_expected_pct"] >= claimed - REACHED_MARGIN
    assert troupe["leaked_rejects"] == 0
    # Each fault that hit a turn alone was repaired (the expected agent reached)
    # or, for a model that keeps naming a missing agent, ended in an answer.
    for kind, share in troupe["reached_pct_single_fault"].items():
        if kind != "persistent_bad_name":
            assert share >= 90.0, f"{kind}: troupe reached its agent in {share}% of turns"
    assert plain["completed_pct"] < 90.0  # without troupe the same faults end turns


def test_overhead_benchmark_reports_a_ratio(tmp_path: Path) -> None:
    out = tmp_path / "overhead.json"
    result = CliRunner().invoke(app, ["bench", "overhead", "--turns", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["ratio_troupe_to_plain"] > 0  # CPU time, the headline
    assert data["wall_ratio_troupe_to_plain"] > 0  # wall time, kept beside it
    assert set(data["median_cpu_ms_per_turn"]) == {"troupe", "plain-adk"}
    assert "ratio troupe / plain ADK" in result.output


def test_sandbox_benchmark_times_jailed_and_unjailed_commands(tmp_path: Path) -> None:
    import runpy

    bench = runpy.run_path(str(Path(__file__).parent.parent / "bench" / "sandbox.py"))
    out = tmp_path / "sandbox.json"

    assert bench["main"](["--runs", "3", "--out", str(out)]) == 0

    data = json.loads(out.read_text())
    assert [row["command"] for row in data["results"]] == list(bench["COMMANDS"])
    assert all(row["jailed_median_ms"] > 0 for row in data["results"])
