"""Chronicler tools: per-user memories and observations that survive restarts.

The user is the one ADK runs the turn for (``tool_context.user_id``); ADK
injects ``tool_context`` and hides it from the model, so one user's memory
cannot be read by asking for another's.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from google.adk.tools.tool_context import ToolContext

from ..stores.memory import MEMORY, OBSERVATION, MemoryStore
from ..stores.timestamps import iso
from ._args import guarded, int_arg, optional_text, tags_arg, text_arg, time_arg
from ._toolset import Toolset, ToolSpec, tool_list_factory

DEFAULT_USER = "user"
"""The user id when a tool is called outside an ADK run (e.g. directly from Python)."""
MAX_RECALL = 100
MAX_REFLECT = 500
_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
_COMMON = frozenset(
    (  # noqa: SIM905 (one string reads better than a column of quoted words)
        "the and for are was were with that this from have has had not but you your "
        "they them their there then than when what which who will would could should "
        "into onto about after before again also just only very more most some such "
        "its it's our out all any can did does done been being over under"
    ).split()
)


def _user(tool_context: ToolContext | None) -> str:
    user = getattr(tool_context, "user_id", None) if tool_context is not None else None
    return str(user) if user else DEFAULT_USER


class ChroniclerTools(Toolset):
    """memory_store, memory_recall, observe_event and reflect_summary over a MemoryStore."""

    specs = (
        ToolSpec("memory_store"),
        ToolSpec("memory_recall"),
        ToolSpec("observe_event"),
        ToolSpec("reflect_summary"),
    )

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @guarded
    def memory_store(
        self, text: str, tags: list[str] | None = None, tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Remember something about the user or the conversation (a preference, a
        decision, a detail to recall later), with optional tags."""
        user = _user(tool_context)
        saved = self.store.add(
            user_id=user,
            kind=MEMORY,
            text=text_arg("text", text, example="prefers answers in French"),
            tags=tags_arg("tags", tags),
        )
        return {"stored": saved, "memories": self.store.count(user_id=user, kind=MEMORY)}

    @guarded
    def memory_recall(
        self,
        query: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 10,
        tool_context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Recall the user's memories: matching `query` (best match first) or the newest,
        optionally within a time range (`since`/`until`: ISO dates, 'today',
        'yesterday', or ages such as '2h' or '3 days')."""
        q = optional_text("query", query, example="coffee")
        start = time_arg("since", since)
        end = time_arg("until", until)
        n = int_arg("limit", limit, default=10, low=1, high=MAX_RECALL)
        if start is not None and end is not None and start > end:
            return {
                "error": f"since ({iso(start)}) is after until ({iso(end)})",
                "accepted": "a since that is earlier than until",
            }
        found = self.store.recall(
            user_id=_user(tool_context),
            kinds=(MEMORY,),
            query=q,
            since=start,
            until=end,
            limit=n,
        )
        out: dict[str, Any] = {"memories": found, "count": len(found)}
        if q:
            out["query"] = q
        if start is not None or end is not None:
            out["range"] = {
                "since": iso(start) if start is not None else None,
                "until": iso(end) if end is not None else None,
            }
        if not found:
            out["note"] = "no memories match" if q or start or end else "no memories stored yet"
        return out

    @guarded
    def observe_event(
        self, event: str, category: str | None = None, tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Record an observation of something that happened (a command failed, the user
        changed plans), with an optional category, for reflect_summary."""
        cat = optional_text("category", category, example="deploy")
        saved = self.store.add(
            user_id=_user(tool_context),
            kind=OBSERVATION,
            text=text_arg("event", event, example="the nightly build failed on test_io"),
            category=(cat or "").lower()[:64],
        )
        return {"observed": saved}

    @guarded
    def reflect_summary(
        self, since: str | None = None, limit: int = 50, tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Summarize the user's recent observations: how many, over what time, by
        category, the recurring terms and the latest ones."""
        start = time_arg("since", since)
        n = int_arg("limit", limit, default=50, low=1, high=MAX_REFLECT)
        recent = self.store.recall(
            user_id=_user(tool_context),
            kinds=(OBSERVATION,),
            query=None,
            since=start,
            until=None,
            limit=n,
        )
        if not recent:
            return {
                "observations": 0,
                "summary": "no observations recorded"
                + (f" since {iso(start)}" if start is not None else "")
                + "; record some with observe_event",
            }
        return _summarize(recent)


chronicler_tools = tool_list_factory(
    ChroniclerTools,
    "chronicler_tools",
    "memory_store, memory_recall, observe_event and reflect_summary over ``store``.",
)


def _summarize(recent: list[dict[str, Any]]) -> dict[str, Any]:
    """A summary of observations given newest first."""
    categories = Counter(r.get("category") or "uncategorized" for r in recent)
    terms: Counter[str] = Counter()
    for record in recent:
        # Each observation counts a word once, so one long entry does not dominate.
        terms.update({w for w in _WORD.findall(record["text"].lower()) if w not in _COMMON})
    recurring = [(w, c) for w, c in terms.most_common(8) if c > 1]
    first, last = recent[-1]["at"], recent[0]["at"]
    parts = [f"{len(recent)} observation{'s' if len(recent) != 1 else ''} from {first} to {last}"]
    if len(categories) > 1 or "uncategorized" not in categories:
        parts.append(
            "by category: "
            + ", ".join(f"{name} ({count})" for name, count in categories.most_common())
        )
    if recurring:
        parts.append("recurring: " + ", ".join(f"{w} ({c})" for w, c in recurring))
    parts.append(f"latest: {recent[0]['text']}")
    return {
        "observations": len(recent),
        "from": first,
        "to": last,
        "by_category": dict(categories.most_common()),
        "recurring_terms": [w for w, _ in recurring],
        "latest": [{"at": r["at"], "event": r["text"]} for r in recent[:5]],
        "summary": "; ".join(parts) + ".",
    }
