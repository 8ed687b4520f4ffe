"""SIGTERM drains: a turn in flight finishes and is stored, then the server exits cleanly."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from troupe_servers import ServerFactory, run_body

from fakes.openai_server import serve, slow, text_reply

pytestmark = pytest.mark.serve


def test_sigterm_lets_the_turn_in_flight_finish_then_stops(
    servers: ServerFactory, tmp_path: Path
) -> None:
    with serve([slow(3.0, text_reply("Finished after the stop was asked."))]) as fake:
        server = servers.start(
            env={"TROUPE_MODEL": "openai/slow-model", "TROUPE_API_BASE": fake.api_base},
        )
        httpx.post(f"{server.url}/apps/troupe/users/u/sessions/s1", json={}).raise_for_status()
        answer: dict[str, httpx.Response] = {}

        def send() -> None:
            answer["run"] = httpx.post(
                f"{server.url}/run", json=run_body("s1", "take your time"), timeout=60
            )

        sender = threading.Thread(target=send)
        sender.start()
        deadline = time.monotonic() + 30
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.05)  # the turn has reached the model
        assert fake.requests, server.output()
        server.proc.send_signal(signal.SIGTERM)
        sender.join(timeout=60)

        # uvicorn re-raises the signal once it has shut down: exit by SIGTERM, or 0.
        assert server.proc.wait(timeout=30) in (0, -signal.SIGTERM), server.output()
    reply = answer["run"]
    assert reply.status_code == 200
    texts = [p.get("text") for e in reply.json() for p in e["content"]["parts"]]
    assert "Finished after the stop was asked." in texts
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/healthz", timeout=2)
