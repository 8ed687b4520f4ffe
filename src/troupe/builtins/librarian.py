"""Librarian tools: stored knowledge, learnings, the knowledge graph and skills."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..stores.embeddings import EmbedderStatus, default_embedder
from ..stores.knowledge import KnowledgeStore
from ._args import BadArgument, guarded, int_arg, name_arg, optional_text, tags_arg, text_arg
from ._toolset import Toolset, ToolSpec, tool_list_factory

MAX_RESULTS = 50
MAX_DEPTH = 5
MAX_GRAPH_FACTS = 200
MAX_SKILL_CHARS = 20_000
_ONE_OF = "exactly one of instruction='steps in prose' or script='shell commands'"


class LibrarianTools(Toolset):
    """save_knowledge, search_knowledge, rag_query, graph_*, save_learning and skills.

    ``embedder`` is called on the first semantic query; the default loads the
    bundled MiniLM model when the ``embeddings`` extra is installed.
    """

    specs = tuple(
        ToolSpec(name)
        for name in (
            "save_knowledge",
            "search_knowledge",
            "rag_query",
            "graph_add_fact",
            "graph_traverse",
            "save_learning",
            "create_skill",
            "list_skills",
        )
    )

    def __init__(
        self,
        store: KnowledgeStore,
        *,
        embedder: Callable[[], EmbedderStatus] = default_embedder,
    ) -> None:
        self.store = store
        self.embedder = embedder

    @guarded
    def save_knowledge(
        self, text: str, tags: list[str] | None = None, source: str | None = None
    ) -> dict[str, Any]:
        """Save a piece of knowledge (a note, a fact in prose, a document excerpt) to the
        knowledge base, with optional tags and the source it came from."""
        entry = self.store.add_entry(
            kind="knowledge",
            text=text_arg("text", text, example="SQLite's WAL mode lets readers run during writes"),
            tags=tags_arg("tags", tags),
            source=optional_text("source", source, example="https://sqlite.org/wal.html"),
        )
        return {"saved": entry, "entries_in_store": self.store.count()}

    @guarded
    def search_knowledge(self, query: str, limit: int = 5) -> dict[str, Any]:
        """Full-text search of the knowledge base and learnings, best match first
        (BM25 ranking; a higher score is a better match)."""
        q = text_arg("query", query, example="sqlite wal mode")
        n = int_arg("limit", limit, default=5, low=1, high=MAX_RESULTS)
        results = self.store.search(q, limit=n)
        out: dict[str, Any] = {"query": q, "method": self.store.search_method, "results": results}
        if not results:
            out["note"] = "nothing in the knowledge base matches; save some with save_knowledge"
        return out

    @guarded
    def rag_query(self, question: str, limit: int = 5) -> dict[str, Any]:
        """Semantic search of the knowledge base: the stored passages closest in meaning
        to a question, to answer it from (falls back to full-text search without the
        embeddings extra)."""
        q = text_arg("question", question, example="how do readers and writers share a database?")
        n = int_arg("limit", limit, default=5, low=1, high=MAX_RESULTS)
        status = self.embedder()
        if status.embedder is None:
            return {
                "question": q,
                "method": self.store.search_method,
                "note": f"{status.reason}; showing full-text results instead",
                "results": self.store.search(q, limit=n),
            }
        return {
            "question": q,
            "method": f"semantic ({status.embedder.name}, cosine similarity)",
            "results": self.store.semantic_search(q, limit=n, embedder=status.embedder),
        }

    @guarded
    def graph_add_fact(self, subject: str, predicate: str, object: str) -> dict[str, Any]:
        """Add a fact to the knowledge graph as subject, predicate and object, e.g.
        subject 'Paris', predicate 'is the capital of', object 'France'."""
        parts = (
            text_arg("subject", subject, example="Paris", max_chars=500),
            text_arg("predicate", predicate, example="is the capital of", max_chars=200),
            text_arg("object", object, example="France", max_chars=500),
        )
        if len({p.lower() for p in parts}) == 1:
            raise BadArgument(
                "subject, predicate and object are the same text",
                "the fact split in three, e.g. subject='Paris', predicate='is the capital "
                "of', object='France'",
            )
        return self.store.add_fact(*parts)

    @guarded
    def graph_traverse(self, node: str, depth: int = 2) -> dict[str, Any]:
        """Show what the knowledge graph knows around a node: the facts reachable within
        `depth` hops (1-5), following links in both directions."""
        start = text_arg("node", node, example="Paris", max_chars=500)
        hops = int_arg("depth", depth, default=2, low=1, high=MAX_DEPTH)
        result = self.store.traverse(start, depth=hops, max_facts=MAX_GRAPH_FACTS)
        if not result["facts"] and (named := self.store.node_named_in(start)) is not None:
            # "the graph around Paris" names the node Paris; walk from it.
            result = self.store.traverse(named, depth=hops, max_facts=MAX_GRAPH_FACTS)
            result["note"] = f"no node is called {start!r}; walked from {named!r}, named in it"
        if not result["facts"]:
            result["note"] = f"no facts mention {start!r}; add some with graph_add_fact"
        return result

    @guarded
    def save_learning(
        self, text: str, context: str | None = None, tags: list[str] | None = None
    ) -> dict[str, Any]:
        """Record a lesson learned (what worked, what failed and why) so the team can
        find it later with search_knowledge; `context` says where it came from."""
        entry = self.store.add_entry(
            kind="learning",
            text=text_arg("text", text, example="pytest needs -p no:cacheprovider here"),
            tags=tags_arg("tags", tags),
            source=optional_text("context", context, example="CI run on 2025-01-31"),
        )
        return {"saved": entry}

    @guarded
    def create_skill(
        self,
        name: str,
        instruction: str | None = None,
        script: str | None = None,
        description: str | None = None,
        replace: bool = False,
    ) -> dict[str, Any]:
        """Save a reusable skill under a name: either an `instruction` (steps to follow)
        or a shell `script` the operator runs with skill_run. Set replace=true to
        overwrite an existing skill."""
        skill_name = name_arg("name", name, example="backup-notes")
        steps = optional_text("instruction", instruction, example="1. list files 2. ...")
        code = optional_text("script", script, example="tar czf notes.tgz notes/")
        if steps is not None and code is not None:
            raise BadArgument("both instruction and script were given", _ONE_OF)
        body = steps if steps is not None else code
        if body is None:
            raise BadArgument("neither instruction nor script was given", _ONE_OF)
        if len(body) > MAX_SKILL_CHARS:
            raise BadArgument(
                f"the skill is {len(body)} characters long", f"at most {MAX_SKILL_CHARS} characters"
            )
        about = optional_text("description", description, example="Back up the notes folder")
        if not isinstance(replace, bool):
            raise BadArgument(f"replace must be true or false, got {replace!r}", "a boolean")
        saved = self.store.save_skill(
            name=skill_name,
            kind="script" if code is not None else "instruction",
            body=body,
            description=about or body.splitlines()[0][:120],
            replace=replace,
        )
        return {"skill": saved, "run_with": f"skill_run(name={skill_name!r})"}

    @guarded
    def list_skills(self) -> dict[str, Any]:
        """List the saved skills: name, kind (instruction or script) and description."""
        skills = self.store.list_skills()
        out: dict[str, Any] = {"skills": skills, "count": len(skills)}
        if not skills:
            out["note"] = "no skills yet; create one with create_skill"
        return out


librarian_tools = tool_list_factory(
    LibrarianTools,
    "librarian_tools",
    "save_knowledge, search_knowledge, rag_query, graph_*, save_learning and skills;"
    " the arguments are those of :class:`LibrarianTools`.",
)
