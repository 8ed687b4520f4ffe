"""Replicas on one PostgreSQL keep knowledge, memory, the vault and traces in it.

Each replica here is what ``troupe serve`` builds from its settings: the
built-in tools and a trace store from a :class:`troupe.Settings` with its own
data directory and the shared PostgreSQL session store. A tool call is made
through ADK's runner with a scripted model, as a model would make it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from troupe_servers import TEST_VAULT_KEY
from typer.testing import CliRunner

from fakes.tool_runs import ToolRun, call_tool, everything_shown
from troupe.cli.app import app
from troupe.errors import ConfigError
from troupe.runtime.approvals import ApprovalRequest
from troupe.settings import Settings, load_settings
from troupe.stores.postgres import dispose_engines

pytestmark = pytest.mark.skipif(
    not os.environ.get("TROUPE_TEST_POSTGRES_URL"), reason="needs .ci/postgres.sh's server"
)


@pytest.fixture(autouse=True)
def _close_pools() -> Iterator[None]:
    yield
    dispose_engines()


class Replica:
    """The stores one replica uses: its own data directory, the shared database."""

    def __init__(self, tmp_path: Path, name: str) -> None:
        workspace = tmp_path / f"ws-{name}"
        workspace.mkdir()
        self.settings: Settings = load_settings(
            workspace=workspace,
            data_dir=tmp_path / f"data-{name}",
            session_store=os.environ["TROUPE_TEST_POSTGRES_URL"],
        )
        self.tools = list(self.settings.config.tools)
        self.traces = self.settings.trace_store()
        self.approved: list[str] = []

    def _approve(self, request: ApprovalRequest) -> bool:
        self.approved.append(request.tool)
        return True

    async def call(self, tool: str, args: dict[str, Any], *, user: str, session: str) -> ToolRun:
        return await call_tool(
            self.tools,
            tool,
            args,
            user_id=user,
            session_id=session,
            trace_store=self.traces,
            policy="ask",
            ask=self._approve,
        )


@pytest.fixture
def replicas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Replica, Replica]:
    monkeypatch.setenv("TROUPE_SECRET_KEY", TEST_VAULT_KEY)
    return Replica(tmp_path, "a"), Replica(tmp_path, "b")


async def test_a_memory_stored_through_one_replica_is_recalled_through_another(
    replicas: tuple[Replica, Replica],
) -> None:
    first, second = replicas
    user, word = f"user-{uuid.uuid4().hex[:8]}", f"zeppelin{uuid.uuid4().hex[:6]}"
    stored = await first.call(
        "memory_store", {"text": f"my favourite airship is the {word}"}, user=user, session="m1"
    )
    assert stored.response["memories"] == 1
    recalled = await second.call("memory_recall", {"query": word}, user=user, session="m2")
    assert [m["text"] for m in recalled.response["memories"]] == [
        f"my favourite airship is the {word}"
    ]
    # Nothing of it is in either replica's data directory.
    assert not (first.settings.data_dir / "memory.db").exists()
    assert not (second.settings.data_dir / "memory.db").exists()


async def test_knowledge_saved_through_one_replica_is_found_through_another(
    replicas: tuple[Replica, Replica],
) -> None:
    first, second = replicas
    word = f"quokka{uuid.uuid4().hex[:6]}"
    text = f"The {word} protocol retries writes with exponential backoff"
    await first.call("save_knowledge", {"text": text, "tags": ["net"]}, user="u", session="k1")
    found = await second.call(
        "search_knowledge", {"query": f"how does {word} retry writes"}, user="u", session="k2"
    )
    results = found.response["results"]
    assert [r["text"] for r in results][:1] == [text]
    assert results[0]["score"] > 0
    await first.call(
        "graph_add_fact",
        {"subject": word, "predicate": "runs on", "object": f"host-{word}"},
        user="u",
        session="k3",
    )
    walked = await second.call("graph_traverse", {"node": word.upper()}, user="u", session="k4")
    assert [f["object"] for f in walked.response["facts"]] == [f"host-{word}"]


async def test_a_secret_set_and_approved_on_one_replica_is_usable_on_another(
    replicas: tuple[Replica, Replica],
) -> None:
    first, second = replicas
    name, value = f"TOKEN_{uuid.uuid4().hex[:8].upper()}", f"s3cr3t-{uuid.uuid4().hex}"
    set_run = await first.call(
        "secrets_set", {"name": name, "value": value}, user="u", session="v1"
    )
    assert first.approved == ["secrets_set"]
    assert set_run.response.get("stored") or set_run.response.get("name") == name, set_run.response
    ref = "{{secret:" + name + "}}"
    used = await second.call("secrets_use", {"name": name}, user="u", session="v2")
    assert used.response["reference"] == ref
    # The other replica encrypts with the secret; the first decrypts with it.
    sealed = await second.call(
        "crypto_encrypt", {"text": "the plan", "key": ref}, user="u", session="v3"
    )
    opened = await first.call(
        "crypto_decrypt",
        {"ciphertext": sealed.response["ciphertext"], "key": ref},
        user="u",
        session="v4",
    )
    assert opened.response["text"] == "the plan"
    # Both hold the same master key: the vault's own key works across replicas too.
    own = await first.call("crypto_encrypt", {"text": "noon"}, user="u", session="v5")
    back = await second.call(
        "crypto_decrypt", {"ciphertext": own.response["ciphertext"]}, user="u", session="v6"
    )
    assert back.response["text"] == "noon"
    for run in (used, sealed, opened):
        assert value not in everything_shown(run)


async def test_traces_of_turns_on_both_replicas_are_listed_from_the_database(
    replicas: tuple[Replica, Replica], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, second = replicas
    sessions = [f"t-{uuid.uuid4().hex[:6]}", f"t-{uuid.uuid4().hex[:6]}"]
    await first.call("list_skills", {}, user="u", session=sessions[0])
    await second.call("list_skills", {}, user="u", session=sessions[1])

    monkeypatch.setenv("TROUPE_SESSION_STORE", os.environ["TROUPE_TEST_POSTGRES_URL"])
    cli = CliRunner()
    elsewhere = str(tmp_path / "a-third-data-dir")
    for session in sessions:
        listed = cli.invoke(app, ["trace", "list", "--session", session, "--data-dir", elsewhere])
        assert listed.exit_code == 0, listed.output
        assert "No traces yet" not in listed.output
        (trace,) = first.traces.list(session_id=session)
        shown = cli.invoke(app, ["trace", "show", trace.id, "--json", "--data-dir", elsewhere])
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.output)["session_id"] == session
    assert not (Path(elsewhere) / "traces.db").exists()


def test_a_replica_without_a_vault_key_stops_with_a_config_error_naming_both_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_SECRET_KEY", raising=False)
    settings = load_settings(
        workspace=tmp_path,
        data_dir=tmp_path / "data",
        session_store=os.environ["TROUPE_TEST_POSTGRES_URL"],
    )
    with pytest.raises(ConfigError) as failure:
        _ = settings.config
    assert "TROUPE_SECRET_KEY" in str(failure.value)
    assert "vault.key_file" in str(failure.value)
    assert not (tmp_path / "data" / "secret.key").exists()


async def test_a_key_file_setting_gives_every_replica_the_same_vault_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_SECRET_KEY", raising=False)
    key_file = tmp_path / "vault.key"
    key_file.write_text(TEST_VAULT_KEY + "\n", encoding="ascii")
    key_file.chmod(0o600)
    made = []
    for name in ("a", "b"):
        settings = load_settings(
            workspace=tmp_path,
            data_dir=tmp_path / f"data-{name}",
            session_store=os.environ["TROUPE_TEST_POSTGRES_URL"],
            vault={"key_file": str(key_file)},
        )
        made.append(list(settings.config.tools))
    own = await call_tool(made[0], "crypto_encrypt", {"text": "dawn"})
    back = await call_tool(made[1], "crypto_decrypt", {"ciphertext": own.response["ciphertext"]})
    assert back.response["text"] == "dawn"


async def test_a_replica_with_another_vault_key_is_told_so_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_SECRET_KEY", TEST_VAULT_KEY)
    first = Replica(tmp_path, "a")
    monkeypatch.setenv("TROUPE_SECRET_KEY", "a1" * 32)  # the second replica's (wrong) key
    second = Replica(tmp_path, "b")
    sealed = await first.call("crypto_encrypt", {"text": "noon"}, user="u", session="w1")
    refused = await second.call(
        "crypto_decrypt", {"ciphertext": sealed.response["ciphertext"]}, user="u", session="w2"
    )
    assert "does not match" in refused.response["error"]
    assert "TROUPE_SECRET_KEY" in refused.response["error"]
