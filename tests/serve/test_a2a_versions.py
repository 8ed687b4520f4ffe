"""A2A: clients of a2a-sdk 0.3 and 1.x both read troupe's card and get answers.

The 1.x client runs from the dev environment; the 0.3 client from a virtual
environment the tests create with pip from PyPI (``.cache/test-packages``).
Each talks to a real ``troupe serve --a2a`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from troupe_servers import serving_operator

from fakes.package_cache import python_venv

pytestmark = pytest.mark.serve

CLIENTS = Path(__file__).parent / "a2a_clients"
A2A_03 = "a2a-sdk>=0.3,<0.4"
TOKEN = "versions-token"


@pytest.fixture(scope="session")
def python_with_a2a_03() -> Path:
    """A Python that has a2a-sdk 0.3 (and not troupe's 1.x)."""
    return python_venv("a2a-sdk-0.3", A2A_03)


@pytest.fixture(scope="module")
def served_operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The card URL of a troupe serving its operator over A2A, behind a token.

    One server for the module: every test only reads from it.
    """
    root = tmp_path_factory.mktemp("a2a-versions")
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "versions-marker.txt").write_text("x\n", encoding="utf-8")
    with serving_operator(root, workspace, TOKEN) as server:
        yield f"{server.url}/a2a/.well-known/agent-card.json"


def _ask(python: Path, script: str, card_url: str, message: str) -> dict[str, Any]:
    result = subprocess.run(
        [str(python), str(CLIENTS / script), card_url, message, TOKEN],
        capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_the_card_carries_the_fields_a2a_03_clients_require(served_operator: str) -> None:
    card = httpx.get(served_operator).json()
    rpc_url = served_operator.replace(".well-known/agent-card.json", "")
    assert card["url"] == rpc_url
    assert card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"] == "0.3"
    versions = [i["protocolVersion"] for i in card["supportedInterfaces"]]
    assert versions == ["1.0", "0.3"]


def test_an_a2a_sdk_03_client_gets_an_answer_from_troupe(
    served_operator: str, python_with_a2a_03: Path
) -> None:
    reply = _ask(python_with_a2a_03, "client_v03.py", served_operator, "list the files here")
    assert reply["card"] == "operator"
    assert reply["protocol_version"] == "0.3"
    assert any("versions-marker.txt" in text for text in reply["texts"]), reply


def test_an_a2a_sdk_1x_client_gets_an_answer_from_troupe(served_operator: str) -> None:
    reply = _ask(Path(sys.executable), "client_v1.py", served_operator, "list the files here")
    assert reply["card"] == "operator"
    assert any("versions-marker.txt" in text for text in reply["texts"]), reply
