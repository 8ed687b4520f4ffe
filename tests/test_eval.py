"""``troupe eval``: the routing set, the runner's records, the scorer and the reports."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from troupe.cli.app import app
from troupe.errors import ConfigError
from troupe.evaluation import (
    KINDS,
    NO_ROUTE,
    EvaluationAbortedError,
    RequestResult,
    RoutingCase,
    build_eval_tree,
    evaluate_cases,
    load_cases,
    run_evaluation,
    score,
    spread,
)
from troupe.evaluation.report import METRIC_COLUMNS, format_cell, format_pct
from troupe.testing import ScriptedModel, call
from troupe.topology import DEFAULT_TOPOLOGY
from troupe_bench.stub_tools import stub_tools

AGENTS = set(DEFAULT_TOPOLOGY.agent_names())


def _case(text: str, *expected: str, kind: str = "plain", lang: str = "en") -> RoutingCase:
    return RoutingCase(text=text, expected=expected, kind=kind, lang=lang)


# -- the shipped routing set ------------------------------------------------


def test_routing_set_has_at_least_200_requests_without_duplicates() -> None:
    cases = load_cases()
    assert len(cases) >= 200
    assert len({c.text for c in cases}) == len(cases)


def test_routing_set_labels_every_default_agent_direct_answers_and_cannot() -> None:
    cases = load_cases()
    labels = {c.label for c in cases}
    assert labels == AGENTS | {"orchestrator", "cannot"}
    named = {name for c in cases for name in c.expected}
    assert named <= AGENTS | {"orchestrator", "cannot"}
    for name in labels - {"cannot"}:
        assert sum(c.label == name for c in cases) >= 20, name
    assert sum(c.label == "cannot" for c in cases) >= 2  # payments: no agent has the tool


def test_routing_set_has_every_kind_and_at_least_two_other_languages() -> None:
    cases = load_cases()
    assert {c.kind for c in cases} == set(KINDS)
    other_languages = {c.lang for c in cases} - {"en"}
    assert len(other_languages) >= 2
    for lang in other_languages:
        labels = {c.label for c in cases if c.lang == lang} - {"cannot"}
        assert labels == AGENTS | {"orchestrator"}, lang


def test_routing_set_marks_every_non_english_request_as_language_or_compound() -> None:
    # A compound request in another language counts with the compound ones:
    # it is scored on running every step.
    cases = load_cases()
    assert all(c.kind != "language" for c in cases if c.lang == "en")
    assert all(c.kind in ("language", "compound") for c in cases if c.lang != "en")


def test_compound_requests_accept_the_planner() -> None:
    compound = [c for c in load_cases() if c.kind == "compound"]
    assert len(compound) >= 10
    assert all("planner" in c.expected for c in compound)


def test_a_bad_routing_set_line_is_reported_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(
        '{"text": "hi", "expected": "orchestrator", "kind": "plain", "lang": "en"}\n'
        '{"text": "hash it", "expected": "vault", "kind": "slang", "lang": "en"}\n'
    )
    with pytest.raises(ConfigError, match=r"line 2: kind 'slang' is not one of plain"):
        load_cases(path)


def test_spread_takes_every_label_before_repeating_one() -> None:
    cases = load_cases()
    subset = spread(cases, 8)
    assert {c.label for c in subset} == AGENTS | {"orchestrator", "cannot"}
    assert spread(cases, None) == cases


# -- the scorer -------------------------------------------------------------


def _hand_made_results() -> list[RequestResult]:
    def result(expected: tuple[str, ...], routed: str | None, **kw: Any) -> RequestResult:
        return RequestResult(
            text=f"request {expected} {routed}",
            expected=expected,
            kind=str(kw.pop("kind", "plain")),
            lang=str(kw.pop("lang", "en")),
            routed=routed,
            **kw,
        )

    return [
        result(("operator",), "operator", model_calls=1, prompt_tokens=100, output_tokens=10),
        result(("operator",), "orchestrator", kind="typo", model_calls=1, prompt_tokens=100),
        result(
            ("vault",),
            "vault",
            invalid_names=["crypto_agent"],
            repairs=[("crypto_agent", "vault")],
            model_calls=1,
            lang="de",
            kind="language",
        ),
        result(("planner", "navigator"), "navigator", kind="compound", model_calls=1),
        result(("orchestrator",), None, error="RuntimeError: boom", model_calls=1),
        result(("librarian",), "librarian", invalid_names=["wiki"], model_calls=2),
    ]


def test_scorer_counts_accuracy_overall_and_per_expected_agent() -> None:
    report = score(_hand_made_results())
    overall = report["overall"]
    assert (overall["requests"], overall["correct"], overall["accuracy"]) == (6, 4, 0.666667)
    assert (overall["invalid_names"], overall["repairs"], overall["errors"]) == (2, 1, 1)
    assert overall["model_calls_per_request"] == round(7 / 6, 2)
    assert overall["tokens_per_request"] == round(210 / 6, 1)
    rows = {r["name"]: (r["requests"], r["correct"], r["accuracy"]) for r in report["per_agent"]}
    assert rows == {
        "operator": (2, 1, 0.5),
        "vault": (1, 1, 1.0),
        "librarian": (1, 1, 1.0),
        "planner": (1, 1, 1.0),
        "orchestrator": (1, 0, 0.0),
    }
    assert [r["name"] for r in report["per_agent"]] == [
        "operator",
        "vault",
        "librarian",
        "planner",
        "orchestrator",
    ]


def test_scorer_breaks_accuracy_down_by_kind_and_language() -> None:
    report = score(_hand_made_results())
    kinds = {r["name"]: (r["requests"], r["correct"]) for r in report["per_kind"]}
    assert kinds == {"plain": (3, 2), "typo": (1, 0), "compound": (1, 1), "language": (1, 1)}
    langs = {r["name"]: (r["requests"], r["correct"]) for r in report["per_language"]}
    assert langs == {"en": (5, 3), "de": (1, 1)}


def test_confusion_matrix_puts_expected_in_rows_and_the_route_taken_in_columns() -> None:
    matrix = score(_hand_made_results())["confusion"]
    assert matrix["expected"] == ["operator", "vault", "librarian", "planner", "orchestrator"]
    assert matrix["routed"] == [
        "operator",
        "navigator",
        "vault",
        "librarian",
        "orchestrator",
        NO_ROUTE,
    ]
    assert matrix["counts"] == [
        [1, 0, 0, 0, 1, 0],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 0, 1, 0, 0],
        [0, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1],
    ]


def test_scorer_counts_each_invalid_name_and_repair() -> None:
    report = score(_hand_made_results())
    assert report["invalid_names"] == {"crypto_agent": 1, "wiki": 1}
    assert report["repairs"] == {"crypto_agent -> vault": 1}


# -- the runner against scripted and offline models -------------------------


async def test_an_unresolvable_agent_name_is_recorded_as_invalid() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="wizard"),
            call("transfer_to_agent", agent_name="operator"),
        ]
    )
    [result] = await run_evaluation(
        [_case("list the files", "operator")], model=model, tools=stub_tools()
    )
    assert result.routed == "operator"
    assert result.correct
    assert result.invalid_names == ["wizard"]
    assert result.repairs == []
    assert result.model_calls == 2
    assert model.remaining == 0  # the specialist was never called


async def test_a_repaired_agent_name_counts_as_correct_and_as_a_repair() -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="browser_agent")])
    results = await run_evaluation(
        [_case("open example.com", "navigator")], model=model, tools=stub_tools()
    )
    assert results[0].routed == "navigator"
    assert results[0].correct
    assert results[0].invalid_names == ["browser_agent"]
    assert results[0].repairs == [("browser_agent", "navigator")]
    assert results[0].model_calls == 1
    report = score(results)
    assert report["repairs"] == {"browser_agent -> navigator": 1}
    assert report["invalid_names"] == {"browser_agent": 1}
    assert report["overall"]["accuracy"] == 1.0


async def test_a_direct_answer_is_routed_to_the_orchestrator() -> None:
    model = ScriptedModel(replies=["Hello! How can I help?"])
    [result] = await run_evaluation([_case("hi", "orchestrator")], model=model, tools=stub_tools())
    assert (result.routed, result.correct, result.invalid_names) == ("orchestrator", True, [])


async def test_the_run_stops_when_the_first_requests_all_fail() -> None:
    model = ScriptedModel(replies=[ValueError("API key not valid")] * 5)
    cases = [_case(f"request {i}", "operator") for i in range(8)]
    with pytest.raises(EvaluationAbortedError, match="API key not valid"):
        await run_evaluation(cases, model=model, tools=stub_tools())
    assert model.remaining == 0


async def test_concurrent_requests_come_back_in_order_with_the_same_routes() -> None:
    cases = spread(load_cases(), 14)
    root = build_eval_tree("offline", tools=stub_tools())
    one = await evaluate_cases(root, cases, concurrency=1)
    four = await evaluate_cases(root, cases, concurrency=4)
    assert [r.text for r in four] == [c.text for c in cases]
    assert [r.routed for r in four] == [r.routed for r in one]


async def test_offline_results_carry_token_counts_and_latency() -> None:
    results = await run_evaluation(spread(load_cases(), 3), model="offline", tools=stub_tools())
    assert all(r.prompt_tokens > 0 and r.output_tokens > 0 for r in results)
    assert all(r.latency_ms > 0 and r.model_calls == 1 for r in results)


# -- the command ------------------------------------------------------------


class _Tables(HTMLParser):
    """Cell texts of every table with an id, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.texts: dict[str, str] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ident = dict(attrs).get("id")
        if tag == "table" and ident:
            self._table = ident
            self.tables[ident] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []
        elif ident:
            self._id = ident
            self.texts[ident] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None
        elif self._id and tag == "p":
            self._id = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._id:
            self.texts[self._id] += data


def test_eval_command_writes_json_and_html_with_the_same_numbers(tmp_path: Path) -> None:
    out_json, out_html = tmp_path / "r" / "eval.json", tmp_path / "r" / "eval.html"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            "offline",
            "--limit",
            "20",
            "--out-json",
            str(out_json),
            "--out-html",
            str(out_html),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out_json.read_text())
    assert report["requests"] == len(report["results"]) == 20
    assert report["overall"]["correct"] == sum(r["correct"] for r in report["results"])
    assert sum(map(sum, report["confusion"]["counts"])) == 20
    assert {row["name"] for row in report["per_agent"]} == AGENTS | {"orchestrator", "cannot"}

    page = _Tables()
    page.feed(out_html.read_text())
    assert page.texts["overall-accuracy"] == format_pct(report["overall"]["accuracy"])
    html_rows = {row[0]: row[1:] for row in page.tables["per-agent"][1:]}
    for row in [*report["per_agent"], report["overall"]]:
        shown = [k for k, _ in METRIC_COLUMNS if k in report["overall"]]
        assert html_rows[row["name"]] == [format_cell(k, row[k]) for k in shown]
    confusion = page.tables["confusion"]
    assert confusion[0][1:] == report["confusion"]["routed"]
    assert [r[0] for r in confusion[1:]] == report["confusion"]["expected"]
    assert [[int(c) for c in r[1:]] for r in confusion[1:]] == report["confusion"]["counts"]
    for table, key in (("per-kind", "per_kind"), ("per-language", "per_language")):
        rows = [
            [r["name"], str(r["requests"]), str(r["correct"]), format_pct(r["accuracy"])]
            for r in report[key]
        ]
        assert page.tables[table][1:] == rows
    assert "<script" not in out_html.read_text()
    assert "Accuracy" in result.output and "overall" in result.output


def test_eval_command_names_a_missing_dataset_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    result = CliRunner().invoke(app, ["eval", "--model", "offline", "--dataset", str(missing)])
    assert result.exit_code == 2
    assert "nope.jsonl" in result.output and "--dataset" in result.output


def test_eval_command_scores_a_litellm_model_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.openai_server import serve, text_reply, tool_call_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(
        '{"text": "list the files", "expected": "operator", "kind": "plain", "lang": "en"}\n'
        '{"text": "hello", "expected": "orchestrator", "kind": "plain", "lang": "en"}\n'
        '{"text": "open example.com", "expected": "navigator", "kind": "plain", "lang": "en"}\n'
    )
    replies = [
        tool_call_reply("transfer_to_agent", {"agent_name": "operator"}, "c1"),
        text_reply("Hello! What can I do for you?"),
        tool_call_reply("transfer_to_agent", {"agent_name": "web_agent"}, "c2"),
    ]
    out_json = tmp_path / "eval.json"
    with serve(replies) as fake:
        result = CliRunner().invoke(
            app,
            [
                "eval",
                "--model",
                "openai/fake-model",
                "--api-base",
                fake.api_base,
                "--dataset",
                str(dataset),
                "--out-json",
                str(out_json),
                "--out-html",
                str(tmp_path / "eval.html"),
            ],
        )
    assert result.exit_code == 0, result.output
    assert len(fake.requests) == 3  # one orchestrator call each, no specialist calls
    report = json.loads(out_json.read_text())
    assert [r["routed"] for r in report["results"]] == ["operator", "orchestrator", "navigator"]
    assert report["repairs"] == {"web_agent -> navigator": 1}
    assert report["overall"]["accuracy"] == 1.0
    assert [(r["prompt_tokens"], r["output_tokens"]) for r in report["results"]] == [(10, 5)] * 3


def test_the_eval_tables_show_every_number_whole_at_80_columns(tmp_path: Path) -> None:
    out_json = tmp_path / "eval.json"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            "offline",
            "--limit",
            "14",
            "--out-json",
            str(out_json),
            "--out-html",
            str(tmp_path / "eval.html"),
        ],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    report = json.loads(out_json.read_text())
    overall = next(line for line in result.output.splitlines() if "overall" in line)
    for key in [k for k, _ in METRIC_COLUMNS if k in report["overall"]][:4]:
        assert format_cell(key, report["overall"][key]) in overall
    latencies = [line for line in result.output.splitlines() if "overall" in line][1]
    assert format_cell("latency_ms_p50", report["overall"]["latency_ms_p50"]) in latencies
