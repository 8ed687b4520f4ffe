"""The one ADK ``App`` every door runs: the tree plus troupe's runtime plugins.

``troupe chat`` (through the :class:`~troupe.runtime.assistant.Assistant`),
``troupe serve`` (``/run``, ``/run_sse``, the dev UI), the A2A endpoint and
``adk web`` / ``adk run`` on ``adk_agents/`` all build their runner from
:func:`build_app`, so the guards, usage counts, time limit and traces hold
whichever way a turn comes in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.context_cache_config import ContextCacheConfig
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin

from ..config import Config
from ..errors import ConfigError
from ..guards.turn import Guards
from ..plan_steps import PlanStepApprovals
from ..stores.session_lock import LeaseFencePlugin, SessionQueuePlugin
from ..stores.sessions import store_guard
from ..stores.traces import TraceStore
from .mcp_conflicts import McpConflictPlugin
from .plugins import GuardPlugin, RouterPlugin, TracePlugin, TurnTimeoutPlugin, UsagePlugin
from .recovery import RecoveryPlugin

DEFAULT_APP_NAME = "troupe"
"""The ADK app name troupe runs under (``/apps/troupe/...`` when served)."""

PluginFactory = Callable[[Guards, "TraceStore | None"], BasePlugin]
"""Builds one runtime plugin from the tree's guards and the trace store."""

RUNTIME_PLUGINS: tuple[tuple[str, PluginFactory], ...] = (
    # First: a turn waits for the one before it on the same session before
    # anything else of it runs (its time limit included).
    ("session_queue", lambda _guards, _store: SessionQueuePlugin(store_guard)),
    # Usage first: it only observes, and a plugin that answers in place of
    # the model (a guard's stop) ends the chain for the ones after it.
    ("usage", lambda guards, _store: UsagePlugin(guards)),
    ("guards", lambda guards, _store: GuardPlugin(guards)),
    ("mcp_conflicts", lambda _guards, _store: McpConflictPlugin()),
    # A dangerous tool inside a plan step asks through the planner's call.
    ("plan_step_approvals", lambda _guards, _store: PlanStepApprovals()),
    ("recovery", lambda guards, _store: RecoveryPlugin(guards)),
    ("turn_timeout", lambda guards, _store: TurnTimeoutPlugin(guards)),
    # Right before a tool runs (after any plugin that answers in its place):
    # the turn must still hold its session's lease, and the tool is counted.
    ("lease_fence", lambda _guards, _store: LeaseFencePlugin()),
    # Last: it writes the trace once the others have recorded the turn.
    ("trace", lambda guards, store: TracePlugin(guards, store)),
)
"""troupe's runtime plugins, in the order ADK runs them."""


def runtime_plugins(guards: Guards, trace_store: TraceStore | None = None) -> list[BasePlugin]:
    """One instance of each of :data:`RUNTIME_PLUGINS` for a tree's guards."""
    return [factory(guards, trace_store) for _name, factory in RUNTIME_PLUGINS]


def tree_guards(root: BaseAgent) -> Guards | None:
    """The guards troupe attached to a tree it built (None for other agents)."""
    guards = getattr(root, "troupe_guards", None)
    return guards if isinstance(guards, Guards) else None


def build_app(
    source: Config | BaseAgent,
    *,
    name: str = DEFAULT_APP_NAME,
    trace_store: TraceStore | None = None,
    plugins: Sequence[BasePlugin] = (),
    prompt_cache: bool = True,
) -> App:
    """The ADK ``App`` for a troupe tree, with the runtime plugins registered.

    Args:
        source: a :class:`~troupe.Config` (the tree is built from it) or a
            root agent, usually from :func:`~troupe.build_agent_tree`. An
            agent troupe did not build gets no runtime plugins.
        name: the ADK app name.
        trace_store: where invocations no caller owns write their traces
            (None: those traces are not kept).
        plugins: more plugins, run after troupe's own.
        prompt_cache: ask providers that cache prompts to reuse the instructions
            between calls (ADK's ``context_cache_config``).

    Raises:
        ConfigError: ``source`` is neither a Config nor an ADK agent, or
            ``name`` is not a valid ADK app name.
    """
    if isinstance(source, Config):
        from ..tree import build_agent_tree

        root: BaseAgent = build_agent_tree(source)
    elif isinstance(source, BaseAgent):
        root = source
    else:
        raise ConfigError(
            f"build_app needs a troupe Config or an ADK agent, not {type(source).__name__} "
            f"{source!r}; pass build_agent_tree(config) or the Config itself."
        )
    guards = tree_guards(root)
    own = runtime_plugins(guards, trace_store) if guards is not None else []
    router = getattr(root, "troupe_router", None)
    if router is not None:
        # First: a routed turn skips the orchestrator's model call, and the
        # plugins after it then neither count nor time a call.
        own.insert(0, RouterPlugin(router.before_model, router.after_model))
    try:
        return App(
            name=name,
            root_agent=root,
            plugins=[*own, *plugins],
            # Every transfer re-sends the same long instructions: let providers that
            # cache prompts (Gemini's context cache, Anthropic's cache_control through
            # LiteLLM) reuse them. Requests under a provider's minimum are sent as is.
            context_cache_config=ContextCacheConfig() if prompt_cache else None,
        )
    except ValueError as exc:
        raise ConfigError(
            f"App name {name!r} is not valid: {exc}. Use letters, digits, '_' and '-', "
            "starting with a letter."
        ) from None
