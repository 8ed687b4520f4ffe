"""How the navigator's Chromium runs: never as root, never with a capability.

Playwright starts Chromium itself, so troupe hands it a small launcher script
instead of the binary; the script starts Chromium confined:

* where the jail is active, inside it (:mod:`troupe.sandbox.jail`): its own
  user namespace as an unprivileged uid with every capability dropped, the
  system directories read-only, a private ``/tmp`` for the profile, no home
  directory, no workspace, no troupe data directory and none of troupe's
  environment (only ``PATH``, ``HOME`` and ``LANG``). It shares the network,
  to reach troupe's egress proxy on the loopback (every page request goes
  through that proxy and troupe's checks). Chromium's own sandbox cannot nest
  in the jail (no user namespace may be made there), so it runs with
  ``--no-sandbox`` as a jailed, unprivileged process;
* where the jail is not active and troupe is root, as the unprivileged uid
  ``nobody`` (``setpriv``, every capability and the bounding set dropped),
  with a profile of its own that uid owns, and Chromium's own sandbox on
  where this machine allows it;
* otherwise as troupe's own (unprivileged) user, with Chromium's own sandbox
  on where this machine allows it.

The profile and scope rules (one context per conversation) are the
browser session's, unchanged.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import jail
from .jail import NOBODY, _resolver_mounts, _system_mounts, _unprivileged, probe, works_as

BROWSER_TMP_MB = 1024
"""What the jailed browser's ``/tmp`` (its profile, caches) and ``/dev/shm`` may hold, MiB."""
PROFILE = "/tmp/troupe-browser-profile"
"""The profile folder inside the jail (Playwright's own path is on the host)."""
_KEPT_ENV = ("LANG", "LC_ALL", "TZ")
FONT_CACHE = "/var/cache/fontconfig"
_SETPRIV = next(
    (name for name in ("/usr/bin/setpriv", "/bin/setpriv") if Path(name).is_file()), None
)


@dataclass
class BrowserLaunch:
    """What Playwright is given to start Chromium confined, and how it is confined."""

    executable: str
    """The launcher script (or Chromium itself) for ``executable_path``."""
    env: dict[str, str]
    """The environment Chromium starts with (none of troupe's keys)."""
    how: str
    """``jail``, ``nobody`` or ``user``: where Chromium runs."""
    own_sandbox: bool
    """True when Chromium's own sandbox should be on (outside the jail)."""
    folder: Path | None = None
    """The folder holding the launcher (and the profile, for ``nobody``); removed by
    :meth:`close`."""
    args: list[str] = field(default_factory=list)
    """Flags to add to Chromium's command line."""

    def describe(self) -> str:
        """One line for ``troupe tree``."""
        return describe(self.how)

    def without_own_sandbox(self) -> BrowserLaunch:
        """This launch with Chromium's own sandbox off (it could not start here)."""
        return BrowserLaunch(self.executable, self.env, self.how, False, self.folder, self.args)

    def close(self) -> None:
        """Remove the launcher's folder."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


_SAID = {
    "jail": "browser: Chromium runs in the jail (no capability, no home, no data directory, "
    "no workspace, none of troupe's environment)",
    "nobody": f"browser: Chromium runs as the unprivileged uid {NOBODY} with no capability, "
    "its own sandbox on where this machine allows it (the jail is not active)",
    "user": "browser: Chromium runs as troupe's user, its own sandbox on where this machine "
    "allows it (the jail is not active)",
}


def confinement() -> str:
    """Where Chromium runs on this machine: ``jail``, ``nobody`` or ``user``."""
    bwrap = jail.bundled_bwrap()  # looked up on use: tests simulate a machine without it
    if bwrap is not None and probe(bwrap).active:
        return "jail"
    return "nobody" if os.geteuid() == 0 else "user"


def describe(how: str) -> str:
    """One line saying where Chromium runs (``how`` as :func:`confinement` says)."""
    return _SAID[how]


def confined_chromium(chromium: str, environ: dict[str, str] | None = None) -> BrowserLaunch:
    """How to start ``chromium`` confined on this machine (see the module).

    ``environ`` is where ``LANG`` and the like are taken from (default: none).

    Raises:
        RuntimeError: troupe is root, the jail is not active and ``setpriv`` is
            missing, so Chromium could only run as root.
    """
    source = environ or {}
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        **{k: source[k] for k in _KEPT_ENV if k in source},
    }
    how = confinement()
    bwrap = jail.bundled_bwrap()  # looked up on use: tests simulate a machine without it
    if how == "jail" and bwrap is not None:
        folder = Path(tempfile.mkdtemp(prefix="troupe-browser-"))
        env["HOME"] = "/tmp/home"
        # As root the jail itself is started as nobody where it can be, so that not
        # even the kernel's view of Chromium's uid is root.
        argv = _as_nobody() if os.geteuid() == 0 and works_as(bwrap, NOBODY) else []
        argv += [bwrap, *_unprivileged(bwrap), "--die-with-parent", "--new-session"]
        argv += ["--share-net", *_resolver_mounts(), *_system_mounts(BROWSER_TMP_MB)]
        if Path(FONT_CACHE).is_dir():
            argv += ["--ro-bind", FONT_CACHE, FONT_CACHE]
        argv += ["--clearenv", *_setenv(env), "--chdir", "/tmp", "--", chromium]
        script = _launcher(folder, argv, profile=PROFILE)
        return BrowserLaunch(script, env, "jail", False, folder, ["--disable-dev-shm-usage"])
    if how == "nobody":
        if _SETPRIV is None:
            raise RuntimeError(
                "troupe runs as root and the jail is not active, and setpriv (util-linux) is "
                "missing, so Chromium could only run as root; install util-linux or run "
                "troupe as a normal user"
            )
        folder = Path(tempfile.mkdtemp(prefix="troupe-browser-"))
        folder.chmod(0o711)
        profile = folder / "profile"
        profile.mkdir(mode=0o700)
        os.chown(profile, NOBODY, NOBODY)
        env["HOME"] = str(profile)
        argv = [*_as_nobody(), chromium]
        script = _launcher(folder, argv, profile=str(profile))
        return BrowserLaunch(script, env, "nobody", True, folder)
    env["HOME"] = os.environ.get("HOME", "/tmp")
    return BrowserLaunch(chromium, env, "user", True)


def _as_nobody() -> list[str]:
    """``setpriv`` arguments that run the rest as nobody with no capability at all."""
    if _SETPRIV is None:
        return []
    return [
        _SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def _setenv(env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for name, value in env.items():
        out += ["--setenv", name, value]
    return out


def _launcher(folder: Path, argv: list[str], *, profile: str) -> str:
    """A script in ``folder`` that runs ``argv`` plus Chromium's own arguments, with
    Playwright's ``--user-data-dir`` (a host path) swapped for ``profile``."""
    script = folder / "chromium"
    body = (
        "#!/bin/sh\n"
        "# troupe's launcher: Chromium confined (see troupe.sandbox.browser).\n"
        "for arg do\n"
        "  shift\n"
        '  case "$arg" in\n'
        f'    --user-data-dir=*) set -- "$@" {shlex.quote("--user-data-dir=" + profile)} ;;\n'
        '    *) set -- "$@" "$arg" ;;\n'
        "  esac\n"
        "done\n"
        f'exec {shlex.join(argv)} "$@"\n'
    )
    script.write_text(body, encoding="utf-8")
    script.chmod(0o700)
    with contextlib.suppress(OSError):
        folder.chmod(folder.stat().st_mode | 0o100)
    return str(script)
