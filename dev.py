#!/usr/bin/env python3
"""One-step developer tasks: ``python dev.py demo | test | lint | docs | bench``.

Each task creates ``.venv`` when it is missing, installs troupe into it with
the versions pinned in ``requirements.lock``, then runs. Python 3.11+ and pip
are all it needs on any system. The browser tests (and the demo's navigator)
also use a system Chromium: on Debian and Ubuntu, run as root, this script
installs it with apt-get; elsewhere it says which command installs it. Tests
that need Chromium or PostgreSQL skip, saying what is missing, where they are
absent (in CI, where ``CI`` is set, they fail instead).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("TROUPE_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
LOCK = ROOT / "requirements.lock"
CHROMIUM = Path("/usr/bin/chromium")


def run(*cmd: str | Path, check: bool = True) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check).returncode


def install(extra: str) -> None:
    """Create the venv and install troupe (with ``extra``) at the locked versions."""
    if not (BIN / "python").exists():
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    digest = hashlib.sha256()
    for f in (ROOT / "pyproject.toml", LOCK):
        digest.update(f.read_bytes())
    stamp = VENV / f".troupe-installed-{extra or 'base'}"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    target = f".[{extra}]" if extra else "."
    run(BIN / "python", "-m", "pip", "install", "--quiet", "-c", LOCK, "-e", target)
    stamp.write_text(digest.hexdigest())


INSTALL_CHROMIUM = (
    ("apt-get", "sudo apt-get install chromium"),
    ("dnf", "sudo dnf install chromium"),
    ("pacman", "sudo pacman -S chromium"),
    ("zypper", "sudo zypper install chromium"),
    ("apk", "sudo apk add chromium"),
    ("brew", "brew install --cask chromium, then export "
     "TROUPE_CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium"),
)  # fmt: skip
"""Each package manager, and the command that installs Chromium with it."""


def _has_chromium() -> bool:
    configured = os.environ.get("TROUPE_CHROMIUM")
    if configured:
        return os.access(configured, os.X_OK)
    return CHROMIUM.exists() or bool(shutil.which("chromium") or shutil.which("chromium-browser"))


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def ensure_chromium(purpose: str) -> None:
    """Install Chromium for the navigator when it is missing: with apt-get as root
    (Debian, Ubuntu, CI); elsewhere say which command installs it."""
    if _has_chromium():
        return
    if shutil.which("apt-get") and _is_root():
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        try:
            subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
            subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
            return
        except subprocess.CalledProcessError as exc:
            print(f"apt-get could not install chromium (exit code {exc.returncode}).")
    how = next(
        (command for tool, command in INSTALL_CHROMIUM if shutil.which(tool)),
        "install Chromium and set TROUPE_CHROMIUM to its binary",
    )
    print(f"chromium is missing ({how}); {purpose}.", file=sys.stderr)


def main(argv: list[str]) -> int:
    task, rest = (argv[0], argv[1:]) if argv else ("help", [])
    if task == "demo":
        install("")
        ensure_chromium("without it the demo runs without the navigator")
        return run(BIN / "troupe", "demo", *rest, check=False)
    if task == "test":
        install("dev")
        ensure_chromium("the browser tests skip without it")
        return run(BIN / "pytest", *rest, check=False)
    if task == "lint":
        install("dev")
        codes = [
            run(BIN / "ruff", "check", "src", "tests", "bench", "dev.py", check=False),
            run(BIN / "ruff", "format", "--check", "src", "tests", "bench", "dev.py", check=False),
            run(BIN / "mypy", check=False),
            # The layer contract in pyproject.toml: packages import downward only.
            run(BIN / "lint-imports", "--no-cache", check=False),
        ]
        return max(codes)
    if task == "docs":
        install("dev")
        os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
        return run(BIN / "mkdocs", "build", "--strict", "--quiet", *rest, check=False)
    if task == "bench":
        install("dev")
        return run(BIN / "troupe", "bench", *rest, check=False)
    print(__doc__)
    return 0 if task == "help" else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
