"""Roles are data: a topology YAML declares its agents' prefixes, phrases and synonyms."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.agents import LlmAgent

import troupe
from fakes.agents import OPERATOR_TOOLS, instruction_of
from troupe.routing.repair import AgentNameResolver

WEATHER_TOPOLOGY = """\
name: forecasting
agents:
- name: meteorologist
  description: Answers questions about the weather anywhere in the world.
  capabilities:
    weather_: weather forecasts
    radar_: rain radar images
  synonyms: [forecaster, weatherman]
  keywords: [weather, forecast, rain, sunny, temperature]
- name: operator
  description: Runs commands and reads files.
  capabilities: {exec: command execution, fs_: file operations}
  keywords: [run, command, file, files]
"""


def weather_now(city: str) -> dict[str, str]:
    """The current weather for a city."""
    return {"city": city, "sky": "light rain"}


def radar_image(region: str) -> dict[str, str]:
    """A rain radar image of a region."""
    return {"region": region, "image": "radar.png"}


WEATHER_TOOLS = [troupe.Tool.from_function(f) for f in (weather_now, radar_image)]


@pytest.fixture
def topology_file(tmp_path: Path) -> Path:
    path = tmp_path / "forecasting.yaml"
    path.write_text(WEATHER_TOPOLOGY)
    return path


def _tree(topology: Path) -> LlmAgent:
    config = troupe.Config(
        tools=[*WEATHER_TOOLS, *OPERATOR_TOOLS], model="offline", topology=topology
    )
    return troupe.build_agent_tree(config)


def test_the_orchestrator_describes_a_custom_agent_with_its_own_phrases(
    topology_file: Path,
) -> None:
    instruction = instruction_of(_tree(topology_file))

    assert "Capabilities: weather forecasts, rain radar images." in instruction
    assert "general actions" not in instruction
    assert "weather_now" not in instruction


async def test_a_weather_request_reaches_the_custom_agent_through_the_runner(
    topology_file: Path,
) -> None:
    assistant = troupe.Assistant(_tree(topology_file))
    transfers: list[str] = []
    calls: list[str] = []

    async for event in assistant.run("s1", "what is the weather forecast for Oslo?"):
        for call in event.get_function_calls():
            if call.name == "transfer_to_agent":
                transfers.append(str((call.args or {}).get("agent_name")))
            else:
                calls.append(str(call.name))

    assert transfers == ["meteorologist"]
    assert calls == ["weather_now"]


def test_partitioning_maps_every_agent_of_any_topology_to_its_tools(
    topology_file: Path,
) -> None:
    split = troupe.partition_tools([*WEATHER_TOOLS, *OPERATOR_TOOLS], topology_file)

    assert dict(split.items()).keys() == {"meteorologist", "operator"}
    assert [t.name for t in split["meteorologist"]] == ["weather_now", "radar_image"]
    assert split.unmatched == []


def test_a_custom_synonym_repairs_a_transfer_to_the_agent_it_names(topology_file: Path) -> None:
    topology = troupe.load_topology(topology_file)
    resolver = AgentNameResolver.for_topology(topology, ["meteorologist", "operator"])

    assert resolver.resolve("forecaster_agent") == "meteorologist"
    assert resolver.resolve("Weatherman") == "meteorologist"


def test_the_default_topology_declares_its_repair_words_in_its_yaml() -> None:
    resolver = AgentNameResolver.for_topology(troupe.DEFAULT_TOPOLOGY, ["operator", "navigator"])

    assert resolver.resolve("executor") == "operator"
    assert resolver.resolve("web_browser_agent") == "navigator"


def test_a_phrase_for_a_prefix_the_agent_does_not_own_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "agents:\n- name: meteorologist\n  description: Weather.\n"
        "  prefixes: [weather_]\n  capabilities: {radar_: rain radar images}\n"
    )

    with pytest.raises(troupe.ConfigError, match="'radar_', which is not one of"):
        troupe.load_topology(path)


def test_the_capability_map_is_read_from_the_default_topology_and_read_only() -> None:
    assert troupe.DEFAULT_TOPOLOGY.capabilities() == troupe.CAPABILITY_MAP
    with pytest.raises(TypeError):
        troupe.CAPABILITY_MAP["weather_"] = "weather"  # type: ignore[index]
