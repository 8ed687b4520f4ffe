"""Topologies as data: the built-in ones and user YAML files."""

from __future__ import annotations

from pathlib import Path

import pytest

import troupe

GOOD_TOPOLOGY = """\
name: studio
agents:
  - name: painter
    description: Paints pictures.
    instruction: Report what was painted.
    prefixes: [paint_, canvas_]
    keywords: [paint, picture]
    accepts: A scene to paint.
    returns: The finished picture.
    cannot_do: [write music]
  - name: composer
    description: Writes music.
    prefixes: [music_]
  - name: critic
    description: Reviews work without tools.
    always_include: true
match_order: [composer, painter]
"""


def tool(name: str) -> troupe.Tool:
    return troupe.Tool(name=name, description=f"Tool {name}.", func=lambda: None)


def write(tmp_path: Path, text: str, name: str = "topology.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    with pytest.raises(troupe.ConfigError) as caught:
        troupe.load_topology(path)
    return str(caught.value)


def test_default_topology_has_the_six_agents_in_order() -> None:
    assert troupe.DEFAULT_TOPOLOGY.name == "default"
    assert troupe.DEFAULT_TOPOLOGY.agent_names() == [
        "operator",
        "navigator",
        "vault",
        "librarian",
        "planner",
        "chronicler",
    ]


def test_classic_topology_has_the_four_agents_with_memory_manager_alias() -> None:
    assert troupe.CLASSIC_TOPOLOGY.name == "classic"
    assert troupe.CLASSIC_TOPOLOGY.agent_names() == [
        "executor",
        "researcher",
        "planner",
        "memory_manager",
    ]
    assert troupe.CLASSIC_TOPOLOGY.aliases["memory-manager"] == "memory_manager"


@pytest.mark.parametrize(
    ("agent", "prefixes"),
    [
        ("operator", ("exec", "fs_", "skill_")),
        ("navigator", ("browser_",)),
        ("vault", ("crypto_", "secrets_", "payment_")),
        (
            "librarian",
            (
                "search_",
                "rag_",
                "graph_",
                "save_knowledge",
                "save_learning",
                "create_skill",
                "list_skills",
            ),
        ),
        ("planner", ()),
        ("chronicler", ("memory_", "observe_", "reflect_")),
    ],
)
def test_default_topology_prefixes_are_the_specified_ones(
    agent: str, prefixes: tuple[str, ...]
) -> None:
    assert troupe.DEFAULT_TOPOLOGY.spec(agent).prefixes == prefixes


def test_only_the_planner_is_always_included_in_the_built_in_topologies() -> None:
    for topology in (troupe.DEFAULT_TOPOLOGY, troupe.CLASSIC_TOPOLOGY):
        always = [a.name for a in topology.agents if a.always_include]
        assert always == ["planner"]


def test_every_built_in_agent_has_a_complete_routing_entry() -> None:
    for topology in (troupe.DEFAULT_TOPOLOGY, troupe.CLASSIC_TOPOLOGY):
        for agent in topology.agents:
            assert agent.description, agent.name
            assert agent.instruction, agent.name
            assert agent.keywords, agent.name
            assert agent.accepts, agent.name
            assert agent.returns, agent.name
            assert agent.cannot_do, agent.name


def test_yaml_topology_loads_every_agent_spec_field(tmp_path: Path) -> None:
    topology = troupe.load_topology(write(tmp_path, GOOD_TOPOLOGY))

    assert topology.name == "studio"
    assert topology.agent_names() == ["painter", "composer", "critic"]
    assert topology.match_order == ("composer", "painter")
    assert topology.agents[0] == troupe.AgentSpec(
        name="painter",
        description="Paints pictures.",
        instruction="Report what was painted.",
        prefixes=("paint_", "canvas_"),
        keywords=("paint", "picture"),
        accepts="A scene to paint.",
        returns="The finished picture.",
        cannot_do=("write music",),
    )
    assert topology.agents[2].always_include is True


def test_yaml_topology_without_a_name_is_named_after_its_file(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: solo\n    prefixes: [solo_]\n", "mine.yaml")

    assert troupe.load_topology(path).name == "mine"


def test_yaml_topology_path_builds_the_agent_tree(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_TOPOLOGY)
    tools = [tool("paint_sky"), tool("music_hum"), tool("weather_now")]

    root = troupe.build_agent_tree(troupe.Config(tools=tools, model="offline", topology=path))

    # troupe's planner joins a team that has none, for requests of several steps.
    assert [a.name for a in root.sub_agents] == ["painter", "composer", "critic", "planner"]
    assert isinstance(root.instruction, str)
    assert "### painter" in root.instruction


def test_unknown_agent_field_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: painter\n    prefixs: [paint_]\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[0].prefixs" in message
    assert "prefixes" in message  # the fix: the allowed field names


def test_unknown_top_level_field_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "agent:\n  - name: painter\n")

    message = load_error(path)

    assert str(path) in message
    assert "'agent'" in message


def test_duplicate_agent_name_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: painter\n  - name: painter\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[1].name" in message
    assert "'painter'" in message


@pytest.mark.parametrize("empty", ['""', "'   '"])
def test_empty_agent_name_names_the_file_and_the_field(tmp_path: Path, empty: str) -> None:
    path = write(tmp_path, f"agents:\n  - name: painter\n  - name: {empty}\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[1].name" in message
    assert "empty" in message


def test_missing_agent_name_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - description: nameless\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[0].name" in message


def test_agent_named_orchestrator_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: orchestrator\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[0].name" in message
    assert "orchestrator" in message


@pytest.mark.parametrize(
    "text",
    ["agents: []\n", "name: empty\n"],
    ids=["empty-list", "missing-key"],
)
def test_topology_without_agents_names_the_file_and_the_field(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)

    message = load_error(path)

    assert str(path) in message
    assert "'agents'" in message


def test_agent_name_that_is_not_an_identifier_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: memory-manager\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents[0].name" in message
    assert "'memory-manager'" in message


def test_match_order_naming_an_unknown_agent_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - name: painter\nmatch_order: [painter, poet]\n")

    message = load_error(path)

    assert str(path) in message
    assert "match_order[1]" in message
    assert "'poet'" in message


def test_file_that_is_not_a_mapping_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "- name: painter\n")

    message = load_error(path)

    assert str(path) in message
    assert "agents" in message


def test_invalid_yaml_is_rejected_with_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "agents: [\n")

    assert str(path) in load_error(path)


def test_missing_file_is_rejected_with_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"

    assert str(path) in load_error(path)


def test_unknown_topology_name_lists_the_built_in_ones() -> None:
    with pytest.raises(troupe.ConfigError) as caught:
        troupe.build_agent_tree(troupe.Config(model="offline", topology="sextet"))

    message = str(caught.value)
    assert "'sextet'" in message
    assert "default" in message
    assert "classic" in message


def test_topology_object_with_orchestrator_agent_is_rejected() -> None:
    topology = troupe.Topology(
        name="bad", agents=(troupe.AgentSpec(name="orchestrator", description="x"),)
    )

    with pytest.raises(troupe.ConfigError, match="orchestrator"):
        troupe.build_agent_tree(troupe.Config(model="offline", topology=topology))


def test_alias_naming_a_missing_agent_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "team.yaml"
    path.write_text("agents:\n  - name: worker\n    prefixes: [fs_]\naliases:\n  boss: manager\n")
    with pytest.raises(troupe.ConfigError) as info:
        troupe.load_topology(path)
    assert "aliases.boss" in str(info.value)
    assert str(path) in str(info.value)


def test_builtin_topologies_are_shipped_as_data_files() -> None:
    from importlib import resources

    names = {p.name for p in (resources.files("troupe") / "topologies").iterdir()}
    assert {"default.yaml", "classic.yaml"} <= names
    assert troupe.CLASSIC_TOPOLOGY.aliases["memory-manager"] == "memory_manager"


def _tree_of_the_studio(tmp_path: Path) -> str:
    """``troupe tree``'s output for GOOD_TOPOLOGY with the built-in tools."""
    from typer.testing import CliRunner

    from troupe.cli.app import app

    topology = write(tmp_path, GOOD_TOPOLOGY)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = CliRunner().invoke(
        app, ["tree", "--topology", str(topology), "--workspace", str(workspace)]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_troupe_tree_says_which_agent_was_left_out_and_why(tmp_path: Path) -> None:
    output = _tree_of_the_studio(tmp_path)

    lines = output.splitlines()
    painter = [line for line in lines if "agent 'painter' left out" in line]
    assert painter == ["agent 'painter' left out: no tool's name starts with paint_ or canvas_"]
    assert any("agent 'composer' left out" in line for line in lines)
    assert not any("'critic' left out" in line for line in lines)


def test_troupe_tree_counts_built_in_tools_a_users_team_leaves_out_instead_of_listing_them(
    tmp_path: Path,
) -> None:
    text = " ".join(_tree_of_the_studio(tmp_path).split())

    assert "unmatched" not in text and "fs_ or browser_" not in text
    assert "of troupe's built-in tools (fs_read, fs_list, fs_write, …) are on no agent" in text
    assert "builtin_tools: false" in text


def test_a_users_own_unmatched_tools_are_listed_with_the_teams_prefixes_as_the_fix() -> None:
    from rich.console import Console

    from troupe.builtins import builtin_tools
    from troupe.cli.render import agent_tree
    from troupe.tree import build_agent_tree

    root = build_agent_tree(troupe.Config(tools=[tool("fs_list")]))
    builtin = next(t for t in builtin_tools() if t.name == "fs_read")

    console = Console(width=200, record=True)
    console.print(
        agent_tree(
            root,
            unmatched=[tool("stock_quote"), builtin],
            model_label="m",
            prefixes=("paint_", "canvas_"),
        )
    )
    text = console.export_text()

    assert "such as paint_ or canvas_" in text
    unmatched = text.split("unmatched", 1)[1]
    assert "stock_quote" in unmatched
    assert "stock_quote" not in text.split("unmatched", 1)[0]
    assert "1 of troupe's built-in tools (fs_read) are on no agent" in text


EXAMPLES_TOPOLOGY = """\
agents:
  - name: painter
    description: Paints pictures.
    prefixes: [paint_]
    examples: ["paint me a sunset over the harbour", "draw my cat as a knight"]
"""


def test_a_topologys_examples_reach_the_router_but_no_instruction(tmp_path: Path) -> None:
    import asyncio

    from troupe.tree import TroupeAgent

    path = write(tmp_path, EXAMPLES_TOPOLOGY)
    spec = troupe.load_topology(path).agents[0]
    assert spec.examples == ("paint me a sunset over the harbour", "draw my cat as a knight")

    root = troupe.build_agent_tree(
        troupe.Config(tools=[tool("paint_sky")], model="offline", topology=path, router="auto")
    )

    instructions = [str(a.instruction) for a in (root, *root.sub_agents)]  # type: ignore[attr-defined]
    assert not any("sunset" in text for text in instructions)
    assert isinstance(root, TroupeAgent) and root.troupe_router is not None
    router = asyncio.run(root.troupe_router.router())
    (painter,) = [p for p in router.profiles if p.name == "painter"]
    assert "draw my cat as a knight" in painter.phrases


def test_every_built_in_agent_has_examples_in_each_measured_language() -> None:
    import re

    marks = {
        "de": r"[äöüß]|\b(?:der|die|das|mir|dir|ich)\b",
        "es": r"[ñ¿]|\b(?:el|la|los|que|de)\b",
        "fr": r"[àèêç]|\b(?:le|les|des|je|et|ce|sur)\b",
        "pt": r"[ãõ]|\b(?:o|os|do|da|na)\b",
    }
    for agent in troupe.DEFAULT_TOPOLOGY.agents:
        assert len(agent.examples) >= 8, agent.name
        foreign = [e for e in agent.examples if not e.isascii() or e[0].isupper()]
        for language, mark in marks.items():
            assert any(re.search(mark, e, re.I) for e in foreign), (agent.name, language)
