"""A compound request sent over A2A to the whole team is carried out step by
step, and the reply reports every step. Step 3 stores a secret, which needs a
person's approval: the task stops in ``input-required`` with the question, and
the client's "yes" on the same task lets the step run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from troupe_servers import ServerFactory

CLIENT = Path(__file__).parent / "a2a_clients" / "client_v1.py"
TOKEN = "plan-token"
THREE_STEPS = "Read config.yaml, encrypt the database password in it and store it as a secret."


def test_a2a_client_gets_every_step_of_a_compound_request(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "config.yaml").write_text("db_password: hunter2\n", encoding="utf-8")
    factory = ServerFactory(tmp_path)
    try:
        server = factory.start(
            "--a2a", "--workspace", str(workspace),
            env={"TROUPE_AUTH_TOKEN": TOKEN, "TROUPE_ROUTER": "auto"},
        )  # fmt: skip
        card = f"{server.url}/a2a/.well-known/agent-card.json"
        result = subprocess.run(
            [sys.executable, str(CLIENT), card, THREE_STEPS, TOKEN, "--approve"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        factory.stop_all()

    assert result.returncode == 0, result.stderr[-3000:]
    reply = json.loads(result.stdout.strip().splitlines()[-1])
    answer = "\n".join(reply["texts"])
    assert "1. Read config.yaml (operator): Result of fs_read" in answer, reply
    assert "2. encrypt the database password in it (vault)" in answer
    assert "3. store it as a secret (vault): Result of secrets_set" in answer
    [asked] = reply["asked"]
    step = asked["args"]["toolConfirmation"]["payload"]["step"]
    assert (step["agent"], step["tool"]) == ("vault", "secrets_set")
    assert step["args"]["name"] == "database_password"
