"""The in-flight repairs of malformed replies, on the pure functions of troupe.guards.repairs."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from troupe.guards.repairs import (
    AGENT_AS_FUNCTION,
    ECHOED_REJECT,
    EMPTY_JSON,
    EMPTY_REPLY,
    JSON_TEXT,
    PYTHON_CALL_TEXT,
    TOOL_CALL_TAG,
    UNKNOWN_FUNCTION,
    Caller,
    calls_in_text,
    examine,
    matching_tool,
    task_text,
)
from troupe.routing.repair import AgentNameResolver

AGENTS = ["operator", "navigator", "vault", "librarian", "chronicler", "planner"]
RESOLVER = AgentNameResolver(
    AGENTS,
    prefixes={
        "operator": ["fs_", "exec"],
        "navigator": ["browser_"],
        "vault": ["crypto_", "secrets_"],
    },
)
ROOT = Caller(
    agent="orchestrator",
    functions={"transfer_to_agent": frozenset({"agent_name"})},
    is_root=True,
)
OPERATOR = Caller(
    agent="operator",
    functions={
        "fs_list": frozenset({"path"}),
        "fs_read": frozenset({"path"}),
        "exec_shell": frozenset({"command"}),
    },
    is_root=False,
)
TRANSFER = '{"name": "transfer_to_agent", "arguments": {"agent_name": "operator"}}'


def _text(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _call(name: str, **args: Any) -> LlmResponse:
    call = types.FunctionCall(name=name, args=args)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def _repaired(response: LlmResponse, caller: Caller) -> list[types.Part]:
    outcome = examine(response, caller, RESOLVER.resolve)
    repaired = outcome.response(response)
    assert repaired is not None and repaired.content is not None
    return list(repaired.content.parts or [])


def _only_call(parts: list[types.Part]) -> tuple[str | None, dict[str, Any]]:
    (part,) = parts
    assert part.function_call is not None
    return part.function_call.name, dict(part.function_call.args or {})


@pytest.mark.parametrize(
    ("name", "agent"),
    [("operator", "operator"), ("vault", "vault"), ("browser_agent", "navigator")],
)
def test_agent_called_as_function_at_the_orchestrator_becomes_a_transfer(
    name: str, agent: str
) -> None:
    parts = _repaired(_call(name, command="ls"), ROOT)

    assert _only_call(parts) == (
        "transfer_to_agent",
        {"agent_name": agent, "transfer_reason": "command: ls"},
    )


def test_specialist_tool_called_by_the_orchestrator_becomes_a_transfer_to_its_owner() -> None:
    parts = _repaired(_call("fs_list", path="."), ROOT)

    assert _only_call(parts) == (
        "transfer_to_agent",
        {"agent_name": "operator", "transfer_reason": "path: ."},
    )


def test_unresolvable_function_at_the_orchestrator_stays_a_transfer_attempt() -> None:
    outcome = examine(_call("wizard", task="x"), ROOT, RESOLVER.resolve)

    assert outcome.parts is not None
    assert _only_call(outcome.parts) == (
        "transfer_to_agent",
        {"agent_name": "wizard", "transfer_reason": "x"},
    )
    assert outcome.findings == ()


def test_agent_call_finding_names_what_was_asked_and_what_it_became() -> None:
    outcome = examine(_call("vault", text="hi"), ROOT, RESOLVER.resolve)

    (finding,) = outcome.findings
    assert (finding.shape, finding.asked, finding.became) == (AGENT_AS_FUNCTION, "vault", "vault")


def test_specialist_calling_another_agent_becomes_a_rejection_naming_it() -> None:
    (part,) = _repaired(_call("navigator", url="https://example.com"), OPERATOR)

    assert part.text is not None
    assert part.text.startswith("[REJECT] This task requires navigator:")
    assert "https://example.com" in part.text


def test_specialist_calling_its_own_name_gets_the_one_tool_its_arguments_fit() -> None:
    parts = _repaired(_call("operator", command="ls"), OPERATOR)

    assert _only_call(parts) == ("exec_shell", {"command": "ls"})


def test_specialist_call_that_fits_no_tool_is_left_for_adk_and_reported() -> None:
    outcome = examine(_call("teleport", where="mars"), OPERATOR, RESOLVER.resolve)

    assert outcome.parts is None
    assert [(f.shape, f.asked, f.became) for f in outcome.findings] == [
        (UNKNOWN_FUNCTION, "teleport", None)
    ]


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        (TRANSFER, JSON_TEXT),
        (f"```json\n{TRANSFER}\n```", JSON_TEXT),
        (f"I will delegate.\n```json\n{TRANSFER}\n```", JSON_TEXT),
        (f"<tool_call>\n{TRANSFER}\n</tool_call>", TOOL_CALL_TAG),
        (f"<tool_call>{TRANSFER}", TOOL_CALL_TAG),
        ('{"agent_name": "operator"}', JSON_TEXT),
        ("{'name': 'transfer_to_agent', 'arguments': {'agent_name': 'operator'}}", JSON_TEXT),
        (
            '{"function": {"name": "transfer_to_agent", '
            '"arguments": "{\\"agent_name\\": \\"operator\\"}"}}',
            JSON_TEXT,
        ),
    ],
)
def test_transfer_written_as_text_becomes_the_real_transfer(text: str, shape: str) -> None:
    outcome = examine(_text(text), ROOT, RESOLVER.resolve)

    assert outcome.parts is not None
    assert _only_call(outcome.parts) == ("transfer_to_agent", {"agent_name": "operator"})
    assert [f.shape for f in outcome.findings] == [shape]


def test_agent_name_written_as_a_json_call_becomes_a_transfer() -> None:
    parts = _repaired(_text('{"name": "operator", "arguments": {"command": "ls"}}'), ROOT)

    assert _only_call(parts)[1]["agent_name"] == "operator"


def test_tool_call_written_as_json_by_a_specialist_becomes_the_real_call() -> None:
    text = '```json\n{"name": "fs_list", "arguments": {"path": "docs"}}\n```'

    parts = _repaired(_text(text), OPERATOR)

    assert _only_call(parts) == ("fs_list", {"path": "docs"})


@pytest.mark.parametrize("text", ["{}", "```json\n```", "```json\n{}\n```", "  {}  "])
def test_empty_json_reply_becomes_an_empty_reply(text: str) -> None:
    outcome = examine(_text(text), ROOT, RESOLVER.resolve)

    assert outcome.parts == []
    assert [(f.shape, f.became) for f in outcome.findings] == [(EMPTY_JSON, EMPTY_REPLY)]


@pytest.mark.parametrize(
    "text",
    [
        '{"path": ".", "entries": ["a.txt"]}',
        'The result:\n```json\n{"path": ".", "total": 2}\n```',
        "Here is an example: {name: x}",
        "Done. The files are a.txt and b/.",
    ],
)
def test_a_specialist_answer_that_holds_data_is_left_alone(text: str) -> None:
    outcome = examine(_text(text), OPERATOR, RESOLVER.resolve)

    assert outcome.parts is None
    assert outcome.findings == ()


def test_json_naming_nothing_callable_at_a_specialist_is_left_as_its_answer() -> None:
    outcome = examine(_text('{"name": "Alice", "args": {}}'), OPERATOR, RESOLVER.resolve)

    assert outcome.parts is None


def test_orchestrator_echoing_the_reject_template_becomes_an_empty_reply() -> None:
    text = "[REJECT] This task requires <agent>: <one-sentence reason>"

    outcome = examine(_text(text), ROOT, RESOLVER.resolve)

    assert outcome.parts == []
    assert [(f.shape, f.became) for f in outcome.findings] == [(ECHOED_REJECT, EMPTY_REPLY)]


def test_orchestrator_echoing_reject_with_a_real_agent_becomes_that_transfer() -> None:
    parts = _repaired(_text("[REJECT] This task requires vault: secrets."), ROOT)

    assert _only_call(parts) == ("transfer_to_agent", {"agent_name": "vault"})


def test_specialist_reject_is_a_rejection_not_a_repair() -> None:
    outcome = examine(
        _text("[REJECT] This task requires vault: secrets."), OPERATOR, RESOLVER.resolve
    )

    assert outcome.parts is None and outcome.findings == ()


def test_a_well_formed_transfer_is_left_alone() -> None:
    outcome = examine(_call("transfer_to_agent", agent_name="operator"), ROOT, RESOLVER.resolve)

    assert outcome.parts is None and outcome.findings == ()


def test_repaired_response_keeps_the_models_usage_counts() -> None:
    response = _call("operator", command="ls")
    response.usage_metadata = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=900, candidates_token_count=12
    )

    repaired = examine(response, ROOT, RESOLVER.resolve).response(response)

    assert repaired is not None and repaired.usage_metadata is not None
    assert repaired.usage_metadata.prompt_token_count == 900


def test_text_that_holds_no_call_is_not_a_written_call() -> None:
    assert calls_in_text("Hello! How can I help?") is None


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({"task": "list the files"}, "list the files"),
        ({"command": "ls", "cwd": "/srv"}, "command: ls; cwd: /srv"),
        ({}, ""),
        ({"paths": ["a", "b"]}, 'paths: ["a", "b"]'),
    ],
)
def test_arguments_of_a_hand_off_become_its_task_text(args: dict[str, Any], text: str) -> None:
    assert task_text(args) == text


def test_arguments_that_fit_two_tools_pick_neither() -> None:
    assert matching_tool({"path": "."}, OPERATOR.functions) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('operator(command="ls")', ("transfer_to_agent", "operator")),
        ('transfer_to_agent(agent_name="vault")', ("transfer_to_agent", "vault")),
        ('`fs_list(path=".")`', ("transfer_to_agent", "operator")),
    ],
)
def test_call_written_as_python_text_becomes_the_real_call(
    text: str, expected: tuple[str, str]
) -> None:
    outcome = examine(_text(text), ROOT, RESOLVER.resolve)

    assert outcome.parts is not None
    name, args = _only_call(outcome.parts)
    assert (name, args["agent_name"]) == expected
    assert [f.shape for f in outcome.findings] == [PYTHON_CALL_TEXT]


@pytest.mark.parametrize("text", ["print(x)", 'greet(name="Bob")', "f(1, 2)", "len('abc')"])
def test_python_looking_prose_naming_nothing_known_is_left_alone(text: str) -> None:
    outcome = examine(_text(text), ROOT, RESOLVER.resolve)

    assert outcome.parts is None and outcome.findings == ()
