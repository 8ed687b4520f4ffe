"""The development and test routing sets stay apart: nothing is tuned on the test set.

The router's examples (``routing/data/examples.yaml`` and each topology
agent's ``examples``), the topology's keywords and match phrases, the
router's word lists (``routing/data/words.yaml``) and the offline model's
tables may be modelled on the development sets. A request of a frozen test
set (troupe's, and each benchmark team's ``test.jsonl``) must never show up
in them, as written or nearly so, and no run of four words may be shared by
a test request and that material unless a development request has it too;
a word of a word list that only test requests use is a leak unless it is
listed below with the reason it was there before. The test sets change only
on purpose (their digests are pinned here).
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import yaml

from troupe.evaluation.dataset import BUILTIN_SETS, load_cases
from troupe.routing.router import GREETINGS, OPEN_QUESTIONS, WORLD_ACTIONS
from troupe.topology import resolve_topology

TEST_SET_SHA256 = "2c93658f461073672c29fc5a4b8899ec79b9f33fff7f6bf88b5ff15c25d2fe41"
"""Change only with a note saying why: a new digest means a new test set.

Last changed (issue 18, item 2) for labels only, no request text: the three
requests for things no agent has a tool for (two payments, a flight) expect
``cannot`` instead of a direct answer, and each compound request names the
agent of each step (``steps``), as the eval now scores what ran, not the route."""
TEAMS = Path(__file__).parent.parent / "bench" / "teams"
TEAM_TEST_SHA256 = {
    "shop": "2f73009eae0a4417a70c1d76fb6eca61846e900bf39bf14d639a3475c55491e3",
    "travel": "a96e1dc6eb5bf0409f8e43f2acbc51a8a2235d6b5ac169b35967a76ba76ba00e",
}
"""The benchmark teams' frozen halves, as their helper wrote and split them."""
RUN = 4
"""Words in a row that a test request may share with the tuning material only
when a development request shares them too."""
TEST_ONLY_WORDS_BEFORE = {
    "afternoon": "the stand-in's greetings ('good afternoon') since its first version",
    "change": "_CHANGES reads tool names ('change_address'), not requests",
    "cheers": "greeting_words: the router's greetings since its first version (89e3bcd)",
    "execute": "the stand-in's run verbs since its first version",
    "format": "keys of a tool result the stand-in skips ('format: text')",
    "meinem": "personal_words: the German possessives, written as a set",
    "meu": "personal_words: the Portuguese possessives, written as a set",
    "wir": "personal_words: the German pronouns, written as a set",
    "past": "common_words: 'past' is itself, never a typo of 'paste'",
    "response": "tool_words: 'response' in a tool's name says nothing of its work",
    "se": "WEB_DOMAINS: Sweden's top-level domain, read only after a host's dot (1377a74)",
}
"""Words of the word lists that requests of troupe's test set use and its
development set does not, each with why it is in its list: none was added
for a test request."""
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
    texts = [*GREETINGS, *OPEN_QUESTIONS, *WORLD_ACTIONS]
    for name in ("default", "classic"):
        for agent in resolve_topology(name).agents:
            texts += [*agent.keywords, *agent.match_phrases, *agent.examples, agent.description]
    return texts


def _words_of(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _runs(text: str, size: int = RUN) -> set[str]:
    words = _words_of(text)
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


def _offline_tables() -> Iterator[str]:
    """Every string table of the offline model, and the words of its patterns."""
    for name in ("troupe.models.offline", "troupe.models._offline_args"):
        for key, value in vars(importlib.import_module(name)).items():
            if key.startswith("__"):
                continue
            if isinstance(value, tuple | list | set | frozenset):
                yield from (v for v in value if isinstance(v, str))
            elif isinstance(value, dict):
                for entry, item in value.items():
                    yield from (x for x in (entry, item) if isinstance(x, str))
            elif isinstance(value, re.Pattern):
                yield " ".join(re.findall(r"[^\W\d_]+", value.pattern))


def _word_lists() -> list[str]:
    data = resources.files("troupe.routing") / "data" / "words.yaml"
    return [str(w) for group in yaml.safe_load(data.read_text()).values() for w in group["words"]]


def _topology_texts(path: str) -> list[str]:
    texts: list[str] = []
    for agent in resolve_topology(path).agents:
        texts += [*agent.keywords, *agent.match_phrases, *agent.examples, *agent.synonyms]
        texts += [agent.description, agent.accepts, agent.returns, *agent.capabilities.values()]
    return texts


SETS = {
    "default": ("dev", "test", ["default", "classic"]),
    **{
        team: (
            str(TEAMS / team / "dev.jsonl"),
            str(TEAMS / team / "test.jsonl"),
            [str(TEAMS / team / "topology.yaml")],
        )
        for team in TEAM_TEST_SHA256
    },
}


def _material(topologies: list[str]) -> list[str]:
    """Everything a set's router and stand-in are written with."""
    texts = [*GREETINGS, *OPEN_QUESTIONS, *_word_lists(), *_offline_tables()]
    for topology in topologies:
        texts += _topology_texts(topology)
    return texts


@pytest.mark.parametrize("name", list(SETS))
def test_no_run_of_four_words_is_shared_with_a_test_request_but_not_with_dev(name: str) -> None:
    dev, test, topologies = SETS[name]
    known = set().union(*(_runs(case.text) for case in load_cases(dev)))
    tuned = set().union(*(_runs(text) for text in _material(topologies)))
    leaks = [
        (run, case.text)
        for case in load_cases(test)
        for run in sorted(_runs(case.text) & tuned - known)
    ]
    assert not leaks, f"phrases of {name}'s test set in the tuning material: {leaks}"


def test_a_word_list_word_only_test_requests_use_was_there_before() -> None:
    lists = {w.lower() for w in _word_lists()} | {
        w for text in _offline_tables() for w in _words_of(text)
    }
    dev = {w for case in load_cases("dev") for w in _words_of(case.text)}
    found = {w for case in load_cases("test") for w in _words_of(case.text)} & lists - dev
    assert found <= set(TEST_ONLY_WORDS_BEFORE), sorted(found - set(TEST_ONLY_WORDS_BEFORE))


@pytest.mark.parametrize("team", list(TEAM_TEST_SHA256))
def test_a_benchmark_teams_frozen_half_has_not_changed(team: str) -> None:
    data = (TEAMS / team / "test.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == TEAM_TEST_SHA256[team]


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
