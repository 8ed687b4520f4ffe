"""bench/replicas.py in miniature: replicas on one PostgreSQL behind its round-robin proxy."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from troupe_servers import TEST_VAULT_KEY, troupe_env

from fakes.needs import POSTGRES_FIX, can_start_postgres, missing

pytestmark = pytest.mark.serve

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
REPLICAS = Path(__file__).resolve().parents[2] / "bench" / "replicas.py"


def test_two_replicas_on_one_postgres_store_every_acknowledged_turn_once(tmp_path: Path) -> None:
    out = tmp_path / "replicas.json"
    cmd = [sys.executable, str(REPLICAS), "--replicas", "1,2", "--sessions", "2", "--turns", "2",
           "--concurrent", "2", "--rounds", "1", "--max-seconds", "120",
           "--out", str(out)]  # fmt: skip
    if os.environ.get(POSTGRES_ENV):  # CI's server; otherwise the bench starts its own
        cmd += ["--session-store", os.environ[POSTGRES_ENV]]
    elif not can_start_postgres():
        missing("PostgreSQL for bench/replicas.py (no TROUPE_TEST_POSTGRES_URL)", POSTGRES_FIX)
    result = subprocess.run(
        cmd, env=troupe_env(tmp_path / "data"), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "turns/s" in result.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    one, run = report["runs"]
    assert run["turns_acknowledged"] == run["turns_requested"] == 8
    assert run["acknowledged_turns_lost"] == 0
    assert run["turns_stored_twice"] == 0
    assert run["cross_replica_reads_disagreeing"] == 0
    # The proxy alternated: both replicas served turns.
    assert all(count > 0 for count in run["connections_per_replica"].values())
    # Scaling against the run with one replica, capped by what the CPUs allow,
    # over the steady part of each run (a window inside the whole run).
    assert run["server_cpu_ms_per_turn"] > 0 and one["server_cpu_ms_per_turn"] > 0
    assert 0 < run["steady_turns"] < run["turns_acknowledged"]
    assert run["steady_seconds"] <= run["wall_seconds"]
    expected = min(2 * one["steady_turns_per_second"], run["cpu_allows_turns_per_second"])
    assert abs(run["expected_turns_per_second"] - expected) <= 0.01
    steady_rate = run["steady_turns_per_second"]
    assert abs(run["scaling_efficiency"] - steady_rate / expected) <= 0.005


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server")
@pytest.mark.timeout(400)
def test_three_replicas_under_kill_9_and_sigstop_run_no_tool_twice_and_close_every_turn(
    tmp_path: Path,
) -> None:
    """The benchmark's chaos scenario in miniature, at the server's default
    max_connections: one replica killed, another stopped inside a tool past its lease,
    keyed retries of messages and approvals; bench/replica_chaos.py checks the rest."""
    out = tmp_path / "chaos.json"
    cmd = [sys.executable, str(REPLICAS), "--chaos", "--only", "chaos", "--sessions", "4",
           "--turns", "3", "--concurrent", "2", "--out", str(out),
           "--session-store", os.environ[POSTGRES_ENV]]  # fmt: skip
    env = {**troupe_env(tmp_path / "data"), "TROUPE_SECRET_KEY": TEST_VAULT_KEY}
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=380)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["max_connections"] == 100
    [run] = report["scenarios"]
    assert run["problems"] == []
    assert run["replica_fates"] == ["SIGKILL", "SIGSTOP, SIGCONT", "ran"]
    assert run["turns_answered"] + run["turns_interrupted_and_closed"] == run["turns_requested"]
    assert run["tools_run_twice"] == run["user_messages_stored_twice"] == 0
    assert run["approved_tools_run"] > 0
    assert run["stall"]["old_holder_writes_after_resume"] == 0


def test_the_replica_benchmark_refuses_a_database_off_this_machine(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPLICAS), "--out", str(tmp_path / "x.json"),
         "--session-store", "postgresql+asyncpg://troupe@db.example.com:5432/troupe"],
        env=troupe_env(tmp_path / "data"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "not a loopback address" in result.stderr + result.stdout
    assert not (tmp_path / "x.json").exists()


def _replicas_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_replicas", REPLICAS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_steady_window_leaves_out_the_first_and_last_tenth_of_the_turns() -> None:
    bench = _replicas_module()
    result = bench.RunResult(1)
    for second in range(1, 11):  # a turn acknowledged at every second from 1 to 10
        turn = bench.Turn("s", f"t{second}", "hi", acknowledged=True, finished=float(second))
        result.turns.append(turn)
    # The replicas spend 0.1 s of CPU each second; the others 0.05 s.
    result.samples = [bench.CpuSample(float(t), 0.1 * t, 0.02 * t, 0.03 * t) for t in range(12)]
    figures = bench.steady(result)
    assert figures["steady_turns"] == 8  # those after second 1, up to second 9
    assert figures["steady_seconds"] == 8.0
    assert figures["steady_turns_per_second"] == 1.0
    assert figures["steady_server_cpu_ms_per_turn"] == 100.0
    assert figures["steady_others_cpu_per_second"] == 0.05


def test_each_replica_count_is_quoted_from_its_median_round() -> None:
    bench = _replicas_module()
    rounds = [
        [{"replicas": 1, "turns_per_second": tps}, {"replicas": 2, "scaling_efficiency": eff}]
        for tps, eff in [(10.0, 0.8), (12.0, 1.1), (11.0, 0.95)]
    ]
    one, two = bench.median_runs(rounds)
    assert one["turns_per_second"] == 11.0
    assert two["scaling_efficiency"] == 0.95
