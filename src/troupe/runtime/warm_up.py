"""Pay a served process's one-off costs before it reports ready.

The first turn a fresh process runs costs about a second of CPU that no later
turn pays: ADK imports much of its flow machinery on first use, and the router
builds its phrase matrix and makes its first forward pass. A server that is
ready should answer its first user as fast as its hundredth, and a replica an
operator adds should add throughput from its first turn, so ``troupe serve``
pays all of that at start-up: one decision by the tree's router and one turn of
a throwaway agent on the offline model, in memory (no model provider, no
session store, nothing of the user's tree runs). ``troupe serve``, which owns
its process, then freezes what start-up built out of the garbage collector's
way (:func:`warm_up`'s ``freeze``).
"""

from __future__ import annotations

import gc
import logging
import time

from google.adk.agents import LlmAgent
from google.adk.agents.context_cache_config import ContextCacheConfig
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.genai import types

from ..models.offline import OfflineModel
from ..tree import TroupeAgent

logger = logging.getLogger("troupe.serve")

WARM_UP_APP = "troupe_warm_up"
"""The throwaway app's name; its session lives in memory and goes with it."""


async def warm_up(root: object, *, freeze: bool = False) -> float:
    """Warm the process for ``root``'s turns; the seconds it took.

    With ``freeze``, what start-up left alive is then moved out of the garbage
    collector's sight (:func:`gc.freeze`): the modules, the tree and the
    encoder live as long as the process, and without the freeze every full
    collection walks them again. That takes about a tenth off a served turn's
    CPU. It is process-wide (frozen objects are never collected), so only a
    caller that owns the process should ask for it. Never raises: a failure
    is logged and the first turn pays instead.
    """
    start = time.perf_counter()
    try:
        router = root.troupe_router if isinstance(root, TroupeAgent) else None
        if router is not None:
            await router.warm_up()
        await _throwaway_turn()
    except Exception as exc:  # the server works without it, only slower at first
        logger.warning("warm-up failed (the first turn will be slower): %s", exc)
    if freeze:
        gc.collect()  # what the warm-up left as garbage goes first
        gc.freeze()
    return time.perf_counter() - start


def _clock() -> str:
    """The time now (the throwaway agent has a tool, as the tree's agents do)."""
    return time.strftime("%H:%M")


async def _throwaway_turn() -> None:
    # A tool and a sub-agent, as the tree's agents have: ADK imports the code
    # for each on first use.
    helper = LlmAgent(name="warm_up_helper", model=OfflineModel())
    agent = LlmAgent(
        name="warm_up",
        model=OfflineModel(),
        instruction="Say hello.",
        tools=[_clock],
        sub_agents=[helper],
    )
    app = App(name=WARM_UP_APP, root_agent=agent, context_cache_config=ContextCacheConfig())
    runner = InMemoryRunner(app=app)
    try:
        session = await runner.session_service.create_session(
            app_name=WARM_UP_APP, user_id=WARM_UP_APP
        )
        message = types.Content(role="user", parts=[types.Part(text="hello")])
        async for _ in runner.run_async(
            user_id=WARM_UP_APP, session_id=session.id, new_message=message
        ):
            pass
    finally:
        await runner.close()
