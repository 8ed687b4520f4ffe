"""Model names: ADK's LLMRegistry decides which bare names exist, not a table of troupe's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_misspelt_model_name_gets_a_did_you_mean(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="troupe.models"):
        assert resolve_model("gemini-2.5-flsh") == "gemini-2.5-flsh"

    assert "'gemini-2.5-flsh'" in caplog.text and "did you mean 'gemini-2.5-flash'" in caplog.text


@pytest.mark.parametrize("name", ["gemini-2.5-flash", "ollama_chat/llama3.2", "gemini-9-ultra"])
def test_a_known_or_unlike_name_gets_no_suggestion(
    caplog: pytest.LogCaptureFixture, name: str
) -> None:
    with caplog.at_level("WARNING", logger="troupe.models"):
        resolve_model(name)

    assert "did you mean" not in caplog.text


def test_a_name_served_at_an_api_base_is_not_checked(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="troupe.models"):
        resolve_model("openai/gpt-4o-mnii", api_base="http://127.0.0.1:9/v1")

    assert "did you mean" not in caplog.text


def test_a_misspelt_gemini_name_at_the_cli_says_what_was_meant_and_which_key(
    tmp_path: Path,
) -> None:
    hidden = {"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "TROUPE_MODEL"}
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    result = subprocess.run(
        [sys.executable, "-m", "troupe", "chat", "--model", "gemini-2.5-flsh", "hi"],
        cwd=tmp_path,
        env={**env, "COLUMNS": "200", "TERM": "dumb"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    out = result.stdout + result.stderr
    # Stopped before any turn, in one line: the missing key, and the name meant.
    assert result.returncode == 2, out
    assert "GOOGLE_API_KEY or GEMINI_API_KEY is not set" in out
    assert "id you mean 'gemini-2.5-flash'" in out
    assert len(out.strip().splitlines()) == 1, out
    assert "Traceback" not in out


def test_a_provider_without_a_model_is_refused_with_the_fix() -> None:
    with pytest.raises(troupe.ConfigError, match="names a provider but no model"):
        resolve_model("openai/")


def test_the_offline_model_does_not_read_litellms_model_list() -> None:
    from troupe.models.known import known_models

    known_models.cache_clear()
    resolve_model("offline")

    assert known_models.cache_info().currsize == 0
