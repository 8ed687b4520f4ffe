#!/usr/bin/env python3
"""One-step developer tasks: ``python dev.py demo | test | lint | docs | bench``.

Each task creates ``.venv`` when it is missing, installs troupe into it with
the versions pinned in ``requirements.lock``, then runs. Only Python and pip
are needed; the browser tests also need Debian's ``chromium``, which this
script installs with apt-get when it runs as root (for the demo too, whose
navigator reads a local page).
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


def ensure_chromium(purpose: str) -> None:
    """Install Debian's chromium for the navigator when it is missing (as root, with apt)."""
    if CHROMIUM.exists() or shutil.which("chromium"):
        return
    if shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        try:
            subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
            subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
            return
        except subprocess.CalledProcessError as exc:
            print(f"apt-get could not install chromium (exit code {exc.returncode}).")
    print(
        f"chromium is missing: install it (Debian: sudo apt-get install chromium); {purpose}.",
        file=sys.stderr,
    )


def main(argv: list[str]) -> int:
    task, rest = (argv[0], argv[1:]) if argv else ("help", [])
    if task == "demo":
        install("")
        ensure_chromium("without it the demo runs without the navigator")
        return run(BIN / "troupe", "demo", *rest, check=False)
    if task == "test":
        install("dev")
        ensure_chromium("the browser tests need it")
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
