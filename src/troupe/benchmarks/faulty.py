"""A model wrapper that injects routing and runtime faults at set rates.

It asks the offline model what to do, then, with a seeded random draw per
model call, changes that decision the way real models go wrong:

* ``hallucination``: the orchestrator names an agent that does not exist,
  mostly a guessable one (``browser_agent``), sometimes not (``assistant``);
* ``misroute``: the orchestrator picks a real but wrong specialist;
* ``ping_pong``: a specialist tries to hand the task back instead of acting;
* ``repeat``: a specialist keeps repeating its last tool call instead of
  reporting (for up to ``sticky_repeats`` calls);
* ``transient``: the call fails like an HTTP 429 or 500.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr
from typing_extensions import override

from ..models.offline import OfflineModel
from ..models.resilient import TransientModelError
from ..prompts import TRANSFER_TOOL

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
    unresolvable_share: float = 0.25
    """Share of hallucinated names that cannot be resolved."""
    sticky_repeats: int = 8
    """How many calls a repeating model keeps repeating before it recovers."""

    def any(self) -> bool:
        return any((self.hallucination, self.misroute, self.ping_pong, self.repeat, self.transient))


@dataclass
class TurnFaults:
    """Faults injected and model calls made in one turn."""

    calls: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    repeating: int = 0


class FaultyModel(BaseLlm):
    """The offline model with injected faults; see the module docstring."""

    model: str = "offline+faults"
    rates: FaultRates = FaultRates()
    seed: int = 7
    _inner: OfflineModel = PrivateAttr(default_factory=OfflineModel)
    _turn_key: int = PrivateAttr(default=0)
    _turn: TurnFaults = PrivateAttr(default_factory=TurnFaults)

    def begin_turn(self, key: int) -> TurnFaults:
        """Start a turn; the same key and seed inject the same faults in the same calls."""
        self._turn_key = key
        self._turn = TurnFaults()
        return self._turn

    def _rng(self) -> random.Random:
        return random.Random(f"{self.seed}:{self._turn_key}:{self._turn.calls}")

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
        parts = self._perturb(self._inner.decide(llm_request), llm_request, rng)
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
            target = str((call.args or {}).get("agent_name", ""))
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


def _transfer(name: str) -> types.Part:
    return types.Part(
        function_call=types.FunctionCall(name=TRANSFER_TOOL, args={"agent_name": name})
    )


def _enum_names(request: LlmRequest) -> list[str]:
    for tool in request.config.tools or []:
        for decl in getattr(tool, "function_declarations", None) or []:
            if decl.name == TRANSFER_TOOL:
                schema = decl.parameters_json_schema or {}
                return list(schema.get("properties", {}).get("agent_name", {}).get("enum", []))
    return []


def _last_call(request: LlmRequest) -> types.FunctionCall | None:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_call and part.function_call.name != TRANSFER_TOOL:
                return types.FunctionCall(
                    name=part.function_call.name, args=dict(part.function_call.args or {})
                )
    return None
