"""An Assistant over a scripted model, and the events of one turn.

Most runtime tests build the same thing: a tree over some tools (the
benchmarks' stub tools unless a test brings its own) whose every agent is a
:class:`~troupe.testing.ScriptedModel`, run one message through it, and read
the events. They share these two helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.events.event import Event

from troupe import Assistant, Config, Tool, build_agent_tree
from troupe.stores.traces import TraceStore
from troupe.testing import ScriptedModel
from troupe_bench.stub_tools import stub_tools


def scripted_assistant(
    model: ScriptedModel,
    tools: Sequence[Tool] | None = None,
    *,
    trace_store: TraceStore | None = None,
    **options: Any,
) -> Assistant:
    """An Assistant over ``tools`` (default: the stub tools) with ``model`` on every
    agent; ``options`` are :class:`troupe.Config` fields (retries do not wait
    unless ``retry_base_delay`` says so)."""
    options.setdefault("retry_base_delay", 0.0)
    config = Config(tools=stub_tools() if tools is None else list(tools), model=model, **options)
    return Assistant(build_agent_tree(config), trace_store=trace_store)


async def turn_events(assistant: Assistant, text: str, session: str = "s1") -> list[Event]:
    """Every event of one turn on ``text`` in ``session``."""
    return [event async for event in assistant.run(session, text)]
