"""The environment of a command troupe starts, built from scratch.

Nothing of troupe's own environment reaches a command unless the
``shell.pass_env`` list names it: not the model keys troupe runs with, not
its vault key, not ``PYTHONPATH`` or ``LD_PRELOAD`` of the parent. The model
may add variables through a tool's ``env`` argument, but never one that a
loader, an interpreter or git reads as code or configuration.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""``PATH`` inside the jail: the system directories, nothing from the user's home."""
JAIL_HOME = "/tmp"
"""``HOME`` inside the jail: the private ``/tmp`` (a fresh tmpfs per command)."""
DEFAULT_LANG = "C.UTF-8"

HOOK_PREFIXES = (
    "LD_", "GIT_", "PYTHON", "DYLD_", "BASH_FUNC_", "MALLOC_", "PERL", "RUBY", "NODE_",
    "JAVA_", "_JAVA_", "LUA_", "GCONV_", "NPM_CONFIG_", "PIP_", "UV_", "SSH_", "GNUPG",
)  # fmt: skip
HOOK_NAMES = frozenset(
    {
        "BASH_ENV", "ENV", "IFS", "PS4", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "CDPATH",
        "PATH", "HOME", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "TMPDIR",
        "PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "MANPAGER", "GIT_ASKPASS",
        "SSH_ASKPASS", "SUDO_ASKPASS", "TZDIR", "OPENSSL_CONF", "OPENSSL_MODULES",
    }
)  # fmt: skip
"""Variables a command reads as code, a path to code, or configuration that runs
code (``LD_PRELOAD``, ``GIT_CONFIG_*``, ``PYTHONSTARTUP``, ``BASH_ENV`` ...). The
model can never set them; this is a fixed rule on the argument's keys, not a
filter over command text."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def is_hook_variable(name: str) -> bool:
    """True when ``name`` is a loader, interpreter or tool hook (see :data:`HOOK_NAMES`)."""
    upper = name.upper()
    return upper in HOOK_NAMES or upper.startswith(HOOK_PREFIXES)


def command_env(
    extra: Mapping[str, str] = {},
    pass_env: Collection[str] = (),
    parent: Mapping[str, str] = {},
) -> dict[str, str]:
    """A command's whole environment: PATH, HOME, LANG, ``pass_env`` names, then ``extra``.

    ``parent`` is troupe's own environment (the snapshot :class:`troupe.settings.Settings`
    took): only its LANG and the ``pass_env`` names are looked up in it.
    ``extra`` (the tool call's checked ``env``) cannot replace PATH or HOME:
    :func:`is_hook_variable` names are refused before this is called.
    """
    lang = parent.get("LANG", "")
    env = {
        "PATH": BASE_PATH,
        "HOME": JAIL_HOME,
        "LANG": lang if re.fullmatch(r"[A-Za-z0-9_.@-]{1,64}", lang) else DEFAULT_LANG,
    }
    for name in pass_env:
        if name in parent and _NAME.match(name):
            env[name] = parent[name]
    env.update(extra)
    return env
