"""``troupe eval --web stand-in``: the navigator's pages are made from their
addresses, so a request set's web steps run in real Chromium on a machine with
no network, and the report says the web was a stand-in."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from typer.testing import CliRunner

from fakes.needs import require_browser
from troupe import Workspace
from troupe.builtins.browser_session import BrowserSession, shared_browser
from troupe.builtins.navigator import navigator_tools
from troupe.builtins.stand_in_web import STAND_IN_NOTE, stand_in_page
from troupe.cli.app import app

on_module_loop = pytest.mark.asyncio(loop_scope="module")
NOWHERE = "https://records.example.invalid/parish/births-1854"
"""A host no resolver knows (RFC 2606): the live web cannot serve it."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stand_in() -> AsyncIterator[BrowserSession]:
    require_browser()
    session = BrowserSession()
    session.stand_in = stand_in_page
    try:
        yield session
    finally:
        await session.close()


@on_module_loop
async def test_a_stand_in_page_answers_an_address_no_resolver_knows(
    stand_in: BrowserSession, tmp_path: Path
) -> None:
    tools = {t.name: t.func for t in navigator_tools(Workspace(tmp_path), browser=stand_in)}

    result = await tools["browser_navigate"](NOWHERE)

    assert "error" not in result, result
    assert result["status"] == 200
    assert result["title"] == "records.example.invalid parish births 1854"
    assert STAND_IN_NOTE in result["text"]


@on_module_loop
async def test_the_stand_in_still_refuses_a_private_address_and_another_scheme(
    stand_in: BrowserSession, tmp_path: Path
) -> None:
    tools = {t.name: t.func for t in navigator_tools(Workspace(tmp_path), browser=stand_in)}

    private = await tools["browser_navigate"]("http://127.0.0.1:9/")
    scheme = await tools["browser_navigate"]("ftp://records.example.invalid/")

    assert "error" in private and "127.0.0.1" in private["error"]
    assert "error" in scheme


def test_eval_with_a_stand_in_web_scores_a_web_step_and_says_so(tmp_path: Path) -> None:
    require_browser()
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text(
        json.dumps(
            {
                "text": f"Open {NOWHERE} and then remember that I checked the parish records.",
                "expected": "planner",
                "steps": ["navigator", "chronicler"],
                "kind": "compound",
                "lang": "en",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.json"

    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--dataset",
            str(dataset),
            "--web",
            "stand-in",
            "--out-json",
            str(out),
            "--out-html",
            str(tmp_path / "report.html"),
        ],
    )

    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["model"].endswith("web stand-in")
    [case] = report["results"]
    assert ["navigator", "browser_navigate", True] in case["runs"]
    assert case["correct"] is True
    assert shared_browser().stand_in is None
    assert not shared_browser().is_open
