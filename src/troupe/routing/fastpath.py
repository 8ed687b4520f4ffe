"""The router as an ADK before-model callback on the orchestrator.

On the orchestrator's first model call of a turn the callback asks the
:class:`~troupe.routing.router.Router` about the user's message. A confident
route is answered with an ``LlmResponse`` holding the ``transfer_to_agent``
call, so ADK performs the transfer and no model is called; the call's id
starts with :data:`ROUTER_CALL_PREFIX`, which is how paths and traces tell
the router's transfers from the model's. Otherwise the router's ranked
candidates are added to the instruction as a hint and the model decides.

The profiles are read from the tree on first use: each specialist's routing
entry, the descriptions and parameters of its tools, and the tools its MCP
servers list (a server that does not answer in time is left out).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.genai import types

from .._adk_compat import CLIENT_CALL_ID_PREFIX
from ..prompts import TRANSFER_ARG, TRANSFER_TOOL
from .agent_schema import choice_instruction, choice_schema, read_choice
from .batching import decision_batcher
from .encoder import Encoder
from .instructions import RouteEntry
from .phrase_cache import PhraseCache
from .router import AgentProfile, RouteDecision, Router, described_shapes

WARM_UP_MESSAGE = "hello"
"""What :meth:`FastPath.warm_up` decides on (any text would do)."""

logger = logging.getLogger("troupe.router")

ROUTER_CALL_PREFIX = f"{CLIENT_CALL_ID_PREFIX}troupe-router-"
"""Start of the id of a transfer the router made. ADK strips the ids it gives
calls (:data:`~troupe._adk_compat.CLIENT_CALL_ID_PREFIX`) before a request goes
to a model, so the specialists' models see a plain call."""
ROUTER_NAME = "router"
"""How paths and traces name the router."""
MCP_LIST_TIMEOUT_S = 15.0
"""How long the router waits for an MCP server to list its tools. A stdio
server is a fresh Python process: on a busy machine (two CPUs shared with a
test run) starting one took more than five seconds, and a server left out
takes its agent's tools out of the router's profile for the life of the tree."""
SCHEMA_CHOICES = 3
"""Team members a JSON choice offers (``router.agent_schema``): the router's
best few, best first. Fewer, clearer choices for a small model; the right
agent is among the router's first three for nearly every request."""
MAX_PENDING_CHOICES = 1024
"""JSON choices awaiting their reply at most: a call that fails or is cancelled
never gets one, and its entry must not stay for the life of the server."""


def is_router_call(call_id: str | None) -> bool:
    """True when a function call or response id is one the router made."""
    return bool(call_id) and str(call_id).startswith(ROUTER_CALL_PREFIX)


def _declared_parameters(tool: BaseTool) -> dict[str, Any]:
    """The parameters of ``tool`` as a model sees them: name -> JSON schema."""
    request = LlmRequest()
    try:
        request.append_tools([tool])  # declares it as the model would see it
    except Exception:  # a tool whose schema cannot be built still has a name
        return {}
    decls = [
        decl
        for declared in request.config.tools or []
        if isinstance(declared, types.Tool)
        for decl in declared.function_declarations or []
    ]
    if not decls:
        return {}
    decl = decls[0]
    schema: Any = decl.parameters_json_schema
    if schema is None and decl.parameters is not None:
        schema = decl.parameters.model_dump(exclude_none=True)
    properties = (schema or {}).get("properties", {}) or {}
    return {str(k): v if isinstance(v, dict) else {} for k, v in properties.items()}


def _parameter_texts(parameters: dict[str, Any]) -> list[str]:
    """What a tool's author wrote about its parameters: descriptions, patterns."""
    return [
        str(value)
        for schema in parameters.values()
        for key in ("description", "pattern")
        if (value := schema.get(key))
    ]


_IDENTIFIER_ENDINGS = ("id", "number", "no", "ref", "reference", "code")
"""The last word of a parameter name that takes an identifier ("tracking_number")."""


def _shape_parameters(description: str, parameters: dict[str, Any]) -> set[tuple[str, str]]:
    """(shape, parameter) for each identifier shape a tool describes: the
    parameter whose description shows it, or, for one its description shows,
    each of its parameters whose name ends like an identifier's."""
    pairs: set[tuple[str, str]] = set()
    for name, schema in parameters.items():
        for text in _parameter_texts({name: schema}):
            pairs.update((shape, name) for shape in described_shapes(text))
    takers = [n for n in parameters if n.lower().rsplit("_", 1)[-1] in _IDENTIFIER_ENDINGS]
    pairs.update((shape, n) for shape in described_shapes(description) for n in takers)
    return pairs


async def _listed_tools(toolset: BaseToolset) -> list[BaseTool]:
    try:
        return list(await asyncio.wait_for(toolset.get_tools(), MCP_LIST_TIMEOUT_S))
    except Exception as exc:  # the router works without them
        logger.warning("router: could not list the tools of %r: %s", toolset, exc or type(exc))
        return []


async def agent_profile(agent: BaseAgent, entry: RouteEntry | None) -> AgentProfile:
    """The router's profile of ``agent``: its routing entry and its tools,
    the tools of its MCP servers included."""
    tools: list[BaseTool] = []
    for item in getattr(agent, "tools", None) or []:
        if isinstance(item, BaseToolset):
            tools.extend(await _listed_tools(item))
        elif isinstance(item, AgentTool):
            continue  # a teammate the planner hands steps to: its work, not the planner's
        elif isinstance(item, BaseTool):
            tools.append(item)
    texts = [agent.description or ""]
    keywords: Sequence[str] = ()
    fragments: Sequence[str] = ()
    capabilities: Sequence[str] = ()
    examples: Sequence[str] = ()
    names: Sequence[str] = [agent.name]
    refusals: Sequence[str] = ()
    if entry is not None:
        refusals = entry.cannot_do
        texts += [entry.role, entry.accepts, entry.returns]
        examples = entry.examples
        keywords, fragments = entry.keywords, entry.match_phrases
        capabilities = [c for c in entry.capabilities.split(", ") if c]
        names = [agent.name, *entry.synonyms]
    texts += [t.description or "" for t in tools]
    parameters = [_declared_parameters(t) for t in tools]
    return AgentProfile.build(
        agent.name,
        texts=texts,
        keywords=keywords,
        tool_names=[t.name for t in tools],
        parameter_names=[p for declared in parameters for p in declared],
        tool_parameters=[list(declared) for declared in parameters],
        parameter_texts=[t for declared in parameters for t in _parameter_texts(declared)],
        shape_parameters=[
            pair
            for tool, declared in zip(tools, parameters, strict=True)
            for pair in _shape_parameters(tool.description or "", declared)
        ],
        fragments=fragments,
        capabilities=capabilities,
        plans=entry.plans if entry is not None else None,
        examples=examples,
        names=names,
        refusals=refusals,
    )


def router_response(decision: RouteDecision) -> LlmResponse:
    """The model-less reply that makes ADK transfer to ``decision.agent``."""
    call = types.FunctionCall(
        id=f"{ROUTER_CALL_PREFIX}{uuid.uuid4().hex[:12]}",
        name=TRANSFER_TOOL,
        args={TRANSFER_ARG: decision.agent},
    )
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        custom_metadata={
            "troupe_router": {"agent": decision.agent, "confidence": decision.confidence}
        },
        turn_complete=True,
    )


def _first_call_text(ctx: CallbackContext, request: LlmRequest) -> str | None:
    """The user's message when this is the orchestrator's first call on it."""
    user = ctx.user_content
    text = " ".join(p.text or "" for p in (user.parts or []) if p.text) if user else ""
    if not text.strip() or not request.contents:
        return None
    last = request.contents[-1]
    last_text = " ".join(p.text or "" for p in last.parts or [] if p.text)
    if last.role != "user" or last_text.strip() != text.strip():
        return None
    return text.strip()


class FastPath:
    """The orchestrator's before-model callback; see the module docstring."""

    def __init__(
        self,
        root: BaseAgent,
        entries: dict[str, RouteEntry],
        *,
        threshold: float,
        encoder_factory: Callable[[], Encoder | None] | None = None,
        on_decision: Callable[[CallbackContext, RouteDecision], None] | None = None,
        cache: PhraseCache | None = None,
        require_transfer: bool = False,
        agent_schema: bool = False,
    ) -> None:
        self._root = root
        self._require_transfer = require_transfer
        self._agent_schema = agent_schema
        self._schema_calls: dict[str, list[str]] = {}
        """Invocations whose orchestrator call asked for a JSON choice (see
        :mod:`troupe.routing.agent_schema`), with the names it offered, until
        its reply is read."""
        self._entries = entries
        self._threshold = threshold
        self._encoder_factory = encoder_factory
        self._on_decision = on_decision
        self._cache = cache
        self._router: Router | None = None
        self._lock = asyncio.Lock()

    def _encoder(self) -> Encoder | None:
        if self._encoder_factory is None:
            from .encoder import default_encoder

            return default_encoder()
        return self._encoder_factory()

    def preload(self) -> None:
        """Start loading the encoder in the background, when it can, so that the
        first message does not wait for all of it."""
        start = getattr(self._encoder(), "preload", None)
        if callable(start):
            start()

    async def router(self) -> Router:
        """The router over the tree's specialists, built on first use."""
        async with self._lock:
            if self._router is None:
                profiles = [
                    await agent_profile(agent, self._entries.get(agent.name))
                    for agent in self._root.sub_agents
                ]
                self._router = Router(
                    profiles, self._encoder(), threshold=self._threshold, cache=self._cache
                )
            return self._router

    async def warm_up(self) -> None:
        """Build the router and make one decision now, on the router's worker,
        so that the first user's turn pays for neither."""
        await decision_batcher().decide(await self.router(), WARM_UP_MESSAGE)

    async def before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if callback_context.agent_name != self._root.name:
            # Another agent's call: a specialist's, or a plan step's agent in
            # its own nested run, whose first message is the step, not the user's.
            return None
        text = _first_call_text(callback_context, llm_request)
        if text is None:
            return None
        router = await self.router()
        # The decision encodes the message (a model forward pass, and the
        # model's load on the first turn): never on the event loop, so other
        # sessions of this process keep being served meanwhile; messages that
        # arrive together are encoded in one batch.
        decision = await decision_batcher().decide(router, text)
        if self._on_decision is not None:
            self._on_decision(callback_context, decision)
        if decision.kind == "route" and decision.agent is not None:
            return router_response(decision)
        if decision.candidates:
            llm_request.append_instructions([decision.hint()])
        guessed = decision.kind == "defer" and decision.agent is not None
        if self._agent_schema and guessed:
            # No tools this call: the reply is the choice among the router's
            # best few, under a schema the server enforces; after_model turns a
            # named member into the transfer.
            names = [c.name for c in decision.candidates[:SCHEMA_CHOICES]]
            llm_request.config.tools = None
            llm_request.config.tool_config = None
            llm_request.config.response_schema = choice_schema(names)
            llm_request.append_instructions([choice_instruction(names)])
            self._schema_calls[callback_context.invocation_id] = names
            if len(self._schema_calls) > MAX_PENDING_CHOICES:
                del self._schema_calls[next(iter(self._schema_calls))]  # the oldest
        elif self._require_transfer and guessed:
            # The model must pick an agent; a server that turns the declaration
            # into a grammar (llama.cpp's) lets it name only the team's agents.
            llm_request.config.tool_config = types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode.ANY,
                    allowed_function_names=[TRANSFER_TOOL],
                )
            )
        return None

    def after_model(self, callback_context: CallbackContext, llm_response: LlmResponse) -> None:
        """Read a JSON choice the orchestrator's model was asked for (see
        :mod:`troupe.routing.agent_schema`), in place: a named member becomes
        the ``transfer_to_agent`` call, ``none`` its answer as text. A reply
        that is not such a choice is left as it is."""
        invocation = callback_context.invocation_id
        if invocation not in self._schema_calls or callback_context.agent_name != self._root.name:
            return
        content = llm_response.content
        if llm_response.partial:
            llm_response.content = None  # the JSON is not for the user's eyes
            return
        names = self._schema_calls.pop(invocation)
        if content is None:
            return
        text = "".join(p.text for p in content.parts or [] if p.text and not p.thought)
        choice = read_choice(text, names)
        if choice is None:
            return
        if choice.agent is None:
            content.parts = [types.Part(text=choice.answer)]
            return
        call = types.FunctionCall(name=TRANSFER_TOOL, args={TRANSFER_ARG: choice.agent})
        content.parts = [types.Part(function_call=call)]
