"""Every failure shape of real models, through troupe.Assistant with a scripted model."""

from __future__ import annotations

import pytest

import troupe
from fakes.shapes import SHAPES, FailureShape, check_outcome, shape_id
from troupe.benchmarks.stub_tools import stub_tools
from troupe.testing import ScriptedModel, call, user_texts


def _assistant(model: ScriptedModel, rounds: int = 5) -> troupe.Assistant:
    config = troupe.Config(tools=stub_tools(), model=model, max_delegation_rounds=rounds)
    return troupe.Assistant(troupe.build_agent_tree(config))


async def _turn(shape: FailureShape) -> tuple[troupe.Assistant, ScriptedModel, list]:
    model = ScriptedModel(replies=list(shape.replies))
    assistant = _assistant(model, shape.max_delegation_rounds)
    events = [e async for e in assistant.run("s1", shape.request)]
    return assistant, model, events


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
async def test_shape_is_repaired_or_ended_within_its_model_calls(shape: FailureShape) -> None:
    _, model, events = await _turn(shape)

    check_outcome(shape, events, len(model.requests))


# Neither names a missing agent: both are transfers between real specialists.
_REAL_NAMES = ("ping_pong_with_three_rounds", "specialist_transfers_to_a_sibling")


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.name not in _REAL_NAMES], ids=shape_id)
async def test_shape_is_counted_as_an_invalid_name(shape: FailureShape) -> None:
    assistant, _, _ = await _turn(shape)

    assert assistant.last_turn is not None
    assert assistant.last_turn.invalid_names


async def test_agent_called_as_function_passes_its_arguments_to_the_specialist() -> None:
    model = ScriptedModel(replies=[call("operator", command="ls -la /srv"), "ran it"])

    await _assistant(model).run_and_collect("s1", "show me what is in /srv")

    operator_request = model.requests[1]
    assert any("ls -la /srv" in text for text in user_texts(operator_request))


async def test_repaired_agent_call_is_recorded_as_a_repair_to_that_agent() -> None:
    model = ScriptedModel(replies=[call("vault", text="hello"), "hashed"])
    assistant = _assistant(model)

    await assistant.run_and_collect("s1", "hash hello")

    assert assistant.last_turn is not None
    assert assistant.last_turn.repairs == [("vault", "vault")]
    assert assistant.last_turn.invalid_names == ["vault"]


async def test_orchestrator_echoing_reject_is_not_rerouted_as_a_rejection() -> None:
    echo = "[REJECT] This task requires <agent>: <one-sentence reason>"
    model = ScriptedModel(replies=[echo, echo, "unused", "unused"])
    assistant = _assistant(model)

    await assistant.run_and_collect("s1", "list the files here")

    assert assistant.last_turn is not None
    assert assistant.last_turn.rejected_by == []


async def test_same_unknown_agent_twice_names_the_request_and_the_agents() -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="wizard")] * 6)
    assistant = _assistant(model)

    reply = await assistant.run_and_collect("s1", "cast a spell")

    assert len(model.requests) == 2
    for name in assistant.agent_names:
        assert name in reply
    assert "'wizard'" in reply


async def test_failed_transfer_attempts_count_toward_the_delegation_rounds() -> None:
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name=name) for name in ("a1", "a2", "a3", "a4")]
        + ["unused"] * 4
    )
    assistant = _assistant(model, rounds=3)

    reply = await assistant.run_and_collect("s1", "do something")

    assert len(model.requests) == 4
    assert "3 delegation rounds" in reply


async def test_specialist_transfer_to_a_sibling_counts_as_its_rejection_and_a_round() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="navigator"),
            call("transfer_to_agent", agent_name="operator"),
            "done",
        ]
    )
    assistant = _assistant(model)

    await assistant.run_and_collect("s1", "list the files here")

    turn = assistant.last_turn
    assert turn is not None
    assert (turn.rejected_by, turn.reached, turn.delegations) == (
        ["navigator"],
        ["navigator", "operator"],
        2,
    )
    assert turn.invalid_names == []
