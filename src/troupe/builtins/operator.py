"""Operator tools: files and shell commands inside the workspace."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from collections.abc import Sequence
from typing import Any

from ..tools import Tool
from .shell_policy import DEFAULT_DENY_COMMANDS, compile_deny_list, denied_by, needs_approval
from .workspace import PathOutsideWorkspace, Workspace, tool_error

MAX_READ_BYTES = 200_000
MAX_LIST_ENTRIES = 500
DEFAULT_TIMEOUT_S = 30.0
MAX_OUTPUT_CHARS = 20_000


def _cap(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def operator_tools(
    workspace: Workspace,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    deny_commands: Sequence[str] | None = None,
) -> list[Tool]:
    """fs_read, fs_list, fs_write and exec_shell bound to ``workspace``.

    ``deny_commands`` are regular expressions for commands exec_shell refuses
    before anyone is asked (default: :data:`DEFAULT_DENY_COMMANDS`).
    """
    deny_list = compile_deny_list(DEFAULT_DENY_COMMANDS if deny_commands is None else deny_commands)

    def fs_read(path: str) -> dict[str, Any]:
        """Read a text file inside the workspace and return its contents."""
        try:
            target = workspace.resolve(path)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a path inside the workspace")
        if not target.is_file():
            return tool_error(f"{path!r} is not a file", "the path of an existing file")
        data = target.read_bytes()[: MAX_READ_BYTES + 1]
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        return {
            "path": workspace.relative(target),
            "content": text,
            "truncated": len(data) > MAX_READ_BYTES,
        }

    def fs_list(path: str = ".") -> dict[str, Any]:
        """List the files and folders in a directory inside the workspace."""
        try:
            target = workspace.resolve(path or ".")
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a directory inside the workspace")
        if not target.is_dir():
            return tool_error(f"{path!r} is not a directory", "the path of a directory")
        entries = sorted(target.iterdir(), key=lambda p: p.name)
        shown = [p.name + ("/" if p.is_dir() else "") for p in entries[:MAX_LIST_ENTRIES]]
        return {"path": workspace.relative(target), "entries": shown, "total": len(entries)}

    def fs_write(path: str, content: str) -> dict[str, Any]:
        """Write text to a file inside the workspace, creating or replacing it."""
        if not isinstance(content, str):
            return tool_error("content must be text", "a string")
        try:
            target = workspace.resolve(path)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a path inside the workspace")
        if target.is_dir():
            return tool_error(f"{path!r} is a directory", "a file path")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.troupe-tmp")
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, target)  # atomic: a crash never leaves half a file
        return {"path": workspace.relative(target), "bytes": len(content.encode())}

    async def exec_shell(command: str) -> dict[str, Any]:
        """Run a shell command in the workspace and return its exit code and output."""
        if not isinstance(command, str) or not command.strip():
            return tool_error("the command is empty", "a shell command such as 'ls -la'")
        if (rule := denied_by(command, deny_list)) is not None:
            return tool_error(
                f"refused: {command!r} is on the deny list (pattern {rule!r}) and is never run",
                "a command that does not wipe, format or power off the machine",
                command=command,
            )
        try:
            shlex.split(command)
        except ValueError as exc:
            return tool_error(f"cannot parse the command: {exc}", "a well-quoted shell command")
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=workspace.root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_s)
        except TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return tool_error(
                f"timed out after {timeout_s:g} s and was stopped",
                "a command that finishes in time",
                command=command,
            )
        stdout, out_cut = _cap(out.decode(errors="replace"), max_output_chars)
        stderr, err_cut = _cap(err.decode(errors="replace"), max_output_chars)
        return {
            "command": command,
            "exit_code": proc.returncode,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": out_cut or err_cut,
        }

    def shell_needs_approval(command: str = "", **_: Any) -> bool:
        return needs_approval(command, workspace_root=workspace.root, deny_list=deny_list)

    return [
        Tool.from_function(fs_read),
        Tool.from_function(fs_list),
        Tool.from_function(fs_write, dangerous=True),
        Tool.from_function(exec_shell, dangerous=shell_needs_approval),
    ]


def _kill_group(pid: int) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
