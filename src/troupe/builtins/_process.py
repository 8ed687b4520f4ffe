"""Run a child process for exec_shell and skill_run: timeout, capped output, checked env."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, TroupeError
from ..sandbox import is_hook_variable
from ..stores.vault_key import KEY_ENV
from ._args import BadArgument
from ._limits import CommandLimits, PidsGroup, pids_cgroups_work

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_MAX_ENV_VARS = 64
_MAX_ENV_VALUE = 32_768
# Never handed to a child: with it, a command could decrypt every stored secret.
_PRIVATE_ENV = frozenset({KEY_ENV})


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or stopped) child process left behind."""

    exit_code: int | None
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool
    stdout_bytes: int = 0
    """How many bytes the command wrote to stdout (kept or not)."""
    stderr_bytes: int = 0


def env_arg(value: Any) -> dict[str, str]:
    """Validate an ``env`` argument: a mapping of variable names to text values."""
    if value is None:
        return {}
    if isinstance(value, Mapping) and len(value) > _MAX_ENV_VARS:
        raise BadArgument(f"env has {len(value)} variables", f"at most {_MAX_ENV_VARS}")
    accepted = "a mapping of variable names to text, e.g. {'API_TOKEN': '{{secret:GITHUB}}'}"
    if not isinstance(value, Mapping):
        raise BadArgument(f"env must be a mapping, got {type(value).__name__} {value!r}", accepted)
    env: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise BadArgument(f"env variable name {key!r} is not allowed", accepted)
        if key in _PRIVATE_ENV:
            raise BadArgument(f"env variable {key!r} is reserved for troupe", accepted)
        if is_hook_variable(key):
            raise BadArgument(
                f"env variable {key!r} is read by a loader, an interpreter or git as code or "
                "configuration, so a tool call may not set it",
                accepted,
            )
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise BadArgument(f"env value for {key!r} must be text, got {item!r}", accepted)
        if "\0" in str(item) or len(str(item)) > _MAX_ENV_VALUE:
            raise BadArgument(f"env value for {key!r} has a NUL byte or is too long", accepted)
        env[key] = str(item)
    return env


def env_names(setting: str, names: Sequence[str]) -> tuple[str, ...]:
    """``names`` when it is a list of variable names; else ConfigError naming ``setting``."""
    if isinstance(names, str):
        raise ConfigError(
            f"{setting} must be a list of variable names, not the string {names!r}; "
            "wrap it in a list."
        )
    for name in names:
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ConfigError(
                f"{setting} entry {name!r} is not an environment variable name; "
                "use names like GITHUB_TOKEN."
            )
    return tuple(names)


def check_pass_env(names: Sequence[str]) -> tuple[str, ...]:
    """Validate a ``pass_env`` list; a bad entry raises ConfigError naming it."""
    for name in env_names("pass_env", names):
        if name in _PRIVATE_ENV:
            raise ConfigError(
                f"pass_env entry {name!r} is troupe's vault key and never reaches a command; "
                "remove it."
            )
    return tuple(names)


_CHUNK_BYTES = 65_536
_MASK_MARGIN_BYTES = 65_536
"""Kept past the cut, so that a secret straddling it is still whole when masked."""


def _cap(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


async def _collect(stream: asyncio.StreamReader | None, keep: int) -> tuple[bytes, int]:
    """Read ``stream`` to its end, keeping its first ``keep`` bytes: (kept, bytes written).

    The rest is read and dropped as it arrives, so a command that writes
    gigabytes costs troupe ``keep`` bytes of memory, not the output's size.
    """
    kept = bytearray()
    total = 0
    if stream is None:
        return b"", 0
    while chunk := await stream.read(_CHUNK_BYTES):
        total += len(chunk)
        if (room := keep - len(kept)) > 0:
            kept += chunk[:room]
    return bytes(kept), total


async def run_process(
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_chars: int,
    argv: Sequence[str],
    mask: Callable[[str], str] | None = None,
    limits: CommandLimits | None = None,
    run_as: int | None = None,
) -> ProcessResult:
    """Run ``argv`` in ``cwd`` with exactly ``env`` (nothing inherited).

    The child gets its own process group, so a timeout or a cancelled turn stops
    everything it started, and Ctrl-C at the terminal reaches troupe, not the child.
    Output is streamed: at most ``max_output_chars`` characters per stream (in
    bytes, four times that plus a margin) are kept while the command runs, and
    the rest is drained and dropped, so troupe's memory stays flat whatever the
    command writes. ``mask`` is applied to what is kept before it is cut to
    size, so a cut never leaves part of a secret behind. ``limits`` bounds the
    command's memory and open files (and, as root, its processes; the caller
    puts the process limit of a normal user into ``argv`` with
    :meth:`CommandLimits.inside`). ``run_as`` starts the child as that uid (and
    its group), with no supplementary groups: troupe as root running a jail as
    the dedicated unprivileged uid, where RLIMIT_NPROC holds.
    """
    common: dict[str, Any] = {
        "cwd": cwd,
        "env": dict(env),
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE,
        "stdin": asyncio.subprocess.DEVNULL,
        "start_new_session": True,
    }
    group = None
    if limits and os.geteuid() == 0 and run_as is None:
        group = PidsGroup.create(limits.processes)
        if group is None and pids_cgroups_work():
            # Its process limit was to be this group: without it the command is not run.
            raise TroupeError("not run: the command's pids cgroup could not be made; try again")
    if limits is not None:
        common["preexec_fn"] = limits.in_child(group)
    if run_as is not None:
        common.update(user=run_as, group=run_as, extra_groups=[])
    try:
        proc = await asyncio.create_subprocess_exec(*argv, **common)
        keep = max_output_chars * 4 + _MASK_MARGIN_BYTES
        try:
            # asyncio.timeout, not wait_for: a cancelled wait_for leaves the gather's
            # CancelledError unretrieved, and asyncio prints it at the next turn.
            async with asyncio.timeout(timeout_s):
                (out, out_bytes), (err, err_bytes), _ = await asyncio.gather(
                    _collect(proc.stdout, keep), _collect(proc.stderr, keep), proc.wait()
                )
        except TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return ProcessResult(None, "", "", False, True)
        except asyncio.CancelledError:
            # The turn was cancelled (Ctrl-C in the REPL, a client gone): the
            # command and everything it started stop with it.
            _kill_group(proc.pid)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(proc.wait())
            raise
    finally:
        if group is not None:
            group.close()
    clean = mask or (lambda text: text)
    stdout, out_cut = _cap(clean(out.decode(errors="replace")), max_output_chars)
    stderr, err_cut = _cap(clean(err.decode(errors="replace")), max_output_chars)
    cut = out_cut or err_cut or out_bytes > len(out) or err_bytes > len(err)
    return ProcessResult(proc.returncode, stdout, stderr, cut, False, out_bytes, err_bytes)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
