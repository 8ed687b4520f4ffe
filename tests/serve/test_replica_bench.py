"""bench/replicas.py in miniature: replicas on one PostgreSQL behind its round-robin proxy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from troupe_servers import troupe_env

pytestmark = pytest.mark.serve

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
REPLICAS = Path(__file__).resolve().parents[2] / "bench" / "replicas.py"


def test_two_replicas_on_one_postgres_store_every_acknowledged_turn_once(tmp_path: Path) -> None:
    out = tmp_path / "replicas.json"
    cmd = [sys.executable, str(REPLICAS), "--replicas", "1,2", "--sessions", "2", "--turns", "2",
           "--concurrent", "2", "--max-seconds", "120", "--out", str(out)]  # fmt: skip
    if os.environ.get(POSTGRES_ENV):  # CI's server; otherwise the bench starts its own
        cmd += ["--session-store", os.environ[POSTGRES_ENV]]
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
    # Scaling against the run with one replica, capped by what the CPUs allow.
    assert run["server_cpu_ms_per_turn"] > 0 and one["server_cpu_ms_per_turn"] > 0
    expected = min(2 * one["turns_per_second"], run["cpu_allows_turns_per_second"])
    assert abs(run["expected_turns_per_second"] - expected) <= 0.01
    assert abs(run["scaling_efficiency"] - run["turns_per_second"] / expected) <= 0.005


def test_the_replica_benchmark_refuses_a_database_off_this_machine(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPLICAS), "--out", str(tmp_path / "x.json"),
         "--session-store", "postgresql+asyncpg://troupe@db.example.com:5432/troupe"],
        env=troupe_env(tmp_path / "data"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "not a loopback address" in result.stderr + result.stdout
    assert not (tmp_path / "x.json").exists()
