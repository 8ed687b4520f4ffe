"""The evaluation counts real model calls, real tokens, and every malformed reply."""

from __future__ import annotations

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from troupe import Config, build_agent_tree
from troupe.evaluation import RoutingCase, evaluate_cases, run_evaluation
from troupe.testing import ScriptedModel
from troupe_bench.stub_tools import stub_tools


def _case(text: str, expected: str) -> RoutingCase:
    return RoutingCase(text=text, expected=(expected,), kind="plain", lang="en")


def _reply(part: types.Part, prompt: int, output: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            candidates_token_count=output,
            total_token_count=prompt + output,
        ),
    )


def _call(name: str, prompt: int, output: int, **args: object) -> LlmResponse:
    return _reply(
        types.Part(function_call=types.FunctionCall(name=name, args=args)), prompt, output
    )


def _text(text: str, prompt: int, output: int) -> LlmResponse:
    return _reply(types.Part(text=text), prompt, output)


async def test_tokens_are_summed_over_every_model_call_of_the_request() -> None:
    model = ScriptedModel(
        replies=[_text("{}", 2000, 3), _call("transfer_to_agent", 2100, 9, agent_name="operator")]
    )

    [result] = await run_evaluation(
        [_case("list the files", "operator")], model=model, tools=stub_tools()
    )

    assert result.routed == "operator"
    assert (result.model_calls, result.prompt_tokens, result.output_tokens) == (2, 4100, 12)


async def test_a_replaced_reply_still_counts_its_tokens() -> None:
    model = ScriptedModel(replies=[_call("operator", 1500, 20, command="ls")])

    [result] = await run_evaluation(
        [_case("list the files", "operator")], model=model, tools=stub_tools()
    )

    assert result.routed == "operator"
    assert (result.prompt_tokens, result.output_tokens) == (1500, 20)


async def test_model_calls_are_counted_with_the_guards_off() -> None:
    model = ScriptedModel(
        replies=[_text("Let me think.", 900, 4), _text("Still thinking.", 950, 4)] * 2
    )
    config = Config(tools=stub_tools(), model=model, guards=False, transfer_repair=False)

    [result] = await evaluate_cases(build_agent_tree(config), [_case("hi", "orchestrator")])

    assert result.model_calls == 1
    assert result.prompt_tokens == 900


async def test_an_agent_called_as_a_function_counts_as_an_invalid_name_and_a_repair() -> None:
    model = ScriptedModel(replies=[_call("vault", 800, 8, text="hello")])

    [result] = await run_evaluation([_case("hash hello", "vault")], model=model, tools=stub_tools())

    assert result.correct
    assert result.invalid_names == ["vault"]
    assert result.repairs == [("vault", "vault")]


async def test_a_transfer_written_as_json_counts_as_an_invalid_name_and_a_repair() -> None:
    text = '```json\n{"name": "transfer_to_agent", "arguments": {"agent_name": "operator"}}\n```'
    model = ScriptedModel(replies=[_text(text, 800, 30)])

    [result] = await run_evaluation(
        [_case("list the files", "operator")], model=model, tools=stub_tools()
    )

    assert result.correct
    assert len(result.invalid_names) == 1
    assert result.repairs == [("transfer_to_agent written as text", "operator")]


async def test_an_echoed_reject_counts_as_an_invalid_name_not_a_route() -> None:
    echo = "[REJECT] This task requires <agent>: <one-sentence reason>"
    model = ScriptedModel(replies=[_text(echo, 800, 12), _text("Hello there.", 820, 3)])

    [result] = await run_evaluation([_case("hi", "orchestrator")], model=model, tools=stub_tools())

    assert result.routed == "orchestrator"
    assert result.invalid_names == ["[REJECT]"]
    assert (result.model_calls, result.prompt_tokens, result.output_tokens) == (2, 1620, 15)
