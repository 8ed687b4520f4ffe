"""The prompt contract: the offline model, the instructions and the guards agree on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool
from google.genai import types

from troupe import Config, OfflineModel, build_agent_tree, builtin_tools, prompts


@pytest.fixture
def root(tmp_path: Path) -> LlmAgent:
    return build_agent_tree(Config(tools=builtin_tools(workspace=tmp_path), model="offline"))


def _agent(root: LlmAgent, name: str) -> LlmAgent:
    found = root if root.name == name else root.find_agent(name)
    assert isinstance(found, LlmAgent)
    return found


async def _reply(agent: LlmAgent, *turns: str | types.FunctionResponse) -> list[types.Part]:
    """The offline model's reply to ``turns`` (user texts or tool results) as ``agent``."""
    contents = []
    for turn in turns:
        if isinstance(turn, str):
            contents.append(types.Content(role="user", parts=[types.Part(text=turn)]))
        else:
            call = types.FunctionCall(name=turn.name, args={})
            contents.append(types.Content(role="model", parts=[types.Part(function_call=call)]))
            contents.append(types.Content(role="user", parts=[types.Part(function_response=turn)]))
    request = LlmRequest(contents=contents)
    request.config.system_instruction = str(agent.instruction)
    tools = [t for t in agent.tools if isinstance(t, BaseTool)]
    if agent.sub_agents:
        tools.append(TransferToAgentTool(agent_names=[a.name for a in agent.sub_agents]))
    request.append_tools(tools)
    model = agent.model  # the agent's own view of the team, given by the tree
    assert isinstance(model, OfflineModel)
    replies = [r async for r in model.generate_content_async(request)]
    assert replies[0].content is not None
    return list(replies[0].content.parts or [])


def _transfer_target(parts: list[types.Part]) -> str | None:
    for part in parts:
        call = part.function_call
        if call is not None and call.name == prompts.TRANSFER_TOOL:
            return str((call.args or {})[prompts.TRANSFER_ARG])
    return None


def _text(parts: list[types.Part]) -> str:
    return "".join(p.text or "" for p in parts)


async def test_offline_specialist_rejection_is_read_by_the_guards_as_naming_the_agent(
    root: LlmAgent,
) -> None:
    reply = _text(await _reply(_agent(root, "operator"), "encrypt my password"))

    assert prompts.is_rejection(reply)
    assert prompts.rejection_target(reply) == "vault"


def test_specialist_instruction_teaches_the_rejection_format_the_guards_read(
    root: LlmAgent,
) -> None:
    taught = str(_agent(root, "operator").instruction)
    example = prompts.reject_line("vault", "secrets are its job.")

    assert prompts.REJECT_FORMAT in taught
    assert prompts.rejection_target(example) == "vault"


async def test_offline_orchestrator_follows_a_reroute_note_to_the_named_agent(
    root: LlmAgent,
) -> None:
    note = prompts.reroute_message("operator", "navigator", ["operator"])

    parts = await _reply(root, "list the files here", note)

    assert prompts.delegate_target(note) == "navigator"
    assert _transfer_target(parts) == "navigator"


async def test_offline_orchestrator_avoids_agents_a_reroute_note_says_declined(
    root: LlmAgent,
) -> None:
    note = prompts.reroute_message("operator", None, ["operator"])

    parts = await _reply(root, "list the files here", note)

    assert prompts.declined_agents(note) == {"operator"}
    assert _transfer_target(parts) != "operator"


async def test_offline_orchestrator_answers_directly_when_a_note_says_so(root: LlmAgent) -> None:
    note = prompts.answer_directly_message(["operator", "navigator"])

    parts = await _reply(root, "list the files here", note)

    assert prompts.asks_direct_answer(note)
    assert _transfer_target(parts) is None
    assert _text(parts)


async def test_offline_orchestrator_reports_instead_of_delegating_after_a_nudge(
    root: LlmAgent,
) -> None:
    parts = await _reply(root, "list the files here", prompts.NUDGE_MESSAGE)

    assert prompts.asks_report(prompts.NUDGE_MESSAGE)
    assert _transfer_target(parts) is None
    assert _text(parts)


async def test_offline_orchestrator_skips_an_agent_a_guard_error_says_declined(
    root: LlmAgent,
) -> None:
    error = prompts.already_declined_error("operator", ["navigator", "vault"])
    result = types.FunctionResponse(name=prompts.TRANSFER_TOOL, response={"error": error})

    parts = await _reply(root, "list the files here", result)

    assert prompts.declined_agents(error) == {"operator"}
    assert _transfer_target(parts) != "operator"


def test_every_runtime_note_starts_with_the_system_prefix_the_offline_model_skips() -> None:
    notes = [
        prompts.correction_message("browser_agent", ["operator", "navigator"]),
        prompts.reroute_message("operator", "navigator", ["operator"]),
        prompts.reroute_message("operator", None, ["operator"]),
        prompts.answer_directly_message(["operator"]),
        prompts.handoff_message("operator", "navigator"),
        prompts.NUDGE_MESSAGE,
    ]

    assert all(prompts.is_system_note(note) for note in notes)
