"""The development and test routing sets stay apart: nothing is tuned on the test set.

The router's examples (``routing/data/examples.yaml`` and each topology
agent's ``examples``) and the topology's keywords may be modelled on the
development set. A request of the frozen
test set must never show up in them, as written or nearly so; and the test
set itself changes only on purpose (its digest is pinned here).
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources

import pytest

from troupe.evaluation.dataset import BUILTIN_SETS, load_cases
from troupe.routing.router import GREETINGS, OPEN_QUESTIONS
from troupe.topology import resolve_topology

TEST_SET_SHA256 = "2c93658f461073672c29fc5a4b8899ec79b9f33fff7f6bf88b5ff15c25d2fe41"
"""Change only with a note saying why: a new digest means a new test set.

Last changed (issue 18, item 2) for labels only, no request text: the three
requests for things no agent has a tool for (two payments, a flight) expect
``cannot`` instead of a direct answer, and each compound request names the
agent of each step (``steps``), as the eval now scores what ran, not the route."""
NEAR = 0.8
"""Word overlap (Jaccard) from which an example counts as a copy of a test request."""
APART = 0.5
"""The test set's requests share less than this with every development request."""


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _words(text: str) -> frozenset[str]:
    return frozenset(_normalised(text).split())


def _near(a: str, b: str, bound: float) -> bool:
    left, right = _words(a), _words(b)
    return bool(left and right) and len(left & right) / len(left | right) >= bound


def _tuned_texts() -> list[str]:
    """Everything the router is tuned with: its examples and every topology's
    keywords, match phrases and example requests."""
    texts = [*GREETINGS, *OPEN_QUESTIONS]
    for name in ("default", "classic"):
        for agent in resolve_topology(name).agents:
            texts += [*agent.keywords, *agent.match_phrases, *agent.examples, agent.description]
    return texts


def test_the_leak_check_reads_every_agents_example_requests() -> None:
    examples = [e for agent in resolve_topology("default").agents for e in agent.examples]
    assert examples and set(examples) <= set(_tuned_texts())


def test_the_frozen_test_set_has_not_changed() -> None:
    data = resources.files("troupe.evaluation") / "data" / BUILTIN_SETS["test"]
    assert hashlib.sha256(data.read_bytes()).hexdigest() == TEST_SET_SHA256


@pytest.mark.parametrize("case", load_cases("test"), ids=lambda case: case.text[:40])
def test_no_test_request_leaked_into_the_routers_examples_or_keywords(case: object) -> None:
    text = case.text  # type: ignore[attr-defined]
    request = _normalised(text)
    for tuned in _tuned_texts():
        phrase = _normalised(tuned)
        assert request not in phrase, f"{text!r} is in the router's examples or keywords"
        assert not _near(text, tuned, NEAR), f"{text!r} is nearly {tuned!r}"


def test_the_test_set_shares_no_request_with_the_development_set() -> None:
    dev = [case.text for case in load_cases("dev")]
    for case in load_cases("test"):
        assert not any(_near(case.text, seen, APART) for seen in dev), case.text


def test_both_sets_cover_every_agent_and_the_orchestrator() -> None:
    for name in BUILTIN_SETS:
        labels = {case.label for case in load_cases(name)}
        assert labels - {"cannot"} == {
            agent.name for agent in resolve_topology("default").agents
        } | {"orchestrator"}, name


def test_troupe_eval_scores_the_test_set_unless_told_otherwise() -> None:
    import inspect

    from troupe.cli.eval import eval_command
    from troupe.evaluation.dataset import DEFAULT_SET

    assert DEFAULT_SET == "test"
    assert inspect.signature(eval_command).parameters["dataset"].default == DEFAULT_SET
