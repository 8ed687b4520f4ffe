"""A secret's plaintext reaches the child process and nothing else.

One session stores a secret, hands it to commands and a skill through
``{{secret:NAME}}``, and reads back a file the command wrote. Then every place
a value could end up is searched for the plaintext: the SQLite stores, the
session store, the logs, the trace spans, and every request the model saw.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from troupe.stores.traces import TraceStore

PLAINTEXT = "pl41n-Secret-Value-9c1e77"
REF = "{{secret:API_TOKEN}}"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Every span ADK records during the test."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        # The global provider can be set once per process; later tests reuse it.
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


def _everything_in(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


async def test_a_secret_reaches_the_command_but_no_store_log_trace_or_model(
    run_tool: Any,
    workspace: Path,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    spans: InMemorySpanExporter,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("TEST_TOKEN_SOURCE", PLAINTEXT)
    sessions_dir = tmp_path / "sessions"
    sessions_dir.mkdir()
    service = SqliteSessionService(str(sessions_dir / "sessions.db"))
    traces = TraceStore(sessions_dir / "traces.db")
    runs = []

    async def run(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        done = await run_tool(
            tool, args, session_service=service, session_id="leak", trace_store=traces
        )
        runs.append(done)
        return done.response

    stored = await run("secrets_set", {"name": "API_TOKEN", "from_env": "TEST_TOKEN_SOURCE"})
    shell = await run(
        "exec_shell",
        {
            "command": 'echo "token=$TOKEN"; echo "$TOKEN" >&2; echo "$TOKEN" > handed-over.txt',
            "env": {"TOKEN": REF},
        },
    )
    read_back = await run("fs_read", {"path": "handed-over.txt"})
    await run("create_skill", {"name": "show-token", "script": 'printf "%s" "$TOKEN"'})
    skill = await run("skill_run", {"name": "show-token", "env": {"TOKEN": REF}})
    await run("memory_store", {"text": f"the API token is {REF}"})
    await run("save_knowledge", {"text": f"deploys authenticate with {REF}"})
    listed = await run("secrets_list", {})

    # The command really received the value...
    assert (workspace / "handed-over.txt").read_text() == PLAINTEXT + "\n"
    # ...and every result shows the reference instead.
    assert stored["reference"] == REF
    assert shell["stdout"] == f"token={REF}\n" and shell["stderr"] == f"{REF}\n"
    assert read_back["content"] == f"{REF}\n"
    assert skill["stdout"] == REF
    assert listed["secrets"][0]["name"] == "API_TOKEN"

    secret = PLAINTEXT.encode()
    assert secret not in _everything_in(data_dir), "a store file holds the plaintext"
    assert secret not in _everything_in(sessions_dir), "the session or trace store holds it"
    # Turns paused for approval leave one trace per part, so there can be more.
    assert len(traces.list(limit=50)) >= len(runs), "every turn left a troupe trace to check"
    assert PLAINTEXT not in caplog.text, "a log record holds the plaintext"
    seen_by_model = repr([r.contents for done in runs for r in done.model.requests])
    assert PLAINTEXT not in seen_by_model, "the model was shown the plaintext"
    assert PLAINTEXT not in repr([done.events for done in runs])
    recorded = repr(
        [(s.name, dict(s.attributes or {}), s.events) for s in spans.get_finished_spans()]
    )
    assert "execute_tool exec_shell" in recorded, "the trace recorded no tool call to check"
    assert PLAINTEXT not in recorded, "a trace span holds the plaintext"
