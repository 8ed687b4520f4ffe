"""The router end to end through ADK's Runner: a confident request is
transferred with no orchestrator model call; anything else reaches the model,
with the router's candidates as a hint. The spec's delegation scenarios
(tests/spec/, which run with the router off) are repeated here with it on."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest

import troupe
from fakes.agents import OPERATOR_TOOLS
from troupe import Assistant, Config, Tool, build_agent_tree
from troupe.builtins import Workspace, operator_tools
from troupe.models._request import system_text
from troupe.prompts import ROUTER_HINT_HEADING
from troupe.runtime.tracing import build_trace
from troupe.testing import ScriptedModel, call, simplify


def browser_open(url: str) -> dict[str, str]:
    """Open a web page and return its title."""
    return {"title": f"page at {url}"}


@pytest.fixture
def tools(tmp_path: Path) -> list[Tool]:
    (tmp_path / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    return [*operator_tools(Workspace(tmp_path)), Tool.from_function(browser_open)]


async def collect(assistant: Assistant, text: str) -> list[Event]:
    return [event async for event in assistant.run("s1", text)]


def orchestrator_requests(model: ScriptedModel) -> list[LlmRequest]:
    return [r for r in model.requests if "## Routing table" in system_text(r)]


async def test_a_confident_route_makes_no_orchestrator_model_call(tools: list[Tool]) -> None:
    model = ScriptedModel(replies=[call("fs_list", path="."), "notes.txt is here."])
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="auto")))

    events = await collect(assistant, "List the files in this folder.")

    assert simplify(events) == [
        ("router", "transfer", "operator"),
        ("operator", "tool_call", "fs_list"),
        ("operator", "tool_result", "fs_list"),
        ("operator", "text", None),
    ]
    assert orchestrator_requests(model) == []
    assert model.remaining == 0
    assert assistant.last_turn is not None
    assert (assistant.last_turn.router, assistant.last_turn.model_calls) == ("route", 2)


async def test_the_trace_path_starts_at_the_router(tools: list[Tool]) -> None:
    model = ScriptedModel(replies=[call("fs_list", path="."), "notes.txt is here."])
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="auto")))

    events = await collect(assistant, "List the files in this folder.")
    trace = build_trace(
        "s1", "List the files", events, assistant.last_turn,
        outcome="answered", error=None, started_at=0.0, duration_s=0.0,
    )  # fmt: skip

    assert trace.path == ["router", "operator"]
    assert [c["agent"] for c in trace.model_calls] == ["operator", "operator"]


async def test_an_unclear_request_reaches_the_model_with_the_routers_hint(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(replies=["Could you say a little more about what you need?"])
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="auto")))

    events = await collect(assistant, "Can you help me with the thing from before?")

    assert simplify(events) == [("orchestrator", "text", None)]
    (request,) = orchestrator_requests(model)
    assert ROUTER_HINT_HEADING in system_text(request)
    # The router did not hand it on: the model decides, with the hint.
    assert assistant.last_turn is not None and assistant.last_turn.router in ("defer", "direct")


async def test_a_greeting_is_answered_by_the_orchestrators_model(tools: list[Tool]) -> None:
    model = ScriptedModel(replies=["Hello! What can I do for you?"])
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="auto")))

    events = await collect(assistant, "hello")

    assert simplify(events) == [("orchestrator", "text", None)]
    assert len(orchestrator_requests(model)) == 1
    assert assistant.last_turn is not None and assistant.last_turn.router == "greeting"


async def test_with_the_router_off_the_same_request_costs_an_orchestrator_call(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name="operator"), call("fs_list"), "done"]
    )
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="off")))

    events = await collect(assistant, "List the files in this folder.")

    assert simplify(events)[0] == ("orchestrator", "transfer", "operator")
    (request,) = orchestrator_requests(model)
    assert ROUTER_HINT_HEADING not in system_text(request)


async def test_a_rejection_after_a_routed_transfer_goes_back_to_the_model(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[
            "[REJECT] This task requires navigator: it is a web page.",
            call("transfer_to_agent", agent_name="navigator"),
            call("browser_open", url="https://example.com"),
            "The page is titled Example.",
        ]
    )
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model, router="auto")))

    events = await collect(assistant, "List the files in this folder.")

    transfers = [(a, n) for a, kind, n in simplify(events) if kind == "transfer"]
    assert transfers[0] == ("router", "operator")
    assert ("navigator", "text", None) in simplify(events)


# -- the spec's delegation scenarios, with the router on ------------------------


async def test_spec_tool_task_is_delegated_to_the_exact_registered_name_by_the_router() -> None:
    root = build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic", router="auto")
    )

    steps = simplify(await collect(Assistant(root), "run `echo spec`"))

    assert steps[:2] == [
        ("router", "transfer", "executor"),
        ("executor", "tool_call", "exec_shell"),
    ]


async def test_spec_simple_query_is_still_answered_directly_with_the_router_on() -> None:
    root = build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic", router="auto")
    )

    steps = simplify(await collect(Assistant(root), "hello"))

    assert steps == [("orchestrator", "text", None)]


async def test_spec_default_team_routes_each_role_without_an_orchestrator_call(
    tools: list[Tool],
) -> None:
    root = build_agent_tree(Config(tools=tools, model="offline", router="auto"))

    for text, agent in [
        ("run `uname -a`", "operator"),
        ("open https://example.com and read the page", "navigator"),
    ]:
        assistant = Assistant(root)
        steps = simplify(await collect(assistant, text))
        assert steps[0] == ("router", "transfer", agent), text
        assert assistant.last_turn is not None
        assert assistant.last_turn.router == "route"
