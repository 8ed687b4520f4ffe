"""How a model learns the team it serves, however it is wrapped.

troupe's offline stand-in answers differently for each agent of a tree (as
orchestrator it transfers, as a specialist it calls tools), so the tree tells
it, agent by agent, who is on the team. Any model can take part: a model that
has a ``serving(agent, team)`` method is :class:`TeamAware`, and the tree
calls it once per agent and gives the agent what it returns. A wrapper around
such a model (a fault injector, a recorder, a user's own) forwards the call
to the model it wraps and returns a copy of itself around the answer; a
model without the method is used as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from google.adk.models.base_llm import BaseLlm


@dataclass(frozen=True)
class TeamRoute:
    """One team member as a team-aware model sees it: given by the tree as data."""

    name: str
    """The agent's name."""
    keywords: tuple[str, ...]
    """Words and phrases in a request that point to it (its keywords and the
    topology's match phrases, which no instruction shows)."""
    text: str = ""
    """Its description and what it accepts, for steps that name no keyword."""
    plans: bool = False
    """It carries out requests of several steps (the planner): the orchestrator
    hands it a request whose steps belong to different members."""
    abilities: tuple[str, ...] = ()
    """What its tools do, in the topology's words ("parcel tracking")."""


@runtime_checkable
class TeamAware(Protocol):
    """A model that answers as one agent of a team once it is told which."""

    def serving(self, agent: str, team: Sequence[TeamRoute]) -> BaseLlm:
        """This model as ``agent`` of a team whose members are ``team``."""
        ...


ModelT = TypeVar("ModelT")


def serve_team(model: ModelT, agent: str, team: Sequence[TeamRoute]) -> ModelT | BaseLlm:
    """``model`` as ``agent`` of ``team`` when it is :class:`TeamAware`, else ``model``."""
    if isinstance(model, TeamAware):
        return model.serving(agent, team)
    return model
