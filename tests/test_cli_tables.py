"""The listings fit the terminal: ``trace list``, ``sessions list`` and ``secrets list``
at 80 and 120 columns and piped, with ids whole, long text cut with "…", no header
word broken, and ``--json`` one array with everything the table left out."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from troupe import Assistant, Config, build_agent_tree
from troupe.cli.app import app
from troupe.cli.sessions import SESSION_COLUMNS
from troupe.cli.tables import Column, column_widths
from troupe.cli.trace import TRACE_COLUMNS
from troupe.stores.sessions import close_session_store, default_session_store, open_session_store
from troupe.stores.traces import TraceStore
from troupe.stores.vault import SecretStore
from troupe.testing import ScriptedModel
from troupe_bench.stub_tools import stub_tools

LONG_SESSION = "a-rather-long-session-name-that-keeps-going"
LONG_REQUEST = "please look through every file in this folder and " * 3


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two stored sessions with traces, and two secrets, in one data directory."""
    data = tmp_path_factory.mktemp("data")

    async def fill() -> None:
        service = open_session_store(default_session_store(data))
        try:
            store = TraceStore(data / "traces.db")
            model = ScriptedModel(replies=["done", "done again"])
            root = build_agent_tree(Config(tools=stub_tools(), model=model))
            assistant = Assistant(root, service, trace_store=store)
            await assistant.run_and_collect(LONG_SESSION, LONG_REQUEST)
            await assistant.run_and_collect("chat-1", "hello")
        finally:
            await close_session_store(service)

    asyncio.run(fill())
    vault = SecretStore(data)
    vault.set("GITHUB_TOKEN_FOR_THE_RELEASE_BOT_OF_THE_BUILD_MACHINE", "x")
    vault.set("API", "y")
    return data


LISTINGS = {
    "trace list": (["trace", "list"], ["id", "when", "outcome", "request"]),
    "sessions list": (["sessions", "list"], ["session", "last", "active", "first", "message"]),
    "secrets list": (["secrets", "list"], ["name", "updated"]),
}


def _listed(data_dir: Path, argv: list[str], columns: int) -> str:
    result = CliRunner().invoke(
        app, [*argv, "--data-dir", str(data_dir)], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("listing", list(LISTINGS))
def test_a_listing_fits_the_width_and_keeps_every_header_word_whole(
    data_dir: Path, listing: str, columns: int
) -> None:
    argv, must_show = LISTINGS[listing]

    out = _listed(data_dir, argv, columns)

    lines = out.rstrip("\n").split("\n")
    assert max(len(line) for line in lines) <= columns, out
    header, rule = lines[0], lines[1]
    assert set(rule.strip()) == {"─"}, f"the header took more than one line:\n{out}"
    for word in must_show:
        assert word in header.split(), out
    # Each header word is whole: the header line is made of the columns' header words.
    known = {
        w for table in (TRACE_COLUMNS, SESSION_COLUMNS) for c in table for w in c.header.split()
    }
    known |= {"name", "updated", "reference"}
    assert set(header.split()) <= known, header


def test_trace_list_shows_whole_ids_and_cuts_long_text_with_an_ellipsis(data_dir: Path) -> None:
    traces = TraceStore(data_dir / "traces.db").list()

    out = _listed(data_dir, ["trace", "list"], 80)

    assert all(t.id in out for t in traces)
    assert "please look" in out and "…" in out
    assert LONG_REQUEST.strip() not in out


def test_at_120_columns_the_columns_dropped_at_80_come_back(data_dir: Path) -> None:
    narrow = _listed(data_dir, ["trace", "list"], 80).split("\n")[0].split()
    wide = _listed(data_dir, ["trace", "list"], 120).split("\n")[0].split()

    assert set(narrow) < set(wide)
    assert "tokens" in wide and "tokens" not in narrow


def test_sessions_list_names_each_sessions_last_turn_as_its_trace_does(data_dir: Path) -> None:
    out = _listed(data_dir, ["sessions", "list"], 120)

    assert "last turn" in out and out.count("answered") == 2


def test_secrets_list_keeps_a_long_name_readable_at_80_columns(data_dir: Path) -> None:
    out = _listed(data_dir, ["secrets", "list"], 80)

    assert "GITHUB_TOKEN_FOR_THE_RELEASE_BOT" in out and "API" in out


@pytest.mark.parametrize(
    ("argv", "key"),
    [
        (["trace", "list", "--json"], "request"),
        (["sessions", "list", "--json"], "first_message"),
        (["secrets", "list", "--json"], "reference"),
    ],
)
def test_every_listing_has_json_as_one_array_with_what_the_table_cut(
    data_dir: Path, argv: list[str], key: str
) -> None:
    out = _listed(data_dir, argv, 80)

    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) == 2
    assert all(key in row for row in rows)
    if key == "request":
        assert LONG_REQUEST in [row["request"] for row in rows]


def test_sessions_show_json_is_one_array(data_dir: Path) -> None:
    out = _listed(data_dir, ["sessions", "show", "chat-1", "--json"], 80)

    lines = json.loads(out)
    assert isinstance(lines, list)
    assert lines[0]["author"] == "user" and lines[0]["text"] == "hello"


def test_piped_without_columns_a_listing_stays_within_80(data_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "dumb"
    result = subprocess.run(
        [sys.executable, "-m", "troupe", "trace", "list", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )

    lines = result.stdout.rstrip("\n").split("\n")
    assert len(lines) == 4 and max(len(line) for line in lines) <= 80, result.stdout


def test_the_columns_worth_least_go_first_and_ids_are_never_cut() -> None:
    columns = [
        Column("id", worth=10),
        Column("text", worth=5, cut=True, min_width=6),
        Column("extra", worth=1),
    ]
    rows = [["0123456789ab", "x" * 50, "12345"]]

    assert column_widths(columns, rows, 200) == [12, 50, 5]
    assert column_widths(columns, rows, 40) == [12, 19, 5]
    assert column_widths(columns, rows, 20) == [12, 6, None]
    # Too narrow even for the id alone: the id stays whole (the terminal folds it).
    assert column_widths(columns, rows, 5) == [12, None, None]
