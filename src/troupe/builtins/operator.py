"""Operator tools: files and shell commands inside the workspace."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..environment import process_environ
from ..sandbox import Jail, command_env, unconfined_effect
from ..stores.vault import SECRET_REF
from ._args import BadArgument, guarded, name_arg, text_arg
from ._limits import (
    DEFAULT_LIMITS,
    NO_PROCESS_LIMIT,
    CommandLimits,
    ProcessLimit,
    process_limit,
)
from ._process import ProcessResult, check_pass_env, env_arg, run_process
from ._toolset import Toolset, ToolSpec, tool_list_factory
from .shell_policy import (
    DEFAULT_DENY_COMMANDS,
    GIT_NOTE,
    compile_deny_list,
    deny_reason,
    is_read_only,
    runs_git,
)
from .workspace import PathOutsideWorkspace, Workspace, tool_error

if TYPE_CHECKING:
    from ..stores.knowledge import KnowledgeStore
    from ..stores.vault import SecretStore

MAX_READ_BYTES = 200_000
MAX_LIST_ENTRIES = 500
DEFAULT_TIMEOUT_S = 30.0
MAX_OUTPUT_CHARS = 20_000
MAX_EDIT_BYTES = 2_000_000
MAX_SKILL_ARGS = 32
SHOWN_SKILL_LINES = 40
"""How much of a skill's body an approval request shows (its sha256 covers all of it)."""


class OperatorTools(Toolset):
    """fs_read, fs_list, fs_write, fs_edit, exec_shell and skill_run bound to a workspace.

    ``deny_commands`` are regular expressions for commands exec_shell refuses
    before anyone is asked (default: :data:`DEFAULT_DENY_COMMANDS`).
    Commands run in ``jail`` (default: a bubblewrap jail on the workspace that
    hides ``private_dirs``; ``network`` lets approved commands reach the
    network) with an environment built from scratch: PATH, HOME, LANG and the
    variables ``pass_env`` names from troupe's own environment, ``environ``
    (the settings' snapshot of it; None: this process's, when a command starts).
    ``skills`` is the store skill_run reads (no skill_run without it);
    ``secrets`` substitutes ``{{secret:NAME}}`` in exec_shell's ``env`` and masks
    secret values in output; the file tools refuse paths in ``private_dirs``
    (troupe's data directory, which holds the vault's key). ``limits`` bounds
    each command's processes, memory and open files.
    """

    specs = (
        ToolSpec("fs_read"),
        ToolSpec("fs_list"),
        ToolSpec("fs_write", dangerous=True),
        ToolSpec("fs_edit", dangerous=True),
        ToolSpec("exec_shell", dangerous="shell_needs_approval", effect="shell_effect"),
        ToolSpec("skill_run", dangerous=True, effect="skill_effect", needs="skills"),
    )

    def __init__(
        self,
        workspace: Workspace,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        deny_commands: Sequence[str] | None = None,
        pass_env: Sequence[str] = (),
        skills: KnowledgeStore | None = None,
        secrets: SecretStore | None = None,
        private_dirs: Sequence[str | Path] = (),
        network: bool = False,
        jail: Jail | None = None,
        limits: CommandLimits = DEFAULT_LIMITS,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.environ = environ
        self.deny_list = compile_deny_list(
            DEFAULT_DENY_COMMANDS if deny_commands is None else deny_commands
        )
        if private_dirs:
            workspace = Workspace(
                workspace.root,
                private=[*workspace.private, *private_dirs],
                read_only=workspace.read_only,
            )
        self.workspace = workspace
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        self.limits = limits.for_timeout(timeout_s)
        self.passed = frozenset(check_pass_env(pass_env))
        self.skills = skills
        self.secrets = secrets
        self.jail = jail or Jail(
            workspace.root,
            hidden=workspace.private,
            network=network,
            read_only=workspace.read_only,
            tmp_mb=self.limits.memory_mb,
        )
        self.jail.status  # noqa: B018 - probe now, so an inactive sandbox is reported at start

    def parent_env(self) -> Mapping[str, str]:
        """troupe's environment, which ``pass_env`` and LANG are taken from."""
        return process_environ() if self.environ is None else self.environ

    def mask(self, text: str) -> str:
        return self.secrets.mask(text) if self.secrets is not None else text

    @guarded
    def fs_read(self, path: str) -> dict[str, Any]:
        """Read a text file inside the workspace and return its contents."""
        try:
            target = self.workspace.resolve(path)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a path inside the workspace")
        if not target.is_file():
            return tool_error(f"{path!r} is not a file", "the path of an existing file")
        with self.workspace.open_read(target) as handle:
            data = handle.read(MAX_READ_BYTES + 1)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        return {
            "path": self.workspace.relative(target),
            "content": self.mask(text),
            "truncated": len(data) > MAX_READ_BYTES,
        }

    @guarded
    def fs_list(self, path: str = ".") -> dict[str, Any]:
        """List the files and folders in a directory inside the workspace."""
        try:
            target = self.workspace.resolve(path or ".")
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a directory inside the workspace")
        if not target.is_dir():
            return tool_error(f"{path!r} is not a directory", "the path of a directory")
        try:
            entries = self.workspace.list_dir(target)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a directory inside the workspace")
        shown = [name + ("/" if is_dir else "") for name, is_dir in entries[:MAX_LIST_ENTRIES]]
        return {"path": self.workspace.relative(target), "entries": shown, "total": len(entries)}

    @guarded
    def fs_write(self, path: str, content: str) -> dict[str, Any]:
        """Write text to a file inside the workspace, creating or replacing it."""
        if not isinstance(content, str):
            return tool_error("content must be text", "a string")
        try:
            target = self.workspace.resolve(path)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a path inside the workspace")
        if target.is_dir():
            return tool_error(f"{path!r} is a directory", "a file path")
        self.workspace.write_bytes(target, content.encode("utf-8"))
        return {"path": self.workspace.relative(target), "bytes": len(content.encode())}

    def secret_env(self, env: Any) -> dict[str, str]:
        """The ``env`` argument checked, with secret references substituted."""
        extra = env_arg(env)
        if not any(SECRET_REF.search(value) for value in extra.values()):
            return extra
        if self.secrets is None:
            raise BadArgument(
                "env uses a {{secret:NAME}} reference but no secret store is configured",
                "plain values, or troupe's built-in vault (builtin_tools) for secrets",
            )
        return self.secrets.substitute_env(extra)

    def process_limit(self, *, writable: bool) -> ProcessLimit:
        """How the processes of a command (one that writes, or only reads) are limited here."""
        return process_limit(
            jailed=self.jail.status.active,
            writable=writable,
            workspace=self.workspace.root,
            as_uid_works=self.jail.starts_as,
        )

    def jailed(self, argv: list[str], *, writable: bool) -> tuple[list[str], ProcessLimit]:
        """``argv`` with its process limit, in the jail; and how that limit holds."""
        plan = self.process_limit(writable=writable)
        return self.jail.wrap(self.limits.inside(argv, plan), writable=writable), plan

    def report(self, result: ProcessResult, **head: Any) -> dict[str, Any]:
        if result.timed_out:
            return tool_error(
                f"timed out after {self.timeout_s:g} s and was stopped",
                "a command that finishes in time",
                **head,
            )
        shown = {
            **head,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "truncated": result.truncated,
        }
        if result.truncated:
            shown["note"] = (
                f"output cut at {self.max_output_chars} characters per stream; the command "
                f"wrote {result.stdout_bytes} bytes to stdout and {result.stderr_bytes} to stderr"
            )
        return shown

    @guarded
    async def exec_shell(self, command: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        """Run a shell command in the workspace and return its exit code and output.
        `env` adds environment variables; a value may be '{{secret:NAME}}', substituted
        only inside the command's process and masked in its output."""
        if not isinstance(command, str) or not command.strip():
            return tool_error("the command is empty", "a shell command such as 'ls -la'")
        if (why := await deny_reason(command, self.deny_list)) is not None:
            return tool_error(
                f"refused: {command!r} {why} and is never run",
                "a command that does not wipe, format or power off the machine",
                command=command,
            )
        try:
            shlex.split(command)
        except ValueError as exc:
            return tool_error(f"cannot parse the command: {exc}", "a well-quoted shell command")
        if SECRET_REF.search(command):
            # On the command line a value would show in `ps` and in error messages.
            raise BadArgument(
                "secret references are not substituted in the command itself",
                "env={'TOKEN': '{{secret:NAME}}'} and $TOKEN in the command",
            )
        # Only a command that needed approval (and so got it) may write the workspace.
        writer = await self.shell_needs_approval(command, env)
        argv, plan = self.jailed(["/bin/sh", "-c", command], writable=writer)
        result = await run_process(
            argv=argv,
            cwd=self.workspace.root,
            env=command_env(self.secret_env(env), self.passed, self.parent_env()),
            timeout_s=self.timeout_s,
            max_output_chars=self.max_output_chars,
            mask=self.mask,
            limits=self.limits,
            run_as=plan.run_as,
        )
        return self.report(result, command=command)

    @guarded
    def fs_edit(self, path: str, old: str, new: str, replace_all: bool = False) -> dict[str, Any]:
        """Replace the text `old` with `new` in a file inside the workspace. `old` must
        occur exactly once unless replace_all is true."""
        target = self.workspace.resolve(text_arg("path", path, example="notes.txt"))
        if not isinstance(old, str) or old == "":
            raise BadArgument("old is empty or not text", "the exact text to replace")
        if not isinstance(new, str):
            raise BadArgument(f"new must be text, got {type(new).__name__}", "a string")
        if not isinstance(replace_all, bool):
            raise BadArgument(
                f"replace_all must be true or false, got {replace_all!r}", "a boolean"
            )
        if not target.is_file():
            raise BadArgument(f"{path!r} is not a file", "the path of an existing text file")
        if target.stat().st_size > MAX_EDIT_BYTES:
            raise BadArgument(f"{path!r} is too large to edit", f"at most {MAX_EDIT_BYTES} bytes")
        try:
            with self.workspace.open_read(target) as handle:
                text = handle.read().decode("utf-8")
        except UnicodeDecodeError:
            raise BadArgument(f"{path!r} is not UTF-8 text", "a text file") from None
        found = text.count(old)
        if found == 0:
            raise BadArgument(
                f"the text to replace does not occur in {path!r}",
                "old copied exactly from the file (fs_read shows it), whitespace included",
            )
        if found > 1 and not replace_all:
            raise BadArgument(
                f"the text to replace occurs {found} times in {path!r}",
                "a longer old that occurs once, or replace_all=true",
            )
        self.workspace.write_bytes(target, text.replace(old, new).encode("utf-8"))
        return {
            "path": self.workspace.relative(target),
            "replacements": found if replace_all else 1,
        }

    @guarded
    async def skill_run(
        self, name: str, args: list[str] | None = None, env: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Run a saved skill by name. A script skill runs in the workspace like
        exec_shell, with `args` as $1, $2, ... and optional `env` (values may be
        '{{secret:NAME}}'); an instruction skill returns its steps to carry out."""
        if self.skills is None:
            return tool_error("no skill store is configured", "troupe's built-in tools")
        skill_name = name_arg("name", name, example="backup-notes")
        skill = self.skills.get_skill(skill_name)
        if skill is None:
            known = [s["name"] for s in self.skills.list_skills()]
            raise BadArgument(
                f"no skill named {skill_name!r}",
                ("one of: " + ", ".join(known)) if known else "a skill made with create_skill",
            )
        argv = _skill_args(args)
        extra = self.secret_env(env)
        if skill["kind"] == "instruction":
            return {
                "skill": skill["name"],
                "kind": "instruction",
                "instruction": self.mask(skill["body"]),
                "next": "carry out these steps with the team's tools",
            }
        if (why := await deny_reason(skill["body"], self.deny_list)) is not None:
            return tool_error(
                f"refused: skill {skill['name']!r} runs a deny-listed command: it {why}",
                "a skill whose script does not wipe, format or power off the machine",
            )
        script, plan = self.jailed(
            ["/bin/sh", "-c", skill["body"], skill["name"], *argv], writable=True
        )
        result = await run_process(
            argv=script,
            cwd=self.workspace.root,
            env=command_env(extra, self.passed, self.parent_env()),
            timeout_s=self.timeout_s,
            max_output_chars=self.max_output_chars,
            mask=self.mask,
            limits=self.limits,
            run_as=plan.run_as,
        )
        return self.report(result, skill=skill["name"], kind="script", args=argv)

    async def shell_needs_approval(self, command: str = "", env: Any = None, **_: Any) -> bool:
        if not isinstance(command, str) or not command.strip():
            return False  # exec_shell answers an empty command itself
        if await deny_reason(command, self.deny_list) is not None:
            return False  # refused before anyone is asked
        if not is_read_only(command, self.workspace.root):
            return True
        # A read-only look runs without asking only inside an active jail, with a
        # process limit that holds, and only with troupe's own environment (an env
        # of the model's always asks).
        return (
            bool(env) or not self.jail.status.active or not self.process_limit(writable=False).holds
        )

    def shell_effect(self, command: Any = "", env: Any = None, **_: Any) -> dict[str, Any]:
        """What an approved exec_shell runs, and whether it would run outside the jail."""
        names = sorted(str(k) for k in env) if isinstance(env, dict) else []
        summary = f"run {command!r}" + (f" with env {', '.join(names)}" if names else "")
        if isinstance(command, str) and runs_git(command):
            summary += GIT_NOTE
        return self.unconfined({"summary": summary, "command": command, "env": names})

    def unconfined(self, effect: dict[str, Any]) -> dict[str, Any]:
        """``effect``, marked unconfined when the jail is not active here, or when no
        process limit can hold for a command that writes (troupe root, no pids cgroup)."""
        if not self.jail.status.active:
            return unconfined_effect(effect)
        if not self.process_limit(writable=True).holds:
            return unconfined_effect(effect, NO_PROCESS_LIMIT)
        return effect

    def skill_effect(self, name: Any = "", **_: Any) -> dict[str, Any]:
        """What an approved skill_run runs: the skill's current body and its sha256."""
        skill = (
            self.skills.get_skill(name)
            if self.skills is not None and isinstance(name, str)
            else None
        )
        if skill is None:
            return {"summary": f"run skill {name!r} (no such skill)", "skill": name}
        body = str(skill["body"])
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        lines = body.splitlines()
        shown = "\n".join(lines[:SHOWN_SKILL_LINES])
        if len(lines) > SHOWN_SKILL_LINES:
            shown += f"\n... ({len(lines) - SHOWN_SKILL_LINES} more lines)"
        return self.unconfined(
            {
                "summary": f"run {skill['kind']} skill {skill['name']!r} (sha256 {digest})",
                "skill": skill["name"],
                "kind": skill["kind"],
                "sha256": digest,
                "body": self.mask(shown),
            }
        )


operator_tools = tool_list_factory(
    OperatorTools,
    "operator_tools",
    "fs_read, fs_list, fs_write, fs_edit, exec_shell and skill_run bound to ``workspace``;"
    " the arguments are those of :class:`OperatorTools`.",
)


def _skill_args(value: Any) -> list[str]:
    if value is None:
        return []
    accepted = f"a list of at most {MAX_SKILL_ARGS} strings, e.g. ['notes', '--verbose']"
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise BadArgument(f"cannot split args {value!r}: {exc}", accepted) from None
    if not isinstance(value, list) or len(value) > MAX_SKILL_ARGS:
        raise BadArgument(f"args must be a list of strings, got {value!r}", accepted)
    if not all(isinstance(item, str | int | float) for item in value):
        raise BadArgument(f"args must be a list of strings, got {value!r}", accepted)
    return [str(item) for item in value]
