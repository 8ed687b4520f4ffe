"""A served process pays the first turn's one-off costs before it is ready."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from troupe import build_agent_tree
from troupe.routing.fastpath import FastPath
from troupe.runtime.warm_up import warm_up
from troupe.settings import load_settings

# Runs in a fresh interpreter: the test process has imported everything already.
_FIRST_TURNS = textwrap.dedent(
    """
    import asyncio, gc, json, sys
    from pathlib import Path
    from troupe import Assistant, build_agent_tree
    from troupe.runtime.warm_up import warm_up
    from troupe.settings import load_settings

    workspace, data = Path(sys.argv[1]), Path(sys.argv[2])
    root = build_agent_tree(
        load_settings(workspace=workspace, data_dir=data, model="offline", router="auto").config
    )

    async def main():
        await warm_up(root, freeze=True)
        before = set(sys.modules)
        assistant = Assistant(root)
        answers = [
            await assistant.run_and_collect(f"s{i}", message)
            for i, message in enumerate(["read notes.txt", "hello", "list the files here"])
        ]
        new = sorted(m for m in set(sys.modules) - before if m.startswith("google.adk"))
        frozen = gc.get_freeze_count()
        print(json.dumps({"answers": answers, "new_adk_modules": new, "frozen": frozen}))

    asyncio.run(main())
    """
)


def test_turns_after_the_warm_up_import_no_more_of_adk_and_start_up_is_frozen(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the warm-up note\n")
    run = subprocess.run(
        [sys.executable, "-c", _FIRST_TURNS, str(workspace), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert "the warm-up note" in report["answers"][0]
    assert "notes.txt" in report["answers"][2]
    assert report["new_adk_modules"] == []
    assert report["frozen"] > 10_000  # start-up's objects, out of the collector's way


async def test_a_failing_warm_up_is_logged_and_serving_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(self: FastPath) -> None:
        raise RuntimeError("encoder weights unreadable")

    monkeypatch.setattr(FastPath, "warm_up", broken)
    root = build_agent_tree(
        load_settings(
            workspace=tmp_path, data_dir=tmp_path / "data", model="offline", router="auto"
        ).config
    )
    with caplog.at_level(logging.WARNING, logger="troupe.serve"):
        seconds = await warm_up(root)
    assert seconds >= 0
    assert "encoder weights unreadable" in caplog.text
