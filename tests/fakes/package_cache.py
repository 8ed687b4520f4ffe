"""Third-party packages the interop tests install from the registries, once, into a cache.

The cache lives in ``.cache/test-packages`` at the top of the repository
(git ignores it), so the first run downloads and later runs reuse it. A
failed install fails the test with the installer's last lines: the tests
need the package registries (PyPI, npm), as CI has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "test-packages"
"""Where installed third-party packages are kept between runs."""
INSTALL_TIMEOUT = 100
"""Seconds an install may take: under the suite's per-test limit (120 s in
pyproject.toml), so a registry that never answers fails with this module's
message, not with the limit's stack dump."""


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None) -> None:
    try:
        result = subprocess.run(
            cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"could not install {what} ({' '.join(cmd)}): no answer within "
            f"{INSTALL_TIMEOUT} s. Check that the package registry is reachable "
            "(a proxy, or for npm behind a TLS-inspecting proxy NODE_EXTRA_CA_CERTS), "
            "then run the tests again; a finished install is kept in .cache/test-packages."
        )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        pytest.fail(f"could not install {what} ({' '.join(cmd)}):\n{tail}")


def python_venv(name: str, requirement: str) -> Path:
    """The Python of a virtual environment holding ``requirement`` (created on first use)."""
    home = CACHE / name
    python = home / "bin" / "python"
    ready = home / ".installed"
    if ready.is_file() and ready.read_text(encoding="utf-8") == requirement and python.exists():
        return python
    shutil.rmtree(home, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(home)], f"a virtual environment at {home}")
    _run([str(python), "-m", "pip", "install", "-q", requirement], requirement)
    ready.write_text(requirement, encoding="utf-8")
    return python


def npm_package(package: str, bin_name: str) -> Path:
    """The executable ``bin_name`` of an npm ``package`` installed into the cache.

    Skips the test (with the reason) when node or npm is not installed.
    """
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip(f"node or npm is not on PATH; both are needed to install {package} from npm")
    home = CACHE / "npm"
    binary = home / "node_modules" / ".bin" / bin_name
    if not binary.exists():
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
        _run([npm, "install", "--prefix", str(home), "--no-audit", package], package, env=env)
    return binary
