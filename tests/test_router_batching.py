"""Routing decisions are made off the event loop, and turns that arrive together
are encoded in one batch, with the same decisions as one at a time."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from troupe.routing.batching import DecisionBatcher
from troupe.routing.encoder import default_encoder
from troupe.routing.router import AgentProfile, RouteDecision, Router

DEV_SET = Path(__file__).resolve().parents[1] / "src" / "troupe" / "evaluation" / "data"

TEAM = [
    AgentProfile.build(
        "operator",
        texts=["Runs shell commands and works with files."],
        keywords=["run", "command", "file", "folder"],
        tool_names=["exec_shell", "fs_list", "fs_read"],
        parameter_names=["command", "path"],
    ),
    AgentProfile.build(
        "navigator",
        texts=["Opens web pages and reads them."],
        keywords=["website", "url", "page", "browse"],
        tool_names=["browser_navigate"],
        parameter_names=["url"],
    ),
    AgentProfile.build(
        "vault",
        texts=["Hashes, encrypts and keeps secrets."],
        keywords=["encrypt", "hash", "secret", "password"],
        tool_names=["crypto_hash", "secrets_set"],
        parameter_names=["text", "name"],
    ),
]


class GatedRouter:
    """Stands in for a Router: its first decision waits until released, and it
    records the size of every batch it is asked to decide."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.batches: list[list[str]] = []

    def decide_many(self, texts: list[str]) -> list[RouteDecision]:
        if not self.batches:
            self.release.wait(timeout=30)
        self.batches.append(list(texts))
        return [RouteDecision("defer", None, 0.0) for _ in texts]


async def test_turns_that_arrive_while_one_is_decided_are_decided_in_one_batch() -> None:
    batcher = DecisionBatcher()
    router = GatedRouter()
    first = asyncio.ensure_future(batcher.decide(cast(Router, router), "first"))
    await asyncio.sleep(0.05)  # the worker is now busy with the first
    rest = [
        asyncio.ensure_future(batcher.decide(cast(Router, router), f"turn {i}")) for i in range(10)
    ]
    await asyncio.sleep(0.05)
    router.release.set()

    decisions = await asyncio.gather(first, *rest)

    assert len(decisions) == 11
    assert router.batches == [["first"], [f"turn {i}" for i in range(10)]]


async def test_a_lone_turn_is_decided_at_once_without_waiting_for_company() -> None:
    batcher = DecisionBatcher()
    router = GatedRouter()
    router.release.set()

    await asyncio.wait_for(batcher.decide(cast(Router, router), "alone"), timeout=5)

    assert router.batches == [["alone"]]


async def test_a_failed_batch_fails_each_of_its_turns_and_the_next_batch_still_runs() -> None:
    class Broken(GatedRouter):
        def decide_many(self, texts: list[str]) -> list[RouteDecision]:
            self.batches.append(list(texts))
            if len(self.batches) == 1:
                raise RuntimeError("encoder exploded")
            return [RouteDecision("defer", None, 0.0) for _ in texts]

    batcher = DecisionBatcher()
    router = Broken()

    with pytest.raises(RuntimeError, match="encoder exploded"):
        await batcher.decide(cast(Router, router), "one")
    decision = await batcher.decide(cast(Router, router), "two")

    assert decision.kind == "defer"


def test_a_batch_decides_as_one_at_a_time_would() -> None:
    encoder = default_encoder()
    assert encoder is not None, "the bundled sentence encoder is a dependency"
    router = Router(TEAM, encoder)
    lines = (DEV_SET / "routing_eval.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines[:48]]

    batched = router.decide_many(texts)
    alone = [router.decide(t) for t in texts]

    def summary(d: RouteDecision) -> tuple[Any, ...]:
        return (d.kind, d.agent, round(d.confidence, 3))

    assert [summary(d) for d in batched] == [summary(d) for d in alone]


def test_the_batch_benchmark_reports_the_cost_of_a_decision_at_each_batch_size(
    tmp_path: Path,
) -> None:
    out = tmp_path / "router_batch.json"
    bench = Path(__file__).resolve().parents[1] / "bench" / "router_batch.py"
    result = subprocess.run(
        [sys.executable, str(bench), "--limit", "8", "--repeat", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip

    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [r["batch"] for r in rows] == [1, 4, 16, 32]
    assert all(r["cpu_ms_per_decision"] > 0 for r in rows)
    assert all(r["same_decision_as_alone"] == "8/8" for r in rows)
