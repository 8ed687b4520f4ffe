"""Which shell commands exec_shell refuses outright, and which need no approval.

Two lists guard ``exec_shell``:

* the **deny list**: regular expressions for commands that are refused
  before anyone is asked (wiping the disk, formatting it, powering off, a
  fork bomb). It is a guard rail against accidents, not a sandbox: a
  determined command can always be spelled another way, which is why every
  other command still goes through approval.
* the **read-only allow list**: a few commands that only look (``uname``,
  ``ls``, ``cat`` ...). Without shell operators, and with paths that
  stay inside the workspace, they run without asking, so a non-interactive
  ``troupe chat "run \\`uname -a\\`"`` works under the default ``deny`` policy.

No ``git`` command is on the allow list: git reads the repository's own
configuration, which lives in the workspace and so is the attacker's
(``core.fsmonitor``, ``diff.external``, ``diff.*.textconv``, ``filter.*``,
``gpg.program``, ``include.path`` ... all name programs git runs). No
environment variable makes git skip ``.git/config``, and a list of keys to
override is a deny list that misses the next one, so every git command asks.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError

DEFAULT_DENY_COMMANDS: tuple[str, ...] = (
    # rm aimed at the root, everything under it, or the home directory.
    r"^rm\s(?:.*\s)?(?:/|/\*|~/?|\$HOME/?|\$\{HOME\}/?)(?:\s|$)",
    r"^(?:chmod|chown)\s+(?:.*\s)?-[a-zA-Z]*R[a-zA-Z]*\s+(?:.*\s)?/(?:\s|$)",
    r"^mkfs(?:\.\w+)?(?:\s|$)",
    r"^(?:wipefs|fdisk|sfdisk|parted|mkswap)(?:\s|$)",
    r"^(?:shutdown|reboot|halt|poweroff)(?:\s|$)",
    r"^systemctl\s+(?:.*\s)?(?:poweroff|reboot|halt|kexec)(?:\s|$)",
    r"^(?:init|telinit)\s+[06](?:\s|$)",
    # dd writing to a device, and redirections onto a disk.
    r"^dd\s(?:.*\s)?of=/dev/",
    r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)",
    # The classic fork bomb, with or without spaces.
    r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
)
"""Regular expressions searched in each simple command of a command line (and
in the whole line); ``^`` anchors at the command's first word after ``sudo``,
``env`` and similar prefixes."""

READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {"uname", "ls", "pwd", "whoami", "date", "cat", "echo", "head", "tail", "wc"}
)
"""Commands that run without approval when they only look (see :func:`is_read_only`)."""

_SEGMENT_SPLIT = re.compile(r"\|\||&&|[;&|\n]|\$\(|`|\(|\)|\{|\}")
_PREFIX = re.compile(
    r"^(?:sudo(?:\s+-\S+)*|doas|nohup|time|exec|command|builtin|nice(?:\s+-n\s*-?\d+)?"
    r"|env(?:\s+-\S+)*|\w+=\S*)\s+"
)
# Anything that chains, redirects, substitutes or escapes makes a command more
# than a look, so it is never read-only.
_SHELL_OPERATORS = set(";&|<>`$()\\\n{}")
_WRITING_OPTIONS = ("--output", "-o", "--ext-diff", "--exec", "-s", "--set", "-f", "--follow")


MAX_CHECKED_CHARS = 100_000
"""The longest command line (or skill script) matched against the deny list; a
longer one is refused unread."""
DENY_CHECK_TIMEOUT_S = 5.0
"""The most time one deny-list check may take, off the event loop, before the
command is refused (RE2 matches in linear time, so a check never comes close)."""
_RE2_MAX_MEM = 8 << 20
"""Memory one pattern's automaton may use (RE2 refuses a pattern that needs more)."""


class DenyPattern:
    """One deny-list pattern, compiled by RE2: matching takes time linear in the text.

    Python's ``re`` backtracks, so a pattern such as ``^(a|aa)+$`` against a
    61-character command takes longer than the universe; RE2 has no
    backtracking (and so no backreferences or lookarounds) and answers at once.
    """

    def __init__(self, pattern: str) -> None:
        import re2

        options = re2.Options()
        options.max_mem = _RE2_MAX_MEM
        options.log_errors = False  # a bad pattern is our ConfigError, not a line on stderr
        self.pattern = pattern
        self._compiled = re2.compile(pattern, options)

    def search(self, text: str) -> bool:
        """True when the pattern occurs in ``text``."""
        return self._compiled.search(text) is not None


def compile_deny_list(patterns: Sequence[str]) -> list[DenyPattern]:
    """Compile deny-list patterns with RE2; a bad one raises ConfigError naming it."""
    import re2

    if isinstance(patterns, str):
        raise ConfigError(
            f"deny_commands must be a list of regular expressions, not the string {patterns!r}; "
            "wrap it in a list."
        )
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(DenyPattern(pattern))
        except (re2.error, TypeError) as exc:
            said = exc.args[0] if exc.args else exc
            said = said.decode(errors="replace") if isinstance(said, bytes) else str(said)
            raise ConfigError(
                f"deny_commands entry {pattern!r} is not a regular expression RE2 accepts "
                f"({said}); RE2 has no backreferences or lookarounds, so write it without "
                r"them, e.g. '^mkfs(\s|$)'."
            ) from None
    return compiled


def simple_commands(command: str) -> list[str]:
    """The simple commands of a command line, without sudo/env-style prefixes."""
    out = []
    for raw in _SEGMENT_SPLIT.split(command):
        segment = " ".join(raw.split())
        while True:
            stripped = _PREFIX.sub("", segment, count=1)
            if stripped == segment:
                break
            segment = stripped
        if segment.startswith("\\"):
            segment = segment[1:]
        first, _, rest = segment.partition(" ")
        if "/" in first:
            # /bin/rm and ./rm name the same command as rm.
            first = first.rsplit("/", 1)[1]
        segment = f"{first} {rest}".strip()
        if segment:
            out.append(segment)
    return out


GIT_NOTE = " (git also runs any program the workspace's .git/config names)"
"""Added to the approval request of a command that runs git."""


def runs_git(command: str) -> bool:
    """True when one of ``command``'s simple commands is ``git``."""
    return any(part.split()[0] == "git" for part in simple_commands(command))


def denied_by(command: str, deny_list: Sequence[DenyPattern]) -> str | None:
    """The deny-list pattern ``command`` matches, else None (see :func:`deny_reason`)."""
    line = " ".join(command.split())
    parts = simple_commands(command)
    for pattern in deny_list:
        if pattern.search(line) or any(pattern.search(part) for part in parts):
            return pattern.pattern
    return None


async def deny_reason(command: str, deny_list: Sequence[DenyPattern]) -> str | None:
    """Why ``command`` is refused before anyone is asked, else None.

    The check runs in a worker thread, bounded by :data:`DENY_CHECK_TIMEOUT_S`
    (the event loop, and every other session on it, never waits on a pattern);
    a check that takes longer refuses the command."""
    if len(command) > MAX_CHECKED_CHARS:
        return f"is longer than the {MAX_CHECKED_CHARS} characters the deny list checks"
    try:
        rule = await asyncio.wait_for(
            asyncio.to_thread(denied_by, command, deny_list), DENY_CHECK_TIMEOUT_S
        )
    except TimeoutError:
        return f"could not be checked against the deny list within {DENY_CHECK_TIMEOUT_S:g} s"
    return None if rule is None else f"matches the deny-list pattern `{rule}`"


def _inside(arg: str, root: Path) -> bool:
    try:
        candidate = Path(arg).expanduser()
    except (RuntimeError, KeyError):
        return False  # ~nosuchuser: the shell's to read, so the command asks first
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    return resolved == root or root in resolved.parents


def is_read_only(command: str, workspace_root: Path) -> bool:
    """True when ``command`` is one allow-listed command that only looks.

    It must use no shell operators, no secret references, no option that
    writes or follows, and every path it names must lie inside the workspace.
    """
    if not isinstance(command, str) or "{{" in command:
        return False
    if any(ch in _SHELL_OPERATORS for ch in command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return False
    name, args = words[0], words[1:]
    if name not in READ_ONLY_COMMANDS:
        return False
    for arg in args:
        if arg.startswith("-"):
            if arg.split("=", 1)[0] in _WRITING_OPTIONS:
                return False
            continue
        if name in ("echo", "date"):
            continue
        if not _inside(arg, workspace_root):
            return False
    return True
