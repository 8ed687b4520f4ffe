"""build_agent_tree: the ADK tree built from a Config."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

import troupe
from fakes.agents import OPERATOR_TOOLS, tool_names
from troupe.testing import ScriptedModel, simplify

SPECIFIED = ["operator", "navigator", "vault", "librarian", "planner", "chronicler"]


def tool(name: str) -> troupe.Tool:
    def run(request: str = "") -> dict[str, str]:
        return {"tool": name, "request": request}

    run.__name__ = name
    return troupe.Tool(name=name, description=f"Performs {name.replace('_', ' ')}.", func=run)


def build(tool_names: list[str], **options: Any) -> LlmAgent:
    options.setdefault("model", "offline")
    return troupe.build_agent_tree(troupe.Config(tools=[tool(n) for n in tool_names], **options))


def test_multi_agent_root_is_named_orchestrator_and_holds_no_tools() -> None:
    root = build(["exec_shell"])

    assert root.name == "orchestrator"
    assert root.tools == []


def test_config_defaults_to_multi_agent_with_default_topology() -> None:
    config = troupe.Config()

    assert config.multi_agent is True
    assert config.max_delegation_rounds == 0
    assert config.topology == "default"


def test_sub_agents_follow_topology_order_not_tool_order() -> None:
    root = build(["memory_store", "search_web", "crypto_sign", "browser_open", "fs_read"])

    assert [a.name for a in root.sub_agents] == SPECIFIED


def test_sub_agents_are_in_chat_mode_so_they_are_not_turned_into_tools() -> None:
    root = build(["fs_read", "browser_open"])

    assert [a.mode for a in root.sub_agents if isinstance(a, LlmAgent)] == ["chat"] * 3


def test_sub_agents_hold_exactly_their_own_tools() -> None:
    root = build(["fs_read", "browser_open", "exec_shell"])
    by_name = {a.name: a for a in root.sub_agents}

    assert tool_names(by_name["operator"]) == ["fs_read", "exec_shell"]
    assert tool_names(by_name["navigator"]) == ["browser_open"]
    assert tool_names(by_name["planner"]) == []


def test_agent_without_tools_is_skipped_unless_always_include() -> None:
    topology = troupe.Topology(
        name="trio",
        agents=(
            troupe.AgentSpec(name="worker", description="Works.", prefixes=("work_",)),
            troupe.AgentSpec(name="idle", description="Idles.", prefixes=("idle_",)),
            troupe.AgentSpec(name="thinker", description="Thinks.", always_include=True),
        ),
        planner=False,
    )

    root = build(["work_hard"], topology=topology)

    assert [a.name for a in root.sub_agents] == ["worker", "thinker"]


def _two_workers(**options: Any) -> troupe.Topology:
    return troupe.Topology(
        name="pair",
        agents=(
            troupe.AgentSpec(name="cook", description="Cooks.", prefixes=("cook_",)),
            troupe.AgentSpec(name="waiter", description="Serves.", prefixes=("serve_",)),
        ),
        **options,
    )


def test_a_team_without_a_planner_gets_troupes_planner_holding_its_team() -> None:
    root = build(["cook_pasta", "serve_table"], topology=_two_workers())

    planner = next(a for a in root.sub_agents if a.name == "planner")
    assert [a.name for a in root.sub_agents] == ["cook", "waiter", "planner"]
    assert tool_names(planner) == [] and len(getattr(planner, "tools", [])) == 2  # its team
    assert "goes to planner first" in str(root.instruction)


def test_planner_false_keeps_a_team_as_written() -> None:
    root = build(["cook_pasta", "serve_table"], topology=_two_workers(planner=False))

    assert [a.name for a in root.sub_agents] == ["cook", "waiter"]


def test_an_agent_marked_plans_is_the_teams_planner_whatever_its_name() -> None:
    topology = troupe.Topology(
        name="kitchen",
        agents=(
            *_two_workers().agents,
            troupe.AgentSpec(name="chef", description="Runs the kitchen.", plans=True),
        ),
    )

    root = build(["cook_pasta", "serve_table"], topology=topology)

    chef = next(a for a in root.sub_agents if a.name == "chef")
    assert [a.name for a in root.sub_agents] == ["cook", "waiter", "chef"]
    assert len(getattr(chef, "tools", [])) == 2
    assert "goes to chef first" in str(root.instruction)


def test_adapt_tool_is_called_once_per_routed_tool_and_never_for_unmatched() -> None:
    calls: Counter[str] = Counter()

    def adapt(t: troupe.Tool) -> BaseTool:
        calls[t.name] += 1
        return FunctionTool(func=t.func)

    build(["fs_read", "browser_open", "weather_now", "exec_shell"], adapt_tool=adapt)

    assert calls == Counter({"fs_read": 1, "browser_open": 1, "exec_shell": 1})


def test_adapter_failure_raises_naming_the_agent_and_the_tool() -> None:
    def adapt(t: troupe.Tool) -> BaseTool:
        if t.name == "browser_open":
            raise RuntimeError("no browser installed")
        return FunctionTool(func=t.func)

    with pytest.raises(troupe.ToolAdapterError) as caught:
        build(["fs_read", "browser_open"], adapt_tool=adapt)

    error = caught.value
    assert isinstance(error, troupe.ConfigError)
    assert (error.agent_name, error.tool_name) == ("navigator", "browser_open")
    assert "'navigator'" in str(error)
    assert "'browser_open'" in str(error)
    assert "no browser installed" in str(error)


def test_default_adapter_keeps_the_tool_name_and_description() -> None:
    def fs_read_impl(path: str) -> str:
        return path

    t = troupe.Tool(name="fs_read", description="Read a file.", func=fs_read_impl)
    root = troupe.build_agent_tree(troupe.Config(tools=[t], model="offline"))

    operator = root.sub_agents[0]
    assert isinstance(operator, LlmAgent)
    adapted = operator.tools[0]
    assert isinstance(adapted, BaseTool)
    assert adapted.name == "fs_read"
    assert adapted.description == "Read a file."


def test_remote_agents_are_appended_with_a_routing_entry() -> None:
    remote = LlmAgent(
        name="weather", description="Reports the weather forecast.", model=troupe.OfflineModel()
    )

    root = build(["fs_read"], remote_agents=[remote])

    assert [a.name for a in root.sub_agents] == ["operator", "planner", "weather"]
    assert root.sub_agents[-1] is remote
    assert isinstance(root.instruction, str)
    assert "### weather\n- Role: Reports the weather forecast." in root.instruction
    assert "The only valid agent names are: operator, planner, weather." in root.instruction


def test_remote_agent_with_a_taken_name_is_rejected() -> None:
    remote = LlmAgent(name="operator", description="Impostor.", model=troupe.OfflineModel())

    with pytest.raises(troupe.ConfigError, match="'operator'"):
        build(["fs_read"], remote_agents=[remote])


def test_remote_agent_that_is_not_an_adk_agent_is_rejected() -> None:
    with pytest.raises(troupe.ConfigError, match="BaseAgent"):
        build(["fs_read"], remote_agents=["http://example.invalid/agent"])


def test_single_agent_mode_holds_every_tool_including_unmatched() -> None:
    root = build(["fs_read", "browser_open", "weather_now"], multi_agent=False)

    assert root.sub_agents == []
    assert tool_names(root) == ["fs_read", "browser_open", "weather_now"]


def test_single_agent_mode_adapts_unmatched_tools_too() -> None:
    calls: Counter[str] = Counter()

    def adapt(t: troupe.Tool) -> BaseTool:
        calls[t.name] += 1
        return FunctionTool(func=t.func)

    build(["fs_read", "weather_now"], multi_agent=False, adapt_tool=adapt)

    assert calls == Counter({"fs_read": 1, "weather_now": 1})


def test_single_agent_instruction_starts_with_the_system_prompt() -> None:
    root = build(["fs_read"], multi_agent=False, system_prompt="You are Ada.")

    assert str(root.instruction).startswith("You are Ada.")


@pytest.mark.parametrize("multi_agent", [True, False], ids=["multi", "single"])
async def test_brace_in_system_prompt_does_not_break_a_run(multi_agent: bool) -> None:
    prompt = 'Greet {user} and answer as JSON like {"ok": true}.'
    root = build(["fs_read"], system_prompt=prompt, multi_agent=multi_agent)

    reply = await troupe.Assistant(root).run_and_collect("s1", "hello")

    assert reply
    assert prompt in str(root.instruction)


async def test_brace_in_system_prompt_reaches_the_model_unchanged() -> None:
    prompt = "Use the {user} placeholder literally."
    model = ScriptedModel(replies=["Hi."])
    root = build(["fs_read"], system_prompt=prompt, model=model)

    events = [e async for e in troupe.Assistant(root).run("s1", "hello")]

    assert simplify(events) == [("orchestrator", "text", None)]
    system = model.requests[0].config.system_instruction
    assert prompt in str(system)


def test_model_name_is_resolved_for_every_agent() -> None:
    root = build(["fs_read"], model="offline")

    assert isinstance(root.model, troupe.OfflineModel)
    assert all(
        isinstance(a, LlmAgent) and isinstance(a.model, troupe.OfflineModel)
        for a in root.sub_agents
    )


def test_model_instance_is_used_as_given_by_every_agent() -> None:
    model = ScriptedModel(replies=[])
    root = build(["fs_read"], model=model)

    assert root.model is model
    assert all(isinstance(a, LlmAgent) and a.model is model for a in root.sub_agents)


def test_unknown_model_name_raises_config_error() -> None:
    with pytest.raises(troupe.ConfigError, match="offline"):
        build(["fs_read"], model="no-such-model")


async def test_tree_runs_end_to_end_offline() -> None:
    root = troupe.build_agent_tree(troupe.Config(tools=OPERATOR_TOOLS, model="offline"))

    events = [e async for e in troupe.Assistant(root).run("s1", "list the files here")]

    assert simplify(events)[:2] == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_call", "fs_list"),
    ]


async def test_the_planner_troupe_adds_leaves_a_teams_own_words_to_the_team() -> None:
    root = build(["cook_pasta", "serve_table"], topology=_two_workers(), router="auto")

    router = await root.troupe_router.router()  # type: ignore[attr-defined]
    planner = next(p for p in router.profiles if p.name == "planner")
    # "schedule" is a calendar's work on a travel team; "how should I wash it?"
    # asks a shop about a product: neither asks for a plan there.
    assert "plan" in planner.keywords and "step by step" in planner.keywords
    assert "schedule" not in planner.keywords
    assert "how should i" not in planner.fragments


async def test_the_planner_troupe_adds_leaves_a_word_the_team_declares_to_its_agent() -> None:
    topology = troupe.Topology(
        name="desk",
        agents=(
            troupe.AgentSpec(
                name="membership",
                description="Changes a member's plan.",
                prefixes=("member_",),
                keywords=("membership", "plan", "upgrade"),
            ),
            troupe.AgentSpec(name="mail", description="Holds parcels.", prefixes=("mail_",)),
        ),
    )
    root = build(["member_change_plan", "mail_list"], topology=topology, router="auto")

    router = await root.troupe_router.router()  # type: ignore[attr-defined]
    planner = next(p for p in router.profiles if p.name == "planner")
    # A membership desk's "plan" is a membership plan, not a plan of steps.
    assert "plan" not in planner.keywords and "step by step" in planner.keywords
    decision = router.decide("Please switch member KC-1904 to the resident plan from 2026-04-01.")
    assert decision.agent == "membership"
