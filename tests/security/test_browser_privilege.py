"""The navigator's Chromium, against a page that gets code execution in it.

The attack: during ``troupe demo`` as root, 6 of 11 Chromium processes held
every capability (CapEff 000001fffeffffff) with ``--no-sandbox``, outside the
jail: a renderer exploit from any page the navigator opens was root on the
host. Now Chromium runs in the jail (as root, started as ``nobody`` too), or
where the jail is missing as an unprivileged user with its own sandbox on
where this machine allows it. A scripted model navigates through the runner;
while the page is open every process of the browser is read from ``/proc``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fakes.http_site import serve_folder
from fakes.tool_runs import call_tool
from troupe.builtins.browser_session import BrowserSession
from troupe.builtins.navigator import navigator_tools
from troupe.builtins.workspace import Workspace
from troupe.sandbox.browser import confinement

KEY = "sk-troupe-test-not-for-the-browser"


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _chromium_processes() -> dict[int, dict[str, str]]:
    """Each Chromium process this test started: its status fields, user namespace, root."""
    found = {}
    for pid in _descendants(os.getpid()):
        proc = Path(f"/proc/{pid}")
        try:
            if "chrom" not in (proc / "cmdline").read_bytes().split(b"\0")[0].decode():
                continue
            fields = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines())
            fields = {k: v.strip() for k, v in fields.items()}
            fields["userns"] = os.readlink(proc / "ns" / "user")
            fields["environ"] = (proc / "environ").read_bytes().decode(errors="replace")
            fields["root"] = str(proc / "root")
        except OSError:
            continue
        found[pid] = fields
    return found


@pytest.fixture
async def browsing(
    workspace: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[int, dict[str, str]]:
    """A page open in the navigator's browser (through the runner), and its processes."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data_dir.mkdir(parents=True, exist_ok=True)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<h1>hello</h1>", encoding="utf-8")
    session = BrowserSession()
    tools = navigator_tools(Workspace(workspace), browser=session, allow_hosts=["127.0.0.1"])
    try:
        with serve_folder(site) as url:
            run = await call_tool(tools, "browser_navigate", {"url": f"{url}/index.html"})
            assert "error" not in run.response, run.response
            processes = _chromium_processes()
    finally:
        await session.close()
    assert processes, "no Chromium process was found"
    return processes


async def test_no_chromium_process_holds_a_capability_over_this_machine(
    browsing: dict[int, dict[str, str]],
) -> None:
    ours = os.readlink("/proc/self/ns/user")
    for pid, fields in browsing.items():
        # Chromium's own sandbox holds capabilities only inside its own user
        # namespace; none may hold one in troupe's.
        if fields["userns"] == ours:
            assert int(fields["CapEff"], 16) == 0, (pid, fields["CapEff"])
            assert int(fields["CapPrm"], 16) == 0, (pid, fields["CapPrm"])
        assert fields["Uid"].split()[0] != "0" or fields["userns"] != ours, pid


async def test_the_browser_sees_none_of_troupe_s_environment(
    browsing: dict[int, dict[str, str]],
) -> None:
    for fields in browsing.values():
        assert KEY not in fields["environ"]
        assert "TROUPE_DATA_DIR" not in fields["environ"]


async def test_in_the_jail_the_browser_sees_no_home_data_directory_or_workspace(
    browsing: dict[int, dict[str, str]], workspace: Path, data_dir: Path
) -> None:
    if confinement() != "jail":  # outside the jail: an unprivileged user, file modes hold
        assert all(f["Uid"].split()[0] != "0" for f in browsing.values()) or os.geteuid() != 0
        return
    for fields in browsing.values():
        inside = Path(fields["root"])
        for hidden in (Path.home(), data_dir, workspace):
            assert not (inside / str(hidden).lstrip("/")).exists(), hidden
