"""The router benchmark's parts: per-request cost, instruction size and the printed table."""

from __future__ import annotations

from pathlib import Path

from troupe.routing.router import AgentProfile, Router
from troupe_bench.router_bench import (
    INSTRUCTION_BUDGET,
    format_router_bench,
    instruction_size,
    per_request_cost,
)

TEAM = [
    AgentProfile.build("operator", keywords=["run", "file"], parameter_names=["command"]),
    AgentProfile.build("navigator", keywords=["website"], parameter_names=["url"]),
]


def test_per_request_cost_reports_single_and_batched_milliseconds() -> None:
    cost = per_request_cost(Router(TEAM), ["run `ls`", "open https://example.com", "hello"])

    assert cost["requests"] == 3
    assert 0 < cost["single_ms_p50"] <= cost["single_ms_p95"]
    assert cost["batched_ms_per_request"] > 0


def test_instruction_size_counts_characters_and_tokens_of_the_six_agent_tree(
    tmp_path: Path,
) -> None:
    size = instruction_size(tmp_path)

    assert len(size["agents"]) == 6
    assert 0 < size["tokens"] < size["characters"] <= INSTRUCTION_BUDGET
    assert size["anchor_characters"] == 5800


def test_the_printed_table_names_cold_start_cost_and_the_anchor() -> None:
    point = {"threshold": 0.12, "decided": 5, "correct": 5, "coverage": 0.5, "precision": 1.0}
    result = {
        "encoder": "use",
        "cold_start": {"median_s": 1.234, "runs": 3},
        "chat_startup": {"message": "hi", "runs": 3, "median_s": {"router off": 5.0}},
        "first_message": {"idle_s": 5.0, "runs": 3, "median_s": {"preloaded": 0.15}},
        "per_request": {
            "single_ms_p50": 1.0, "single_ms_p95": 2.0,
            "batched_ms_per_request": 0.5, "requests": 10,
        },
        "signals": [{"router": "all", "top1_accuracy": 0.9, "coverage": 0.5, "precision": 1.0}],
        "sweep": [point],
        "default_threshold": 0.12,
        "at_default": point,
        "best_at_min_precision": {"min_precision": 0.98, **point},
        "held_out": [
            {"held_out_half": 0, "threshold": 0.12, "calibration_half": point, "held_out": point}
        ],
        "instruction": {
            "agents": ["a"] * 6, "characters": 4580, "tokens": 1040,
            "tokenizer": "o200k_base", "anchor_characters": 5800, "budget_characters": 4600,
        },
    }  # fmt: skip

    table = format_router_bench(result)

    assert "cold start (fresh process to first vector): 1.234 s" in table
    assert "per request: 1.00 ms p50" in table
    assert "  router off" in table and "5.00 s" in table
    assert "first message to decision, 5 s after start (median of 3):" in table
    assert "half   0 |      0.12 |     50.0 |     100.0 |" in table
    assert "4580 characters, 1040 tokens (o200k_base); anchor 5800 characters" in table
