"""Build the ADK agent tree from a :class:`Config`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.base_llm import BaseLlm
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from pydantic import Field, PrivateAttr
from typing_extensions import override

from ._adk_compat import NamedFunctionTool
from .config import Config, router_mode
from .errors import ConfigError, ToolAdapterError, unexpected_failure
from .guards.turn import Guards, GuardSettings
from .mcp import McpPlan, place_servers, plan_servers
from .models.bounded import BoundedModel
from .models.keys import configured_key
from .models.resilient import ModelRecovery, RetryPolicy
from .models.resolve import ModelLike, resolve_model
from .models.team_view import TeamRoute, serve_team
from .routing.capabilities import capability_description, capability_list
from .routing.fastpath import FastPath
from .routing.instructions import (
    RouteEntry,
    agent_description,
    build_orchestrator_instruction,
    build_specialist_instruction,
    effective_rounds,
)
from .routing.partition import partition_tools
from .routing.phrase_cache import PhraseCache
from .routing.repair import AgentNameResolver
from .routing.router import DEFAULT_THRESHOLD, RouteDecision
from .tool_approval import ask_about_effect, describe_effect, effect_changed, refusal
from .tool_arguments import argument_problem
from .tools import Tool, validate_tools
from .topology import (
    DEFAULT_TOPOLOGY,
    ORCHESTRATOR_NAME,
    PLANNER_NAME,
    SINGLE_AGENT_NAME,
    AgentSpec,
    Topology,
    resolve_topology,
)

logger = logging.getLogger("troupe.tools")


class TroupeAgent(LlmAgent):
    """An LlmAgent whose string instruction is sent exactly as written.

    ADK treats ``{name}`` in a string instruction as a session-state
    placeholder and fails when the state has no such key; a user's system
    prompt with a brace in it (JSON, code) must not break a run.
    """

    capabilities: list[str] = Field(default_factory=list)
    """What the agent's tools do, in the topology's words (``troupe tree``, the A2A card)."""
    plans: bool = False
    """It carries out requests of several steps, its teammates as its tools."""

    _troupe_guards: Guards | None = PrivateAttr(default=None)

    @property
    def troupe_guards(self) -> Guards | None:
        """The guards attached to this tree (set on the root agent)."""
        return self._troupe_guards

    _troupe_router: FastPath | None = PrivateAttr(default=None)

    @property
    def troupe_router(self) -> FastPath | None:
        """The fast-path router of this tree (on the root agent; None when off)."""
        return self._troupe_router

    _bounded: BoundedModel | None = PrivateAttr(default=None)

    @property
    @override
    def canonical_model(self) -> BaseLlm:
        # The model every caller gets (the flow, recovery's re-asks): replies
        # pass the argument-shape check first.
        return self._bounded_view(super().canonical_model)

    @override
    async def canonical_model_async(self, ctx: ReadonlyContext) -> BaseLlm:
        return self._bounded_view(await super().canonical_model_async(ctx))

    def _bounded_view(self, model: BaseLlm) -> BaseLlm:
        if isinstance(model, BoundedModel):
            return model
        if self._bounded is None or self._bounded.inner is not model:
            self._bounded = BoundedModel.around(model)
        return self._bounded

    @override
    async def canonical_instruction(self, ctx: ReadonlyContext) -> tuple[str, bool]:
        if isinstance(self.instruction, str):
            return self.instruction, True
        return await super().canonical_instruction(ctx)


class _TroupeFunctionTool(NamedFunctionTool):
    """A troupe Tool as an ADK tool: declared under its name and description, asking
    for approval as its ``dangerous`` and ``effect`` say."""

    def __init__(self, tool: Tool) -> None:
        super().__init__(
            tool.func,
            name=tool.name,
            description=tool.description,
            require_confirmation=tool.dangerous,
        )
        self._effect = tool.effect

    # ADK's own refusal ("This tool call is rejected.") says neither who
    # declined nor what to tell the user. A declined call is let past ADK's
    # confirmation gate so that run_async can answer with troupe's refusal.
    @override
    async def check_require_confirmation(
        self, args: dict[str, Any], tool_context: ToolContext
    ) -> bool:
        if _declined(tool_context) or self._effect is not None:
            return False  # run_async asks, showing the effect (see below)
        if argument_problem(self.func, args) is not None:
            return False  # run_async refuses the call before anything runs
        try:
            return await super().check_require_confirmation(args, tool_context)
        except Exception as exc:
            logger.debug("tool %s: approval check failed; asking", self.name, exc_info=exc)
            return True

    async def _needs_approval(self, args: dict[str, Any], tool_context: ToolContext) -> bool:
        """The tool's own approval check; one that fails asks, as ADK's path above does."""
        try:
            return await FunctionTool.check_require_confirmation(self, args, tool_context)
        except Exception as exc:
            logger.debug("tool %s: approval check failed; asking", self.name, exc_info=exc)
            return True

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if _declined(tool_context):
            return refusal(self.name, tool_context.tool_confirmation)
        problem = argument_problem(self.func, args)
        if problem is not None:
            return {"error": problem.message, "accepted": problem.accepted}
        try:
            if self._effect is not None and await self._needs_approval(args, tool_context):
                # A tool with an effect asks for itself, like ADK's tools that call
                # request_confirmation: the request shows what the call would do, and
                # the approval holds only while that stays true (e.g. a skill's body
                # is not swapped between the request and the run).
                effect = await describe_effect(self._effect, args, tool_context)
                if tool_context.tool_confirmation is None:
                    return ask_about_effect(self.name, effect, tool_context)
                if (changed := effect_changed(self.name, effect, tool_context)) is not None:
                    return changed
            return await super().run_async(args=args, tool_context=tool_context)
        except Exception as exc:
            # A tool's failure is the model's to hear about, never the end of the turn.
            logger.debug("tool %s failed", self.name, exc_info=exc)
            return {
                "error": unexpected_failure(exc),
                "accepted": "different arguments, or another way to do the task",
            }


def _declined(tool_context: ToolContext) -> bool:
    confirmation = tool_context.tool_confirmation
    return confirmation is not None and not confirmation.confirmed


def default_adapter(tool: Tool) -> BaseTool:
    """Wrap a troupe Tool as an ADK FunctionTool."""
    return _TroupeFunctionTool(tool)


def _adapt(tools: Sequence[Tool], agent_name: str, config: Config) -> list[BaseTool]:
    adapter = config.adapt_tool or default_adapter
    adapted = []
    for tool in tools:
        try:
            adapted.append(adapter(tool))
        except Exception as exc:
            raise ToolAdapterError(agent_name, tool.name, exc) from exc
    return adapted


def _route_entry(spec: AgentSpec, tools: Sequence[Tool], topology: Topology) -> RouteEntry:
    return RouteEntry(
        name=spec.name,
        role=spec.description,
        capabilities=capability_description(tools, topology) if tools else "",
        keywords=spec.keywords,
        accepts=spec.accepts,
        returns=spec.returns,
        cannot_do=spec.cannot_do,
        match_phrases=spec.match_phrases,
        examples=spec.examples,
        plans=spec.is_planner,
        synonyms=spec.synonyms,
    )


def remote_route_entry(agent: BaseAgent) -> RouteEntry:
    """A routing entry for an agent troupe did not build (e.g. an A2A remote)."""
    keywords: Sequence[str] = getattr(agent, "troupe_keywords", ()) or ()
    return RouteEntry(
        name=agent.name,
        role=agent.description or f"A remote agent named {agent.name}.",
        keywords=tuple(keywords),
    )


def build_agent_tree(config: Config) -> LlmAgent:
    """The ADK root agent for ``config``.

    Multi-agent: an ``orchestrator`` with no tools whose sub-agents are the
    topology's specialists that own at least one tool (or are always
    included), then the remote agents. Single-agent: one agent holding every
    tool, unmatched ones included.

    Each ``mcp_servers`` entry's toolset goes to the agent its prefix or agent
    names (created even when it owns nothing else); unmatched servers go to
    no agent and are left out of the orchestrator's instruction.
    """
    tools = validate_tools(config.tools)
    model = resolve_model(config.model, api_base=config.api_base, api_key=_model_key(config))
    if not config.multi_agent:
        agent = _single_agent(tools, model, config)
        _attach_guards(agent, config, AgentNameResolver([]))
        return agent
    topology = resolve_topology(config.topology)
    split = partition_tools(tools, topology)
    mcp = plan_servers(config.mcp_servers, topology)

    chosen = [
        (spec, split.by_agent[spec.name])
        for spec in topology.agents
        if split.by_agent[spec.name]
        or spec.always_include
        or spec.is_planner
        or mcp.for_agent(spec.name)
    ]
    chosen += [(spec, []) for spec in _added_planner(topology, [s for s, _ in chosen])]
    remote = list(config.remote_agents)
    _check_remote_names(remote, [spec.name for spec, _ in chosen])
    # What each agent is described by: its tools plus its MCP servers' capabilities.
    described_by = {spec.name: [*owned, *mcp.stand_ins(spec.name)] for spec, owned in chosen}
    entries = [_route_entry(spec, described_by[spec.name], topology) for spec, _ in chosen]
    entries += [remote_route_entry(agent) for agent in remote]

    sub_agents: list[BaseAgent] = []
    for spec, owned in chosen:
        described = described_by[spec.name]
        sub_agents.append(
            TroupeAgent(
                name=spec.name,
                model=model,
                description=agent_description(spec.description, described, topology),
                capabilities=capability_list(described, topology),
                instruction=build_specialist_instruction(
                    name=spec.name,
                    role=spec.description,
                    guidance=spec.instruction,
                    tools=described,
                    accepts=spec.accepts,
                    returns=spec.returns,
                    cannot_do=spec.cannot_do,
                    team=entries,
                    keywords=spec.keywords,
                    topology=topology,
                    toolsets=bool(mcp.for_agent(spec.name)),
                ),
                tools=[
                    *_adapt(owned, spec.name, config),
                    *mcp.toolsets(spec.name, exclude=[t.name for t in owned]),
                ],
                mode="chat",
                # Each user turn starts at the orchestrator: a specialist
                # answers or rejects, it does not pass the task on itself.
                # With guards on, the runtime hands a rejected task to the
                # peer it names (ADK checks this flag on that transfer); the
                # guards refuse transfers the specialist's model asks for.
                disallow_transfer_to_parent=True,
                disallow_transfer_to_peers=not config.guards,
                plans=spec.is_planner,
            )
        )
    _give_planner_its_team(sub_agents)
    sub_agents.extend(remote)
    instruction = build_orchestrator_instruction(
        entries,
        system_prompt=config.system_prompt,
        unmatched=split.unmatched,
        max_delegation_rounds=config.max_delegation_rounds,
    )
    root = TroupeAgent(
        name=ORCHESTRATOR_NAME,
        model=model,
        description="Routes each request to the right specialist.",
        instruction=instruction,
        tools=[],
        sub_agents=sub_agents,
    )
    team = _team_routes(entries)
    _tell_models_the_team(root, team)
    resolver = AgentNameResolver.for_topology(topology, [a.name for a in sub_agents])
    _attach_guards(root, config, resolver, team)
    if router_mode(config) == "auto":
        _attach_router(root, config, {e.name: e for e in entries})
    return root


def _added_planner(topology: Topology, chosen: Sequence[AgentSpec]) -> list[AgentSpec]:
    """troupe's planner, for a team of two or more specialists none of which
    plans (unless the topology says ``planner: false`` or one is already named
    planner): a request of several steps then runs step by step."""
    if not topology.planner or len(chosen) < 2 or any(spec.is_planner for spec in chosen):
        return []
    if any(spec.name == PLANNER_NAME for spec in topology.agents):
        return []
    planner = DEFAULT_TOPOLOGY.spec(PLANNER_NAME)
    # A word the team's own agents declare is theirs: a membership desk's
    # "plan" is a membership plan, not a request for a plan of steps.
    theirs = TEAM_OWNED_PLAN_WORDS | {
        phrase.lower() for spec in chosen for phrase in (*spec.keywords, *spec.match_phrases)
    }
    return [
        replace(
            planner,
            keywords=tuple(k for k in planner.keywords if k.lower() not in theirs),
            match_phrases=tuple(m for m in planner.match_phrases if m.lower() not in theirs),
        )
    ]


TEAM_OWNED_PLAN_WORDS = frozenset({"schedule", "organize", "strategy", "approach", "how should i"})
"""Words the default team reads as a request for a plan, which a user's team
may use for its own work (a travel team's calendar schedules; "how should I
wash it?" asks a shop about a product): the planner troupe adds to a user's
team does not claim them."""


def _team_routes(entries: Sequence[RouteEntry]) -> list[TeamRoute]:
    """The team as data, for models that answer as one of its agents."""
    return [
        TeamRoute(
            name=e.name,
            keywords=(*e.keywords, *e.match_phrases),
            text=" ".join(t for t in (e.role, e.accepts) if t),
            plans=e.plans,
            abilities=tuple(a for a in e.capabilities.split(", ") if a),
        )
        for e in entries
    ]


def _tell_models_the_team(root: LlmAgent, team: Sequence[TeamRoute]) -> None:
    """Give each agent whose model is team-aware (the offline stand-in, or any
    wrapper that forwards :meth:`~troupe.models.team_view.TeamAware.serving`)
    its own view of the team, as data."""
    for agent in (root, *root.sub_agents):
        if isinstance(agent, LlmAgent) and isinstance(agent.model, BaseLlm):
            agent.model = serve_team(agent.model, agent.name, team)


def _give_planner_its_team(agents: Sequence[BaseAgent]) -> None:
    """Let the planner carry out its plan: each other specialist becomes one of its
    tools (an ADK ``AgentTool``), so it hands a step to its agent, gets the result
    back, feeds it to the next step, and answers once with every step's outcome.

    Why this shape: specialists cannot transfer back to their parent, so a
    transfer-based loop would end at the first step; a per-plan
    ``SequentialAgent`` would need a second parent for each specialist. An
    ``AgentTool`` returns control to the caller after every step, inside the
    same turn, under the same plugins (guards count its model calls).
    """
    from .plan_steps import PlanStepTool

    planner = next((a for a in agents if getattr(a, "plans", False)), None)
    if not isinstance(planner, LlmAgent):
        return
    team = [a for a in agents if a is not planner]
    planner.tools = [*planner.tools, *(PlanStepTool(agent) for agent in team)]


def _attach_router(root: TroupeAgent, config: Config, entries: dict[str, RouteEntry]) -> None:
    """Give the tree the fast-path router; the App runs it before every other
    plugin, so that a routed turn makes no model call and is not counted as one."""
    guards = root.troupe_guards

    def record(ctx: CallbackContext, decision: RouteDecision) -> None:
        if guards is not None:
            guards.turn_for(ctx).router = decision.kind

    from .routing.encoder import set_encoder_threads

    set_encoder_threads(config.router_encoder_threads)
    fast = FastPath(
        root,
        entries,
        threshold=DEFAULT_THRESHOLD if config.router_threshold is None else config.router_threshold,
        on_decision=record,
        cache=None if config.router_cache_dir is None else PhraseCache(config.router_cache_dir),
        require_transfer=config.router_require_transfer,
        agent_schema=config.router_agent_schema,
    )
    fast.preload()  # the encoder loads while the rest of the start-up runs
    # Run as the first plugin of the App (troupe.runtime.app.build_app).
    root._troupe_router = fast


def _as_llm(model: ModelLike) -> BaseLlm:
    if isinstance(model, BaseLlm):
        return model
    from google.adk.models.registry import LLMRegistry

    return LLMRegistry.new_llm(model)


def _model_key(config: Config) -> str | None:
    """The API key ``config`` gives its models (``api_key`` or ``api_key_env``)."""
    return configured_key(config.api_key, config.api_key_env)


def _recovery(config: Config, agent: LlmAgent, team: Sequence[TeamRoute]) -> ModelRecovery | None:
    """The model-error callback for ``agent``'s retries and fallback, when either
    is on. A retry asks the agent's own model, and a team-aware fallback (the
    offline stand-in) answers as that agent, never as another one."""
    fallback = None
    if config.fallback_model is not None:
        resolved = resolve_model(
            config.fallback_model, api_base=config.api_base, api_key=_model_key(config)
        )
        fallback = _as_llm(serve_team(_as_llm(resolved), agent.name, team))
    if config.model_retries <= 0 and fallback is None:
        return None
    policy = RetryPolicy(
        retries=max(0, config.model_retries), base_delay=config.retry_base_delay, fallback=fallback
    )
    return ModelRecovery(_as_llm(agent.model), policy)


def _attach_guards(
    root: TroupeAgent,
    config: Config,
    resolver: AgentNameResolver,
    team: Sequence[TeamRoute] = (),
) -> None:
    settings = GuardSettings(
        transfer_repair=config.transfer_repair,
        enforce_limits=config.guards,
        max_delegation_rounds=effective_rounds(config.max_delegation_rounds),
        max_model_calls=config.max_model_calls,
        max_repeated_calls=config.max_repeated_calls,
        trim_transfer_list=config.guards,
        turn_timeout_s=config.turn_timeout_s,
    )
    guards = Guards(settings, resolver=resolver, root_name=root.name)
    # The guards run as plugins of the App every door builds (troupe.runtime.app).
    root._troupe_guards = guards
    for agent in [root, *root.sub_agents]:
        if isinstance(agent, TroupeAgent):
            recovery = _recovery(config, agent, team)
            if recovery is not None:
                agent.on_model_error_callback = recovery


def _check_remote_names(remote: Sequence[BaseAgent], local: Sequence[str]) -> None:
    taken = set(local) | {ORCHESTRATOR_NAME}
    for agent in remote:
        if not isinstance(agent, BaseAgent):
            raise ConfigError(
                f"remote_agents entry {agent!r} is not an ADK BaseAgent; pass agents such "
                "as RemoteA2aAgent."
            )
        if agent.name in taken:
            raise ConfigError(
                f"Remote agent name {agent.name!r} is already used by another agent; "
                "rename the remote agent."
            )
        taken.add(agent.name)


def _single_agent(tools: Sequence[Tool], model: ModelLike, config: Config) -> TroupeAgent:
    from .routing.instructions import DEFAULT_SYSTEM_PROMPT

    base = (config.system_prompt or DEFAULT_SYSTEM_PROMPT).strip()
    instruction = (
        f"{base}\n\nYou work alone and hold every tool yourself. Use a tool when the "
        "request needs one, then report its result clearly; answer greetings and "
        "general questions directly.\n"
    )
    return TroupeAgent(
        name=SINGLE_AGENT_NAME,
        model=model,
        description="A single assistant holding every tool.",
        instruction=instruction,
        tools=[
            *_adapt(tools, SINGLE_AGENT_NAME, config),
            *_single_agent_mcp(config).toolsets(None, exclude=[t.name for t in tools]),
        ],
    )


def _single_agent_mcp(config: Config) -> McpPlan:
    """Every MCP server for the one agent, named by its prefix or agent."""
    if not config.mcp_servers:
        return McpPlan([])
    return McpPlan(place_servers(config.mcp_servers, resolve_topology(config.topology)))


def agent_tools(agent: Any) -> list[str]:
    """Names of the tools an ADK agent holds (toolsets, e.g. MCP, are left out:
    their tools are only known once they run; so are the teammates the planner
    calls for its steps, which are agents)."""
    from google.adk.tools.agent_tool import AgentTool

    names: list[str] = []
    for tool in getattr(agent, "tools", None) or []:
        if isinstance(tool, BaseToolset | AgentTool):
            continue
        names.append(str(getattr(tool, "name", None) or getattr(tool, "__name__", repr(tool))))
    return names
