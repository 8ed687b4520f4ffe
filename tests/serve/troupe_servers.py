"""Helpers for the serving tests: ``troupe serve`` processes on free 127.0.0.1 ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

START_TIMEOUT = 90.0


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """One ``troupe serve`` process."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    env: dict[str, str] = field(repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Block until /healthz answers; fail with the server's output otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"troupe serve exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        pytest.fail(f"troupe serve did not start within {timeout}s:\n{self.output()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


TEST_VAULT_KEY = "5e" * 32
"""The vault key of every test replica on PostgreSQL (the test database keeps its seal)."""


def troupe_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for a troupe subprocess: offline, isolated data, no config."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TROUPE_CONFIG", "TROUPE_AUTH_TOKEN", "TROUPE_SESSION_STORE")
    }
    env.update(
        TROUPE_DATA_DIR=str(data_dir),
        TROUPE_MODEL="offline",
        PYTHONUNBUFFERED="1",
        ADK_SUPPRESS_A2A_EXPERIMENTAL_FEATURE_WARNINGS="1",
    )
    env.update(extra)
    if env.get("TROUPE_SESSION_STORE", "").startswith("postgres"):
        # Replicas on one database share the vault, so they share its key.
        env.setdefault("TROUPE_SECRET_KEY", TEST_VAULT_KEY)
    return env


class ServerFactory:
    """Starts servers and remembers them so the fixture can stop them."""

    def __init__(self, tmp_path: Path) -> None:
        self._tmp = tmp_path
        self._started: list[ServerProcess] = []

    def start(
        self,
        *args: str,
        data_dir: Path | None = None,
        port: int | None = None,
        env: dict[str, str] | None = None,
        wait: bool = True,
    ) -> ServerProcess:
        """``python -m troupe serve ARGS`` on a free port (or ``port``)."""
        port = port or free_port()
        data_dir = data_dir or self._tmp / f"data-{port}"
        log = self._tmp / f"server-{port}-{len(self._started)}.log"
        full_env = troupe_env(data_dir, **(env or {}))
        cmd = [sys.executable, "-m", "troupe", "serve", "--port", str(port), *args]
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, env=full_env, stdout=out, stderr=subprocess.STDOUT)
        server = ServerProcess(proc, port, log, full_env)
        self._started.append(server)
        if wait:
            server.wait_ready()
        return server

    def stop_all(self) -> None:
        for server in self._started:
            server.stop()


@contextmanager
def serving_operator(root: Path, workspace: Path, token: str) -> Iterator[ServerProcess]:
    """A troupe serving its operator over A2A on ``workspace``, behind ``token``.

    For module-scoped fixtures: one server that several tests only read from.
    """
    factory = ServerFactory(root)
    try:
        yield factory.start(
            "--a2a", "--agent", "operator", "--workspace", str(workspace),
            env={"TROUPE_AUTH_TOKEN": token},
        )  # fmt: skip
    finally:
        factory.stop_all()


def run_body(session_id: str, text: str, user_id: str = "u") -> dict[str, object]:
    """The JSON of a ``/run`` request sending ``text`` on ``session_id`` of app troupe."""
    return {
        "app_name": "troupe",
        "user_id": user_id,
        "session_id": session_id,
        "new_message": {"role": "user", "parts": [{"text": text}]},
    }
