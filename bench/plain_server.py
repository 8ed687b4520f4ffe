"""The load benchmark's baseline: the same team served by plain ADK, without troupe.

Serves ADK's own FastAPI app (``get_fast_api_app``, as ``adk api_server``
does) on 127.0.0.1 with the agents troupe would build, by hand on plain
``LlmAgent`` (``plain_adk_tree``): the same names, instructions, built-in
tools on the same kind of workspace and the same offline model, and nothing
of troupe's runtime (no router, no plugins, no guards, no session lock).
As in troupe's tree, every turn starts at the orchestrator, whose model
routes it (troupe's router decides most turns without that model call).
Sessions go to ADK's SQLite session service, as troupe's default does.

    python bench/plain_server.py --port 8123 --workspace WS --data-dir DATA

Used by ``bench/load.py``; it is not part of troupe.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from google.adk.agents.base_agent import BaseAgent
from google.adk.cli.fast_api import get_fast_api_app
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader

from troupe import OfflineModel, builtin_tools
from troupe_bench.plain import plain_adk_tree

APP = "troupe"


class _OneAgent(BaseAgentLoader):
    """ADK's loader interface over one agent, under the app name the load uses."""

    def __init__(self, root: BaseAgent) -> None:
        self._root = root

    def load_agent(self, agent_name: str) -> BaseAgent:
        if agent_name != APP:
            raise ValueError(f"no app named {agent_name!r}")
        return self._root

    def list_agents(self) -> list[str]:
        return [APP]


def build(workspace: Path, data_dir: Path) -> FastAPI:
    """ADK's app over the plain team; ``/readyz`` answers once it is built."""
    data_dir.mkdir(parents=True, exist_ok=True)
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)
    # Every turn starts at the orchestrator, as in troupe's tree: the same work.
    root = plain_adk_tree(tools, OfflineModel(), each_turn_from_the_root=True)
    app = get_fast_api_app(
        agents_dir=str(data_dir),
        agent_loader=_OneAgent(root),
        session_service_uri=f"sqlite:///{(data_dir / 'sessions.db').as_posix()}",
        web=False,
        use_local_storage=False,
    )

    @app.get("/readyz")
    def readyz() -> dict[str, str]:
        return {"status": "ready"}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args()
    app = build(args.workspace, args.data_dir)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
