"""A model wrapper that injects routing and runtime faults at set rates.

It asks the offline model what to do, then, with a seeded random draw per
model call, changes that decision the way real models go wrong:

* ``hallucination``: the orchestrator names an agent that does not exist,
  mostly a guessable one (``browser_agent``), sometimes not (``assistant``);
* ``misroute``: the orchestrator picks a real but wrong specialist;
* ``ping_pong``: a specialist tries to hand the task back instead of acting;
* ``repeat``: a specialist keeps repeating its last tool call instead of
  reporting (for up to ``sticky_repeats`` calls);
* ``transient``: the call fails like an HTTP 429 or 500;

and the shapes a real small model (Qwen2.5-Coder 1.5B) produced as orchestrator:

* ``agent_as_function``: it calls the agent (or an agent-like name) as a
  function, ``operator(task=...)``, instead of transferring;
* ``json_text``: it writes the transfer as JSON text, in a fenced ``json``
  block or in ``<tool_call>`` tags, instead of calling it;
* ``echoed_reject``: it copies the ``[REJECT]`` line of its instruction as its
  reply;
* ``persistent_bad_name``: it names the same agent that does not exist for
  the rest of the turn.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr
from typing_extensions import override

from troupe.models.offline import OfflineModel, latest_request
from troupe.models.resilient import TransientModelError
from troupe.models.team_view import TeamRoute, serve_team
from troupe.prompts import REJECT_FORMAT, TRANSFER_ARG, TRANSFER_TOOL

# Names a model might invent for each role; all resolve to the role.
GUESSABLE_NAMES: dict[str, tuple[str, ...]] = {
    "operator": ("exec", "filesystem_agent", "Operator", "executor", "shell_agent", "file_agent"),
    "navigator": ("browser_agent", "browser", "web_agent", "Navigator", "browsing_agent"),
    "vault": ("crypto", "vault_agent", "secrets_agent", "crypto_agent", "Vault"),
    "librarian": ("researcher", "knowledge_agent", "Librarian", "rag_agent", "search_agent"),
    "chronicler": ("memory_manager", "memory-manager", "memory_agent", "Chronicler", "memory"),
    "planner": ("Planner", "planner_agent", "PLANNER"),
}
UNRESOLVABLE_NAMES = ("assistant", "helper", "general_agent", "main_agent", "tool_agent", "agent")


@dataclass(frozen=True)
class FaultRates:
    """Probability of each fault per eligible model decision."""

    hallucination: float = 0.0
    misroute: float = 0.0
    ping_pong: float = 0.0
    repeat: float = 0.0
    transient: float = 0.0
    agent_as_function: float = 0.0
    json_text: float = 0.0
    echoed_reject: float = 0.0
    persistent_bad_name: float = 0.0
    unresolvable_share: float = 0.25
    """Share of hallucinated names that cannot be resolved."""
    sticky_repeats: int = 8
    """How many calls a repeating model keeps repeating before it recovers."""

    def any(self) -> bool:
        return any(
            (
                self.hallucination,
                self.misroute,
                self.ping_pong,
                self.repeat,
                self.transient,
                *(getattr(self, kind) for kind in SHAPE_FAULTS),
            )
        )


@dataclass
class TurnFaults:
    """Faults injected and model calls made in one turn."""

    calls: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    repeating: int = 0
    bad_name: str | None = None
    """The missing agent a persistent model keeps naming, once it started."""


@dataclass
class _Run:
    """What every agent's view of one FaultyModel shares: the turn under way."""

    key: int = 0
    turn: TurnFaults = field(default_factory=TurnFaults)


class FaultyModel(BaseLlm):
    """The offline model with injected faults; see the module docstring.

    It is team-aware the way any wrapper can be: told which agent of which team
    it serves (:class:`~troupe.models.team_view.TeamAware`), it passes that on
    to the stand-in it wraps and returns a view of itself around the answer.
    Every view shares the turn under way, so faults are counted per turn
    whichever agent's call they hit.
    """

    model: str = "offline+faults"
    rates: FaultRates = FaultRates()
    seed: int = 7
    _inner: BaseLlm = PrivateAttr(default_factory=OfflineModel)
    _run: _Run = PrivateAttr(default_factory=_Run)

    def serving(self, agent: str, team: Sequence[TeamRoute]) -> FaultyModel:
        """This model as ``agent`` of ``team``: the wrapped stand-in is told, and
        the view shares this model's turn."""
        view = self.model_copy()
        view._inner = serve_team(self._inner, agent, team)
        view._run = self._run
        return view

    @property
    def _turn(self) -> TurnFaults:
        return self._run.turn

    def begin_turn(self, key: int) -> TurnFaults:
        """Start a turn; the same key and seed inject the same faults in the same calls."""
        self._run.key = key
        self._run.turn = TurnFaults()
        return self._run.turn

    def _rng(self) -> random.Random:
        return random.Random(f"{self.seed}:{self._run.key}:{self._turn.calls}")

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = self._turn
        turn.calls += 1
        rng = self._rng()
        if rng.random() < self.rates.transient:
            turn.injected["transient"] += 1
            raise TransientModelError(rng.choice((429, 500, 503)))
        inner = self._inner
        if not isinstance(inner, OfflineModel):
            raise TypeError(f"FaultyModel wraps troupe's offline model, not {type(inner)!r}")
        parts = self._perturb(inner.decide(llm_request), llm_request, rng)
        yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)

    def _perturb(
        self, parts: list[types.Part], request: LlmRequest, rng: random.Random
    ) -> list[types.Part]:
        call = next((p.function_call for p in parts if p.function_call), None)
        system = str(request.config.system_instruction or "")
        is_orchestrator = "## Routing table" in system
        last = request.contents[-1] if request.contents else None
        after_tool = bool(last and any(p.function_response for p in last.parts or []))
        turn = self._turn
        if is_orchestrator and call is not None and call.name == TRANSFER_TOOL:
            target = str((call.args or {}).get(TRANSFER_ARG, ""))
            if turn.bad_name is not None:
                return [_transfer(turn.bad_name)]
            roll = rng.random()
            if roll < self.rates.hallucination:
                turn.injected["hallucination"] += 1
                if rng.random() < self.rates.unresolvable_share:
                    turn.injected["hallucination_unresolvable"] += 1
                    name = rng.choice(UNRESOLVABLE_NAMES)
                else:
                    name = rng.choice(GUESSABLE_NAMES.get(target, UNRESOLVABLE_NAMES))
                return [_transfer(name)]
            if roll < self.rates.hallucination + self.rates.misroute:
                wrong = [n for n in _enum_names(request) if n not in (target, "planner")]
                if wrong:
                    turn.injected["misroute"] += 1
                    return [_transfer(rng.choice(wrong))]
            shift = self.rates.hallucination + self.rates.misroute
            if roll >= shift and (shaped := self._shape(roll - shift, target, request, rng)):
                return shaped
            return parts
        if is_orchestrator:
            return parts
        if call is not None and not after_tool and rng.random() < self.rates.ping_pong:
            turn.injected["ping_pong"] += 1
            return [_transfer("orchestrator")]
        if after_tool and call is None:
            previous = _last_call(request)
            if (
                previous is not None
                and (turn.repeating or rng.random() < self.rates.repeat)
                and turn.repeating < self.rates.sticky_repeats
            ):
                if not turn.repeating:
                    turn.injected["repeat"] += 1
                turn.repeating += 1
                return [types.Part(function_call=previous)]
        return parts

    def _shape(
        self, roll: float, target: str, request: LlmRequest, rng: random.Random
    ) -> list[types.Part] | None:
        """One of the real-model shapes in place of the transfer to ``target``, if drawn."""
        for kind in SHAPE_FAULTS:
            rate = getattr(self.rates, kind)
            if roll < rate:
                self._turn.injected[kind] += 1
                return _SHAPE_MAKERS[kind](self._turn, target, request, rng)
            roll -= rate
        return None


def _agent_as_function(
    turn: TurnFaults, target: str, request: LlmRequest, rng: random.Random
) -> list[types.Part]:
    name = target if rng.random() < 0.7 else rng.choice(GUESSABLE_NAMES.get(target, (target,)))
    call = types.FunctionCall(name=name, args={"task": latest_request(request)})
    return [types.Part(function_call=call)]


def _json_text(
    turn: TurnFaults, target: str, request: LlmRequest, rng: random.Random
) -> list[types.Part]:
    payload = json.dumps({"name": TRANSFER_TOOL, "arguments": {TRANSFER_ARG: target}})
    form = rng.choice(("{}", "```json\n{}\n```", "<tool_call>\n{}\n</tool_call>"))
    return [types.Part(text=form.format(payload))]


def _echoed_reject(
    turn: TurnFaults, target: str, request: LlmRequest, rng: random.Random
) -> list[types.Part]:
    return [types.Part(text=REJECT_FORMAT)]


def _persistent_bad_name(
    turn: TurnFaults, target: str, request: LlmRequest, rng: random.Random
) -> list[types.Part]:
    turn.bad_name = rng.choice(UNRESOLVABLE_NAMES)
    return [_transfer(turn.bad_name)]


_SHAPE_MAKERS = {
    "agent_as_function": _agent_as_function,
    "json_text": _json_text,
    "echoed_reject": _echoed_reject,
    "persistent_bad_name": _persistent_bad_name,
}
SHAPE_FAULTS = tuple(_SHAPE_MAKERS)
"""The real-model shapes, in the order their rates are drawn."""


def _transfer(name: str) -> types.Part:
    return types.Part(
        function_call=types.FunctionCall(name=TRANSFER_TOOL, args={TRANSFER_ARG: name})
    )


def _enum_names(request: LlmRequest) -> list[str]:
    for tool in request.config.tools or []:
        for decl in getattr(tool, "function_declarations", None) or []:
            if decl.name == TRANSFER_TOOL:
                schema = decl.parameters_json_schema or {}
                return list(schema.get("properties", {}).get(TRANSFER_ARG, {}).get("enum", []))
    return []


def _last_call(request: LlmRequest) -> types.FunctionCall | None:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_call and part.function_call.name != TRANSFER_TOOL:
                return types.FunctionCall(
                    name=part.function_call.name, args=dict(part.function_call.args or {})
                )
    return None
