"""The runtime guards, through ADK's Runner with a scripted model."""

from __future__ import annotations

import logging

import pytest

import troupe
import troupe.runtime.assistant
import troupe.runtime.events
from fakes.scripted import scripted_assistant, turn_events
from troupe.models.resilient import TransientModelError
from troupe.testing import ScriptedModel, call, declared_tools, simplify, user_texts
from troupe_bench.stub_tools import stub_tools


@pytest.mark.parametrize(
    ("invented", "real"),
    [
        ("browser_agent", "navigator"),
        ("browser", "navigator"),
        ("exec", "operator"),
        ("filesystem_agent", "operator"),
        ("crypto", "vault"),
        ("Operator", "operator"),
        ("memory_manager", "chronicler"),
        ("memory-manager", "chronicler"),
        ("executor", "operator"),
        ("researcher", "librarian"),
    ],
)
async def test_resolvable_transfer_name_is_repaired_without_an_extra_model_call(
    invented: str, real: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name=invented), "done"])
    assistant = scripted_assistant(model)
    with caplog.at_level(logging.WARNING, logger="troupe.guards"):
        events = await turn_events(assistant, "do it")
    assert simplify(events) == [("orchestrator", "transfer", real), (real, "text", None)]
    assert len(model.requests) == 2
    assert assistant.last_turn is not None
    assert assistant.last_turn.repairs == [(invented, real)]
    assert f"Repaired transfer target {invented!r} -> {real!r}" in caplog.text


async def test_classic_names_resolve_back_from_default_names() -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="librarian"), "found"])
    config = troupe.Config(tools=stub_tools(), model=model, topology="classic")
    events = await turn_events(troupe.Assistant(troupe.build_agent_tree(config)), "look it up")
    assert simplify(events)[0] == ("orchestrator", "transfer", "researcher")


async def test_unresolvable_name_gets_valid_names_and_is_corrected_in_the_same_run() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="assistant"),
            call("transfer_to_agent", agent_name="operator"),
            "listed",
        ]
    )
    events = await turn_events(scripted_assistant(model), "list files")
    error = next(
        s for e in events for s in troupe.runtime.events.steps(e) if s.kind == "tool_result"
    )
    assert "'assistant' does not exist" in error.text
    assert "operator, navigator, vault, librarian, planner, chronicler" in error.text
    assert simplify(events)[-2:] == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "text", None),
    ]
    assert len(model.requests) == 3


async def test_transfer_repair_off_leaves_the_specified_retry() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="browser_agent"),
            call("transfer_to_agent", agent_name="navigator"),
            "page read",
        ]
    )
    assistant = scripted_assistant(model, transfer_repair=False)
    reply = await assistant.run_and_collect("s1", "open the page")
    assert reply == "page read"
    assert user_texts(model.requests[1])[-1].startswith('[System: Agent "browser_agent" does not')


async def test_transfer_repair_off_raises_after_second_unknown_name() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="browser_agent"),
            call("transfer_to_agent", agent_name="web_agent"),
        ]
    )
    with pytest.raises(troupe.UnknownAgentError) as info:
        await scripted_assistant(model, transfer_repair=False).run_and_collect(
            "s1", "open the page"
        )
    assert info.value.agent_name == "web_agent"
    assert "navigator" in info.value.valid_names


async def test_delegations_stop_at_the_configured_limit_with_an_honest_message() -> None:
    replies: list[object] = []
    for _ in range(3):
        replies += [
            call("transfer_to_agent", agent_name="operator"),
            "[REJECT] This task requires vault: not mine",
        ]
    model = ScriptedModel(replies=replies + ["unused"] * 5)
    assistant = scripted_assistant(model, max_delegation_rounds=1)
    reply = await assistant.run_and_collect("s1", "do something")
    assert "[REJECT]" not in reply
    assert reply.strip() != ""
    assert assistant.last_turn is not None
    assert assistant.last_turn.delegations <= 1


async def test_model_calls_are_capped_per_turn() -> None:
    model = ScriptedModel(replies=[call("fs_list", path=str(i)) for i in range(50)])
    assistant = scripted_assistant(model, multi_agent=False, max_model_calls=4)
    reply = await assistant.run_and_collect("s1", "list")
    assert len(model.requests) == 4
    assert "limit of 4 model calls" in reply
    assert "Done so far: fs_list (assistant)" in reply


async def test_repeated_identical_tool_call_is_stopped() -> None:
    model = ScriptedModel(replies=[call("fs_list", path=".")] * 10)
    assistant = scripted_assistant(model, multi_agent=False)
    events = await turn_events(assistant, "list")
    kinds = simplify(events)
    assert kinds.count(("assistant", "tool_call", "fs_list")) == 3
    text = troupe.runtime.assistant.visible_text(events[-1])
    assert "called fs_list with the same arguments 3 times" in text
    assert "Last result (fs_list)" in text


async def test_specialist_cannot_transfer_back_and_does_the_task_instead() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("transfer_to_agent", agent_name="orchestrator"),
            call("fs_list", path="."),
            "two files",
        ]
    )
    events = await turn_events(scripted_assistant(model), "list files")
    assert simplify(events) == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_result", "transfer_to_agent"),
        ("operator", "tool_call", "fs_list"),
        ("operator", "tool_result", "fs_list"),
        ("operator", "text", None),
    ]


async def test_rejection_is_handed_to_the_named_agent_without_an_orchestrator_call() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            "[REJECT] This task requires navigator: it is a web page",
            call("browser_navigate", url="https://example.com"),
            "The page says hello",
        ]
    )
    assistant = scripted_assistant(model)
    events = await turn_events(assistant, "open https://example.com")
    shown = [troupe.runtime.assistant.visible_text(e) for e in events]
    assert not any("[REJECT]" in s for s in shown)
    assert shown[-1] == "The page says hello"
    assert "browser_navigate" in declared_tools(model.requests[2])
    assert simplify(events)[:2] == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "transfer", "navigator"),
    ]
    assert assistant.last_turn is not None
    assert assistant.last_turn.reached == ["operator", "navigator"]


async def test_rejection_naming_no_agent_goes_back_to_the_orchestrator() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            "[REJECT] This task requires somebody_else: not a file task",
            call("transfer_to_agent", agent_name="navigator"),
            call("browser_navigate", url="https://example.com"),
            "ok",
        ]
    )
    events = await turn_events(scripted_assistant(model), "open https://example.com")
    note = user_texts(model.requests[2])[-1]
    assert "operator declined the user's request" in note
    assert "Do not delegate it to operator" in note
    assert simplify(events)[-1] == ("navigator", "text", None)


async def test_agent_that_rejected_is_not_sent_the_same_turn_again() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            "[REJECT] This task requires the web team: web",
            call("transfer_to_agent", agent_name="operator"),
            call("transfer_to_agent", agent_name="navigator"),
            call("browser_navigate", url="https://example.com"),
            "ok",
        ]
    )
    events = await turn_events(scripted_assistant(model), "open https://example.com")
    # The orchestrator's second choice is asked with the refused transfer answered.
    answer = (model.requests[3].contents[-1].parts or [])[0].function_response
    assert answer is not None and answer.response is not None
    assert "operator already declined this request" in answer.response["error"]
    assert simplify(events)[-1] == ("navigator", "text", None)


async def test_two_rejections_end_in_a_direct_answer() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            "[REJECT] This task requires vault: secrets",
            "[REJECT] This task requires operator: shell",
            "Sorry, nobody on the team can do that.",
        ]
    )
    reply = await scripted_assistant(model).run_and_collect("s1", "do the impossible")
    assert reply == "Sorry, nobody on the team can do that."
    assert "secrets_list" in declared_tools(model.requests[2])
    assert "answer the user directly" in user_texts(model.requests[3])[-1]


async def test_empty_turn_gets_one_nudge_then_the_last_tool_result() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_list", path="."),
            "",
            "",
        ]
    )
    assistant = scripted_assistant(model)
    reply = await assistant.run_and_collect("s1", "list files")
    assert "Report the result" in user_texts(model.requests[3])[-1]
    assert "The last result, from fs_list" in reply
    assert "entries:\n  a.txt" in reply  # readable lines, not a dict's repr


async def test_transient_model_errors_are_retried_with_backoff() -> None:
    model = ScriptedModel(
        replies=[TransientModelError(429), TransientModelError(500), "hello there"]
    )
    reply = await scripted_assistant(model).run_and_collect("s1", "hi")
    assert reply == "hello there"
    assert len(model.requests) == 3


async def test_non_transient_model_errors_are_not_retried() -> None:
    model = ScriptedModel(replies=[ValueError("bad request"), "never"])
    with pytest.raises(ValueError, match="bad request"):
        await scripted_assistant(model).run_and_collect("s1", "hi")
    assert len(model.requests) == 1


async def test_orchestrator_request_omits_adk_transfer_list_but_keeps_every_section() -> None:
    model = ScriptedModel(replies=["hi"])
    await scripted_assistant(model).run_and_collect("s1", "hello")
    system = troupe.testing.system_text(model.requests[0])
    assert "You have a list of other agents to transfer to" not in system
    for section in (
        "## Routing table",
        "## Decision protocol",
        "## Rejections",
        "## Delegation rules",
        "NEVER invent or abbreviate agent names",
    ):
        assert section in system


async def test_guards_off_keeps_adk_transfer_list() -> None:
    model = ScriptedModel(replies=["hi"])
    await scripted_assistant(model, guards=False).run_and_collect("s1", "hello")
    assert "You have a list of other agents to transfer to" in troupe.testing.system_text(
        model.requests[0]
    )
