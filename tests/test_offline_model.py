"""The offline model driving the real tree and built-in tools through ADK's Runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from troupe import (
    AgentSpec,
    Assistant,
    Config,
    OfflineModel,
    Tool,
    Topology,
    build_agent_tree,
    builtin_tools,
)
from troupe.prompts import TRANSFER_ARG, TRANSFER_TOOL, router_hint
from troupe.runtime.events import Step, steps
from troupe.testing import simplify


def browser_open(url: str) -> dict[str, str]:
    """Open a web page and return its readable text."""
    return {"url": url, "text": "Example Domain"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    (root / "docs").mkdir()
    return root


@pytest.fixture
def team_tools(workspace: Path) -> list[Tool]:
    """Every built-in tool, with a stand-in for the browser so no page is fetched."""
    builtins = [t for t in builtin_tools(workspace=workspace) if not t.name.startswith("browser_")]
    return [*builtins, Tool.from_function(browser_open)]


@pytest.fixture
def assistant(team_tools: list[Tool]) -> Assistant:
    return Assistant(build_agent_tree(Config(tools=team_tools, model="offline")))


async def run(assistant: Assistant, text: str) -> list[Event]:
    return [event async for event in assistant.run("s1", text)]


def all_steps(events: list[Event]) -> list[Step]:
    return [step for event in events for step in steps(event)]


def first_call(events: list[Event]) -> tuple[str | None, dict[str, Any]]:
    step = next(s for s in all_steps(events) if s.kind == "tool_call")
    return step.name, json.loads(step.text)


def final_text(events: list[Event]) -> str:
    return [s.text for s in all_steps(events) if s.kind == "text"][-1]


@pytest.mark.parametrize(
    ("request_text", "agent"),
    [
        ("list the files here", "operator"),
        ("open https://example.com/page", "navigator"),
        ("hash this text with sha256: 'hello'", "vault"),
        ("search the knowledge base for troupe", "librarian"),
        ("remember that I like tea", "chronicler"),
        ("plan the steps to open https://example.com and then read notes.txt", "planner"),
    ],
)
async def test_orchestrator_routes_by_routing_table_keywords(
    assistant: Assistant, request_text: str, agent: str
) -> None:
    events = await run(assistant, request_text)

    assert simplify(events)[0] == ("orchestrator", "transfer", agent)


@pytest.mark.parametrize("greeting", ["hello", "Hi there!", "good morning", "thank you"])
async def test_orchestrator_answers_greetings_directly(assistant: Assistant, greeting: str) -> None:
    events = await run(assistant, greeting)

    assert simplify(events) == [("orchestrator", "text", None)]
    assert "rule-based stand-in" in final_text(events)


async def test_orchestrator_answers_directly_when_no_agent_matches(assistant: Assistant) -> None:
    events = await run(assistant, "what is the capital of France?")

    assert simplify(events) == [("orchestrator", "text", None)]
    assert "--model" in final_text(events)


@pytest.mark.parametrize(
    ("request_text", "tool", "args"),
    [
        ("list the files here", "fs_list", {"path": "."}),
        ("list the files in docs/", "fs_list", {"path": "docs/"}),
        ("read notes.txt", "fs_read", {"path": "notes.txt"}),
        ("read the file './notes.txt'", "fs_read", {"path": "./notes.txt"}),
        ("run `echo hi there`", "exec_shell", {"command": "echo hi there"}),
        ("run 'echo quoted'", "exec_shell", {"command": "echo quoted"}),
        ('execute "echo double"', "exec_shell", {"command": "echo double"}),
        ("write 'abc' to out.txt", "fs_write", {"path": "out.txt", "content": "abc"}),
        ("open https://example.com/a?b=1", "browser_open", {"url": "https://example.com/a?b=1"}),
    ],
)
async def test_specialist_picks_the_best_tool_and_fills_its_arguments(
    assistant: Assistant, request_text: str, tool: str, args: dict[str, Any]
) -> None:
    events = await run(assistant, request_text)

    assert first_call(events) == (tool, args)


async def test_specialist_reports_the_tool_result(assistant: Assistant) -> None:
    reply = await assistant.run_and_collect("s1", "read notes.txt")

    assert "Result of fs_read" in reply
    assert "remember the milk" in reply


async def test_specialist_reports_command_output(assistant: Assistant) -> None:
    reply = await assistant.run_and_collect("s1", "run `echo troupe-was-here`")

    assert "troupe-was-here" in reply
    assert "exit_code: 0" in reply


async def test_specialist_reports_a_tool_error_as_a_failure(assistant: Assistant) -> None:
    reply = await assistant.run_and_collect("s1", "read missing.txt")

    assert reply.startswith("fs_read failed:")
    assert "'missing.txt' is not a file" in reply


def _agent(root: LlmAgent, name: str) -> LlmAgent:
    found = root.find_agent(name)
    assert isinstance(found, LlmAgent)
    return found


async def _ask_directly(agent: LlmAgent, text: str) -> str:
    """Send one request to ``agent``'s model, built the way ADK builds it."""
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    request.config.system_instruction = str(agent.instruction)
    request.append_tools([t for t in agent.tools if isinstance(t, BaseTool)])
    model = agent.model  # the agent's own view of the team, given by the tree
    assert isinstance(model, OfflineModel)
    replies = [r async for r in model.generate_content_async(request)]
    assert len(replies) == 1 and replies[0].content is not None
    parts = replies[0].content.parts or []
    assert all(p.function_call is None for p in parts)
    return "".join(p.text or "" for p in parts)


async def test_specialist_rejects_a_task_outside_its_tools_naming_the_better_agent(
    team_tools: list[Tool],
) -> None:
    root = build_agent_tree(Config(tools=team_tools, model="offline"))
    operator = _agent(root, "operator")

    reply = await _ask_directly(operator, "browse the website https://example.com")

    assert reply.startswith("[REJECT] This task requires navigator")


async def test_specialist_rejects_secret_work_naming_vault(team_tools: list[Tool]) -> None:
    root = build_agent_tree(Config(tools=team_tools, model="offline"))
    navigator = _agent(root, "navigator")

    reply = await _ask_directly(navigator, "encrypt my password")

    assert reply.startswith("[REJECT] This task requires vault")


async def test_planner_returns_numbered_steps_each_with_an_agent(assistant: Assistant) -> None:
    events = await run(assistant, "plan: read notes.txt; hash the text; remember the digest")

    assert simplify(events) == [
        ("orchestrator", "transfer", "planner"),
        ("planner", "text", None),
    ]
    lines = final_text(events).splitlines()
    assert lines[1:] == [
        "1. read notes.txt -> operator",
        "2. hash the text -> vault",
        "3. remember the digest -> chronicler",
    ]


async def test_planner_reads_the_goal_after_a_plan_lead_in(assistant: Assistant) -> None:
    events = await run(
        assistant, "plan the steps to open https://example.com and then read notes.txt"
    )

    assert final_text(events).splitlines()[1:] == [
        "1. open https://example.com -> navigator",
        "2. read notes.txt -> operator",
    ]


async def test_planner_gives_a_step_that_names_no_agent_to_a_specialist_never_the_orchestrator(
    assistant: Assistant,
) -> None:
    events = await run(assistant, "plan the release: write the changelog, then tag it")

    assert final_text(events).splitlines()[1:] == [
        "1. write the changelog -> operator",
        "2. tag it -> operator",  # continues the step before it
    ]


async def test_routed_with_the_router_a_plan_request_goes_straight_to_the_planner(
    team_tools: list[Tool],
) -> None:
    routed = Assistant(build_agent_tree(Config(tools=team_tools, model="offline", router="auto")))

    events = await run(routed, "plan the release: write the changelog, then tag it")

    assert simplify(events) == [("router", "transfer", "planner"), ("planner", "text", None)]
    assert "-> orchestrator" not in final_text(events)


# Operator built-in tools: confinement to the workspace, timeouts, output caps.


@pytest.mark.parametrize(
    "request_text",
    [
        "read ../outside.txt",
        "read the file 'docs/../../outside.txt'",
    ],
)
async def test_path_leaving_the_workspace_is_refused_as_a_tool_error(
    assistant: Assistant, workspace: Path, request_text: str
) -> None:
    (workspace.parent / "outside.txt").write_text("top secret", encoding="utf-8")

    events = await run(assistant, request_text)

    result = next(s for s in all_steps(events) if s.kind == "tool_result")
    assert "outside the workspace" in json.loads(result.text)["error"]
    assert "top secret" not in final_text(events)
    assert final_text(events).startswith("fs_read failed: refused")


async def test_absolute_path_elsewhere_is_refused_as_a_tool_error(
    assistant: Assistant, workspace: Path
) -> None:
    outside = workspace.parent / "elsewhere.txt"
    outside.write_text("top secret", encoding="utf-8")

    events = await run(assistant, f"read {outside}")

    assert first_call(events) == ("fs_read", {"path": str(outside)})
    assert final_text(events).startswith("fs_read failed: refused")
    assert "top secret" not in final_text(events)


async def test_symlink_pointing_out_of_the_workspace_is_refused(
    assistant: Assistant, workspace: Path
) -> None:
    outside = workspace.parent / "target.txt"
    outside.write_text("top secret", encoding="utf-8")
    (workspace / "link.txt").symlink_to(outside)

    events = await run(assistant, "read link.txt")

    assert first_call(events) == ("fs_read", {"path": "link.txt"})
    assert final_text(events).startswith("fs_read failed: refused")
    assert "top secret" not in final_text(events)


def _tool(tools: list[Tool], name: str) -> Tool:
    return next(t for t in tools if t.name == name)


@pytest.mark.parametrize("path", ["..", "/", "../ws-sibling"])
def test_fs_list_refuses_directories_outside_the_workspace(workspace: Path, path: str) -> None:
    fs_list = _tool(builtin_tools(workspace=workspace), "fs_list")

    result = fs_list.func(path)

    assert "outside the workspace" in result["error"]
    assert "entries" not in result


def test_fs_write_refuses_to_write_outside_the_workspace(workspace: Path) -> None:
    fs_write = _tool(builtin_tools(workspace=workspace), "fs_write")

    result = fs_write.func("../escaped.txt", "x")

    assert "outside the workspace" in result["error"]
    assert not (workspace.parent / "escaped.txt").exists()


async def test_exec_shell_stops_a_command_at_the_timeout(workspace: Path) -> None:
    from troupe.builtins import Workspace, operator_tools

    exec_shell = _tool(operator_tools(Workspace(workspace), timeout_s=0.3), "exec_shell")

    # The command runs in its own pid namespace, so it is found by its unique argument.
    result = await exec_shell.func("sleep 30.0417 & sleep 30.0417")

    assert "timed out after 0.3 s" in result["error"]
    assert _running_with_argument("30.0417") == []


def _running_with_argument(arg: str) -> list[int]:
    # Killed processes may linger as zombies until reaped; either way they stopped.
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            zombie = "State:\tZ" in (proc / "status").read_text()
        except (OSError, ValueError):
            continue
        if arg.encode() in argv and not zombie:
            found.append(int(proc.name))
    return found


async def test_exec_shell_caps_its_output(workspace: Path) -> None:
    from troupe.builtins import Workspace, operator_tools

    exec_shell = _tool(operator_tools(Workspace(workspace), max_output_chars=100), "exec_shell")

    result = await exec_shell.func("head -c 5000 /dev/zero | tr '\\0' x; echo oops >&2")

    assert result["exit_code"] == 0
    assert result["stdout"] == "x" * 100
    assert result["stderr"] == "oops\n"
    assert result["truncated"] is True


async def test_exec_shell_runs_in_the_workspace(workspace: Path) -> None:
    from troupe.builtins import Workspace, operator_tools

    exec_shell = _tool(operator_tools(Workspace(workspace)), "exec_shell")

    result = await exec_shell.func("pwd")

    assert result["stdout"].strip() == str(workspace.resolve())


# Multi-step requests and requests no one on the team can do.


async def test_planner_joins_a_condition_to_the_step_it_guards(assistant: Assistant) -> None:
    events = await run(
        assistant,
        "plan: check the forecast on weather.com and, if rain is expected, "
        "remember that I need an umbrella",
    )

    assert final_text(events).splitlines()[1:] == [
        "1. check the forecast on weather.com -> navigator",
        "2. if rain is expected, remember that I need an umbrella -> chronicler",
    ]


async def test_a_step_that_only_acts_on_what_came_before_stays_with_its_member(
    assistant: Assistant,
) -> None:
    events = await run(assistant, "plan: open https://example.com and read it")

    assert final_text(events).splitlines()[1:] == [
        "1. open https://example.com -> navigator",
        "2. read it -> navigator",
    ]


async def test_orchestrator_hands_steps_for_different_members_to_the_planner(
    assistant: Assistant,
) -> None:
    events = await run(assistant, "read notes.txt, then remember what it says")

    assert simplify(events)[0] == ("orchestrator", "transfer", "planner")
    # The planner's tools are its team: one call per step, in order.
    assert [s.name for s in all_steps(events) if s.kind == "tool_call"] == [
        "operator",
        "chronicler",
    ]
    answer = final_text(events)
    assert "Result of fs_read" in answer and "remember the milk" in answer
    assert "Result of memory_store" in answer


async def test_a_host_and_port_is_not_read_as_a_plan_goal(assistant: Assistant) -> None:
    events = await run(assistant, "open http://127.0.0.1:8080/about and read it")

    assert simplify(events)[0] == ("orchestrator", "transfer", "navigator")
    assert first_call(events) == ("browser_open", {"url": "http://127.0.0.1:8080/about"})


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("Fetch the release schedule from python.org", "https://python.org"),
        ("open status.example.com/incidents please", "https://status.example.com/incidents"),
        ("read notes.md and setup.py", None),
        ("mail bob@example.com", None),
    ],
)
def test_a_bare_web_address_is_opened_over_https_and_file_names_are_not_addresses(
    text: str, url: str | None
) -> None:
    from troupe.models._offline_args import find_url

    assert find_url(text) == url


async def test_a_request_the_router_only_guesses_at_and_no_keyword_names_gets_a_cannot(
    team_tools: list[Tool],
) -> None:
    routed = Assistant(build_agent_tree(Config(tools=team_tools, model="offline", router="auto")))

    events = await run(routed, "Order a large pepperoni pizza to my office.")

    assert [a for a, kind, _ in simplify(events) if kind == "transfer"] == []
    # The refusal names what it declines and what the team can do instead.
    reply = final_text(events)
    assert "I cannot do that" in reply and "pepperoni pizza" in reply
    assert "command execution" in reply


def _plan_lines(events: list[Event]) -> list[str]:
    return final_text(events).splitlines()[1:]


@pytest.mark.parametrize(
    ("request_text", "owners"),
    [
        # The checksum is what step 1 made; the page says where step 2 works.
        (
            "plan: hash notes.txt, then post the checksum on our release page",
            ["vault", "navigator"],
        ),
        # "and" inside a step splits it when its parts belong to different members.
        (
            "plan: back up the database with scripts/backup.sh, then hash the dump and "
            "record the hash in our knowledge base",
            ["operator", "vault", "librarian"],
        ),
        # A step on "it" whose verb is another member's work goes to that member.
        ("plan: read notes.txt and then encrypt it", ["operator", "vault"]),
        # ...and stays when the member before does that too.
        ("plan: open https://example.com and read it", ["navigator", "navigator"]),
        # Steps in German, Spanish, French and Portuguese, with their own words.
        (
            "plan: Lies die Datei notes.txt und speichere danach die wichtigsten Punkte "
            "in unserer Wissensdatenbank",
            ["operator", "librarian"],
        ),
        (
            "plan: Busca en nuestra base de conocimiento la URL del panel, "
            "luego haz una captura de pantalla",
            ["librarian", "navigator"],
        ),
        ("plan: Déchiffre le fichier notes.enc, puis lis le dossier docs", ["vault", "operator"]),
        (
            "plan: Descriptografa o arquivo notas.enc e depois salva o conteúdo num arquivo",
            ["vault", "operator"],
        ),
    ],
)
async def test_planner_gives_each_step_to_the_member_whose_work_it_is(
    assistant: Assistant, request_text: str, owners: list[str]
) -> None:
    lines = _plan_lines(await run(assistant, request_text))

    assert [line.rsplit(" -> ", 1)[1] for line in lines] == owners


async def test_a_colon_inside_a_step_does_not_start_the_goal(assistant: Assistant) -> None:
    events = await run(assistant, "Hash this text: hello world. Then read notes.txt")

    assert simplify(events)[0] == ("orchestrator", "transfer", "planner")
    handed = [s.name for s in all_steps(events) if s.kind == "tool_call" and s.author == "planner"]
    assert handed == ["vault", "operator"]


async def test_an_address_outweighs_a_search_phrase_in_a_step(assistant: Assistant) -> None:
    events = await run(
        assistant,
        "look up the prices on https://example.com/pricing and save them to our knowledge base",
    )

    handed = [s.name for s in all_steps(events) if s.kind == "tool_call" and s.author == "planner"]
    assert handed == ["navigator", "librarian"]


async def test_a_request_that_opens_by_asking_for_a_plan_goes_to_the_planner(
    assistant: Assistant,
) -> None:
    events = await run(assistant, "plan: open https://example.com/page and take a screenshot")

    assert simplify(events)[0] == ("orchestrator", "transfer", "planner")


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("Lies die Datei notes.txt", "fs_read"),
        ("Déchiffre ce texte: abc", "crypto_decrypt"),
        ("what did I tell you about my car?", "memory_recall"),
    ],
)
async def test_a_specialist_picks_its_tool_from_the_verb_in_other_languages_too(
    team_tools: list[Tool], request_text: str, tool: str
) -> None:
    agents = {"fs_read": "operator", "crypto_decrypt": "vault", "memory_recall": "chronicler"}

    call = _decide(team_tools, agents[tool], request_text).function_call

    assert call is not None and call.name == tool


def _decide(team_tools: list[Tool], agent_name: str, text: str) -> types.Part:
    team = build_agent_tree(Config(tools=team_tools, model="offline"))
    agent = next(a for a in team.sub_agents if a.name == agent_name)
    assert isinstance(agent, LlmAgent) and isinstance(agent.model, OfflineModel)
    declared = [
        d
        for t in agent.tools
        if isinstance(t, BaseTool) and (d := t._get_declaration()) is not None
    ]
    request = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=declared)]),
    )
    return agent.model.decide(request)[0]


def test_a_specialist_keeps_a_step_where_a_peers_word_only_comes_first(
    team_tools: list[Tool],
) -> None:
    # "checksum" (the vault's) comes before "wiki" (the librarian's): equal
    # evidence, so the librarian the planner chose does the step.
    part = _decide(team_tools, "librarian", "add the checksum as a note to the team wiki")

    assert part.text is None  # no [REJECT] to the vault
    assert part.function_call is not None


@pytest.mark.parametrize(
    "request_text",
    [
        "Lock up backup.sql so only someone with the key can read it.",
        "Is anything listening on port 8080 right now?",
    ],
)
async def test_asked_for_a_json_choice_the_offline_orchestrator_chooses_as_it_would_transfer(
    team_tools: list[Tool], request_text: str
) -> None:
    def assistant(schema: bool) -> Assistant:
        config = Config(
            tools=team_tools, model="offline", router="auto", router_agent_schema=schema
        )
        return Assistant(build_agent_tree(config))

    plain = await run(assistant(False), request_text)
    chosen = await run(assistant(True), request_text)

    assert simplify(chosen)[0] == simplify(plain)[0]
    assert not any('"agent"' in step.text for step in all_steps(chosen) if step.kind == "text")


async def test_where_the_router_saw_one_step_the_stand_in_does_not_plan(
    team_tools: list[Tool],
) -> None:
    routed = Assistant(build_agent_tree(Config(tools=team_tools, model="offline", router="auto")))

    text = "On https://example.com, type 'citra hops' into the search box and tell me what comes up"
    events = await run(routed, text)

    transfers = [name for _, kind, name in simplify(events) if kind == "transfer"]
    assert transfers[:1] == ["navigator"]


async def test_a_secret_whose_name_is_not_written_out_is_not_stored_under_its_value(
    assistant: Assistant,
) -> None:
    events = await run(assistant, "Store the password 'hunter2' as a secret")

    assert not [s for s in all_steps(events) if s.kind == "tool_call"]
    reply = final_text(events)
    assert "`name`" in reply and "named DB_PASS" in reply
    assert "{{secret:hunter2}}" not in reply


def test_a_plan_step_that_names_only_a_members_capability_goes_to_that_member() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute("files", ("file", "folder", "list"), text="Reads and lists files."),
        TeamRoute(
            "diary",
            ("remember", "memory"),
            text="Keeps what the user tells it.",
            abilities=("event observation", "memory storage"),
        ),
    ]

    steps = _plan("List the files in drafts/, then log an event saying how many there are.", team)

    assert [owner for _, owner in steps] == ["files", "diary"]


def test_a_plan_step_in_other_words_goes_to_the_member_that_takes_its_identifier() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute(
            "appointments",
            ("appointment", "reschedule"),
            text="Books and moves visits. A pet number or an appointment number (AP-#####).",
        ),
        TeamRoute(
            "boarding",
            ("kennel", "boarding"),
            text="Books kennels. Dates, or a booking number (BD-#####, e.g. BD-40562).",
        ),
    ]

    steps = _plan(
        "Bitte stornieren Sie die Pensionsbuchung BD-51873 und verschieben Sie danach "
        "den Termin AP-38214 auf den 2026-04-24 um 09:00.",
        team,
    )

    assert [owner for _, owner in steps] == ["boarding", "appointments"]


def test_a_step_of_hyphenated_words_and_an_identifier_is_a_step_not_a_detail() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute("bookings", ("room", "salle", "book"), text="Books meeting rooms."),
        TeamRoute("events", ("event", "événement"), text="Signs members up for events."),
    ]

    steps = _plan(
        "Réservez la salle Leie le 2026-04-02 de 14:00 à 16:00 pour KC-2209, "
        "puis inscrivez-moi à l'événement EV-333.",
        team,
    )

    assert [owner for _, owner in steps] == ["bookings", "events"]


def _orchestrator_target(team_tools: list[Tool], text: str, hint: str) -> str | None:
    """Where the orchestrator's stand-in sends ``text`` given the router's ``hint``."""
    root = build_agent_tree(Config(tools=team_tools, model="offline"))
    assert isinstance(root, LlmAgent) and isinstance(root.model, OfflineModel)
    transfer = types.FunctionDeclaration(
        name=TRANSFER_TOOL,
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={TRANSFER_ARG: types.Schema(type=types.Type.STRING)},
        ),
    )
    request = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(
            system_instruction=f"{root.instruction}\n\n{hint}",
            tools=[types.Tool(function_declarations=[transfer])],
        ),
    )
    (part,) = root.model.decide(request)
    return str((part.function_call.args or {})[TRANSFER_ARG]) if part.function_call else None


TWO_MEMBERS = "hash notes.txt and then add a note to the knowledge base saying it is done"


def test_where_the_router_saw_one_step_the_stand_in_follows_its_best_candidate(
    team_tools: list[Tool],
) -> None:
    hint = router_hint([("vault", 0.5), ("librarian", 0.4)])

    assert _orchestrator_target(team_tools, TWO_MEMBERS, hint) == "vault"


def test_where_the_router_saw_parts_for_different_agents_the_stand_in_plans_its_steps(
    team_tools: list[Tool],
) -> None:
    hint = router_hint([("vault", 0.5), ("librarian", 0.4)], steps=True)

    assert _orchestrator_target(team_tools, TWO_MEMBERS, hint) == "planner"


def test_parts_that_lean_elsewhere_but_are_one_members_steps_stay_with_it(
    team_tools: list[Tool],
) -> None:
    hint = router_hint([("operator", 0.5), ("vault", 0.3)], steps=True)
    text = "read notes.txt and then write 'done' to out.txt"

    assert _orchestrator_target(team_tools, text, hint) == "operator"


PAY_BY_CARD = "Pay invoice INV-472030 by card"


def _after_a_refusal(
    calls: int,
    text: str = PAY_BY_CARD,
    args: dict[str, str] | None = None,
    error: str = f"method '{PAY_BY_CARD}' is not one of: bancontact, bank transfer, card.",
    params: tuple[str, ...] = ("invoice_id", "method"),
) -> list[types.Part]:
    """The stand-in's answer to ``text`` after ``calls`` calls of ``pay`` with
    ``args`` (by default the request as its method) that the tool refused."""
    declared = types.FunctionDeclaration(
        name="pay",
        description="Pay an invoice.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={name: types.Schema(type=types.Type.STRING) for name in params},
            required=list(params),
        ),
    )
    args = args or {"invoice_id": "INV-472030", "method": text}
    contents = [types.Content(role="user", parts=[types.Part(text=text)])]
    for i in range(calls):
        call = types.FunctionCall(id=f"c{i}", name="pay", args=args)
        answer = types.FunctionResponse(id=f"c{i}", name="pay", response={"error": error})
        contents += [
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="user", parts=[types.Part(function_response=answer)]),
        ]
    request = LlmRequest(
        contents=contents,
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declared])]),
    )
    return OfflineModel().decide(request)


def test_a_tool_that_refuses_a_guessed_value_is_called_again_with_the_one_it_lists() -> None:
    (part,) = _after_a_refusal(calls=1)

    assert part.function_call is not None
    assert part.function_call.args == {"invoice_id": "INV-472030", "method": "card"}


def test_a_refused_value_is_replaced_by_one_in_the_shape_the_error_shows() -> None:
    text = "Pay the invoice INV-472030 of account AC-55120 by card"
    args = {"invoice_id": "account", "method": "card"}
    error = "invoice_id 'account' is not valid: it looks like INV- and 6 digits, e.g. INV-100234."

    (part,) = _after_a_refusal(1, text, args, error)

    assert part.function_call is not None
    assert part.function_call.args == {"invoice_id": "INV-472030", "method": "card"}


def test_arguments_that_took_the_same_words_take_the_listed_values_in_turn() -> None:
    text = "Pay the courier from Brussels to Ghent"
    args = {"from_branch": text, "to_branch": text}
    error = f"to_branch '{text}' is not one of our branches: use Antwerp, Ghent or Brussels."

    (part,) = _after_a_refusal(1, text, args, error, params=("from_branch", "to_branch"))

    assert part.function_call is not None
    assert part.function_call.args == {"from_branch": "Brussels", "to_branch": "Ghent"}


def test_a_refused_call_is_tried_again_only_once() -> None:
    (part,) = _after_a_refusal(calls=2)

    assert part.function_call is None
    assert "pay failed" in (part.text or "")


def test_a_plan_step_that_stopped_for_a_second_approval_is_called_again() -> None:
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute(name="billing", keywords=("pay", "invoice")),
        TeamRoute(name="contracts", keywords=("renew", "contract")),
        TeamRoute(name="planner", keywords=("plan",), plans=True),
    ]
    planner = OfflineModel().serving("planner", team)
    ask = {"request": "Pay invoice INV-472030 by card"}
    stopped = {"error": "this step is not finished", "needs_approval": {"tool": "pay"}}
    steps = [
        types.FunctionDeclaration(name=name, description=f"{name} step")
        for name in ("billing", "contracts")
    ]
    text = f"{ask['request']}, then renew contract MC-55611"
    call = types.FunctionCall(id="s1", name="billing", args=ask)
    answer = types.FunctionResponse(id="s1", name="billing", response=stopped)
    request = LlmRequest(
        contents=[
            types.Content(role="user", parts=[types.Part(text=text)]),
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="user", parts=[types.Part(function_response=answer)]),
        ],
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=steps)]),
    )

    (part,) = planner.decide(request)

    assert part.function_call is not None
    assert (part.function_call.name, part.function_call.args) == ("billing", ask)


def _order_tool(name: str, doc: str) -> Tool:
    def order_tool(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id}

    return Tool(name=name, description=doc, func=order_tool)


def test_between_two_tools_that_fit_as_well_the_specialist_reads_rather_than_changes() -> None:
    tools = [
        _order_tool("orders_change_order", "Change an order's items."),
        _order_tool("orders_lookup_order", "Look up an order's status and items."),
    ]
    topology = Topology(
        name="shop",
        agents=(
            AgentSpec(
                name="orders",
                description="Order lookups and changes.",
                capabilities={"orders_": "orders"},
                prefixes=("orders_",),
                keywords=("order",),
            ),
        ),
    )
    team = build_agent_tree(Config(tools=tools, topology=topology, model="offline"))
    agent = next(a for a in team.sub_agents if a.name == "orders")
    assert isinstance(agent, LlmAgent) and isinstance(agent.model, OfflineModel)
    declared = [
        d
        for t in agent.tools
        if isinstance(t, BaseTool) and (d := t._get_declaration()) is not None
    ]
    text = "Order 44120 was meant to arrive yesterday. Can you check on it?"
    request = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=declared)]),
    )

    call = agent.model.decide(request)[0].function_call

    assert call is not None and call.name == "orders_lookup_order"


def test_a_word_inside_a_file_path_does_not_name_the_member_who_works_on_it() -> None:
    from troupe.models.offline import best_route
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute(name="navigator", keywords=("website", "page")),
        TeamRoute(name="operator", keywords=("file", "folder")),
    ]

    route = best_route("In website/prices.csv change the price of the jam", team)

    assert route is not None
    assert route.name == "operator"
