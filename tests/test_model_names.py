"""Model names: ADK's LLMRegistry decides which bare names exist, not a table of troupe's."""

from __future__ import annotations

import pytest

import troupe
from troupe.models.resolve import resolve_model


@pytest.mark.parametrize("name", ["gpt-4o", "gemma-3-27b-it", "gemini-2.5-flash", "o3-mini"])
def test_a_name_adks_registry_knows_is_accepted_as_is(name: str) -> None:
    assert resolve_model(name) == name


def test_a_tree_builds_on_a_gemma_model_without_calling_it() -> None:
    root = troupe.build_agent_tree(troupe.Config(model="gemma-3-27b-it"))

    assert root.name == "orchestrator"


def test_a_name_nobody_knows_is_refused_with_the_fix() -> None:
    with pytest.raises(troupe.ConfigError) as caught:
        resolve_model("llama3")

    message = str(caught.value)
    assert "'llama3'" in message and "provider/model" in message and "ollama_chat/" in message
