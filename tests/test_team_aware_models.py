"""A model learns the team it serves however it is wrapped (models/team_view.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import PrivateAttr
from typing_extensions import override

import troupe
from troupe.models.resilient import TransientModelError
from troupe.models.team_view import TeamAware, TeamRoute, serve_team
from troupe.testing import simplify


def fs_list(path: str = ".") -> dict[str, object]:
    """List the files in a folder."""
    return {"path": path, "entries": ["notes.txt"]}


TOOLS = [troupe.Tool(name="fs_list", description="List the files in a folder.", func=fs_list)]


class Opaque(BaseLlm):
    """A user's own wrapper around the offline model that cannot pass the team on."""

    model: str = "wrapper"
    agent: str | None = None
    failures: int = 0
    """Transient failures to raise before answering (per view)."""
    _inner: BaseLlm = PrivateAttr(default_factory=troupe.OfflineModel)
    _answered: list[str | None] = PrivateAttr(default_factory=list)
    """The agent each answer came from, shared by every view."""

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._answered.append(self.agent)
        if self.failures:
            self.failures -= 1
            raise TransientModelError(503)
        async for response in self._inner.generate_content_async(llm_request, stream):
            yield response


class Recorder(Opaque):
    """The same wrapper forwarding ``serving``: each agent gets its own view."""

    def serving(self, agent: str, team: Sequence[TeamRoute]) -> Recorder:
        view = self.model_copy(update={"agent": agent})
        view._inner = serve_team(self._inner, agent, team)
        view._answered = self._answered
        return view


async def run(model: BaseLlm) -> list[tuple[str, str, str | None]]:
    config = troupe.Config(tools=TOOLS, model=model, router="off")
    assistant = troupe.Assistant(troupe.build_agent_tree(config))
    return simplify([e async for e in assistant.run("s1", "list the files here")])


def test_the_offline_model_and_a_forwarding_wrapper_are_team_aware() -> None:
    assert isinstance(troupe.OfflineModel(), TeamAware)
    assert isinstance(Recorder(), TeamAware)
    assert not isinstance(Opaque(), TeamAware)


async def test_a_wrapper_that_forwards_serving_routes_like_the_model_it_wraps() -> None:
    steps = await run(Recorder())

    assert ("orchestrator", "transfer", "operator") in steps
    assert ("operator", "tool_call", "fs_list") in steps


def test_each_agent_gets_its_own_view_of_a_forwarding_wrapper() -> None:
    root = troupe.build_agent_tree(troupe.Config(tools=TOOLS, model=Recorder(), router="off"))

    served = {a.name: a.model.agent for a in (root, *root.sub_agents)}  # type: ignore[attr-defined]
    assert served["orchestrator"] == "orchestrator"
    assert served["operator"] == "operator"


async def test_a_wrapper_without_serving_is_used_as_it_is() -> None:
    steps = await run(Opaque())

    # Unbound, the stand-in has no team: the orchestrator answers by itself.
    assert ("orchestrator", "transfer", "operator") not in steps
    assert steps[-1][:2] == ("orchestrator", "text")


async def test_a_retried_call_is_answered_by_the_agent_whose_call_failed() -> None:
    model = Recorder()
    root = troupe.build_agent_tree(
        troupe.Config(tools=TOOLS, model=model, router="off", retry_base_delay=0.001)
    )
    operator = next(a for a in root.sub_agents if a.name == "operator")
    operator.model.failures = 1  # type: ignore[attr-defined]

    steps = simplify([e async for e in troupe.Assistant(root).run("s1", "list the files here")])

    assert ("operator", "tool_call", "fs_list") in steps
    # The failed call and its retry both went to the operator's view.
    assert model._answered[:3] == ["orchestrator", "operator", "operator"]
