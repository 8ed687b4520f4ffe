"""A folder swapped for a link to one outside, in a loop, while the file tools run.

A hostile command (simulated by a separate process) flips ``ws/shared``
between the real folder and a link to a folder outside the workspace as fast
as it can, while a scripted model calls ``fs_list``, ``fs_write`` (which makes
missing folders) and ``fs_read`` on paths under it many times through the
runner. Whatever the interleaving, nothing outside is ever listed, created or
read: every tool walks the path by descriptor without following links.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from fakes.planted import SECRET_TEXT
from troupe import Assistant, Config, Tool, build_agent_tree
from troupe.runtime.approvals import run_with_approvals
from troupe.testing import ScriptedModel, call

ROUNDS = 20
CALLS_PER_TOOL = 15

SWAPPER = """
import ctypes, os, sys
folder, outside = sys.argv[1:3]
spare = folder + ".spare"
os.symlink(outside, spare)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
while True:  # the folder and the link trade places atomically, over and over
    libc.renameat2(AT_FDCWD, folder.encode(), AT_FDCWD, spare.encode(), RENAME_EXCHANGE)
"""


def _round(n: int) -> LlmResponse:
    parts = []
    for i in range(CALLS_PER_TOOL):
        here = "./" * (n * CALLS_PER_TOOL + i)  # no two calls alike, or the guards stop them
        for name, args in (
            ("fs_list", {"path": f"{here}shared"}),
            ("fs_read", {"path": f"{here}shared/secret.txt"}),
            ("fs_write", {"path": f"shared/made-{n}-{i}/note.txt", "content": "x"}),
        ):
            parts.append(types.Part(function_call=types.FunctionCall(name=name, args=args)))
    return LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)


async def test_a_folder_swapped_for_a_link_never_leads_the_file_tools_outside(
    tools: list[Tool], workspace: Path, tmp_path: Path
) -> None:
    shared = workspace / "shared"
    shared.mkdir()
    (shared / "inside.txt").write_text("inside\n", encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET_TEXT + "\n", encoding="utf-8")
    (outside / "only-outside.txt").write_text("x", encoding="utf-8")
    before = sorted(p.name for p in outside.iterdir())
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            *(_round(n) for n in range(ROUNDS)),
            "Done.",
        ]
    )
    assistant = Assistant(build_agent_tree(Config(tools=list(tools), model=model)))
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(shared), str(outside)])
    try:
        events = [e async for e in run_with_approvals(assistant, "s1", "race", policy="auto")]
    finally:
        swapper.kill()
        swapper.wait()

    shown = "\n".join(str(r.model_dump(mode="json")) for r in model.requests)
    assert model.remaining == 0, events[-1:]
    assert SECRET_TEXT not in shown
    assert "only-outside.txt" not in shown
    assert sorted(p.name for p in outside.iterdir()) == before
    # The race really ran: some calls met the folder in place, some met the link.
    assert "inside.txt" in shown
    assert "refused" in shown
