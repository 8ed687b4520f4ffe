"""bench/load.py in miniature: it drives ``troupe serve`` and checks what was stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from troupe_servers import troupe_env

pytestmark = pytest.mark.serve

LOAD = Path(__file__).resolve().parents[2] / "bench" / "load.py"


def test_the_load_benchmark_reports_throughput_latency_and_complete_sessions(
    tmp_path: Path,
) -> None:
    out = tmp_path / "load.json"
    result = subprocess.run(
        [
            sys.executable,
            str(LOAD),
            "--sessions",
            "4",
            "--turns",
            "3",
            "--rounds",
            "1",
            "--out",
            str(out),
        ],
        env=troupe_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "throughput" in result.stdout and "latency p99" in result.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["turns_ok"] == report["turns_requested"] == 12
    assert report["errors"] == 0
    assert report["sessions_with_all_events"] == 4
    assert report["events_stored"] == report["events_acknowledged"] > 12
    assert report["turns_per_second"] > 0
    assert 0 < report["latency_p50_ms"] <= report["latency_p99_ms"]
    # Side by side: the same load against plain ADK serving the same team.
    plain = report["plain_adk"]
    assert plain["turns_ok"] == 12 and plain["errors"] == 0
    assert report["server_cpu_ms_per_turn"] > 0 and plain["server_cpu_ms_per_turn"] > 0
    assert report["cpu_per_turn_vs_plain_adk"] == round(
        report["server_cpu_ms_per_turn"] / plain["server_cpu_ms_per_turn"], 2
    )
    assert "troupe / plain ADK" in result.stdout


def test_the_load_benchmark_refuses_a_server_off_this_machine(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(LOAD), "--url", "http://example.com:8000", "--sessions", "1",
         "--turns", "1", "--out", str(tmp_path / "x.json")],
        env=troupe_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "not a loopback address" in result.stderr + result.stdout
    assert not (tmp_path / "x.json").exists()
