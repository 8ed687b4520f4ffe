"""Command-line options shared by the ``troupe`` commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="YAML config file (or TROUPE_CONFIG).")
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", "-m", help="offline, gemini-2.5-flash, openai/gpt-4o-mini, ..."),
]
WorkspaceOpt = Annotated[
    Path | None, typer.Option("--workspace", "-w", help="Directory file and shell tools use.")
]
TopologyOpt = Annotated[
    str | None, typer.Option("--topology", "-t", help="default, classic or a YAML file.")
]
SingleOpt = Annotated[
    bool, typer.Option("--single-agent", help="One agent with every tool, no orchestrator.")
]
DataDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", help="troupe's data directory: sessions, stores, traces (TROUPE_DATA_DIR)."
    ),
]
ApiBaseOpt = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        help="Base URL of an OpenAI-compatible server (llama.cpp, vLLM, LM Studio) or Ollama; "
        "use with --model openai/NAME.",
    ),
]
RouterOpt = Annotated[
    str | None,
    typer.Option(
        "--router",
        help="auto: confident requests go straight to their agent; off: the orchestrator's "
        "model decides every one (default: the config file's, else auto).",
    ),
]


def _retired_trust_flag(value: bool) -> bool:
    if value:
        raise typer.BadParameter(
            "it trusted a config file whatever the file held, so a tool or command that "
            "rewrote the file was trusted too; run `troupe trust FILE` once instead (it "
            "records the file's digest; a change then needs your trust again)"
        )
    return value


TrustOpt = Annotated[
    bool,
    typer.Option(
        "--trust-workspace-config",
        hidden=True,
        callback=_retired_trust_flag,
        help="Retired: `troupe trust FILE` trusts a config file.",
    ),
]

ListJsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON array instead of a table.")
]
"""``--json`` of the listing commands (sessions, traces, secrets)."""


def resolved_data_dir(config: Path | None, data_dir: Path | None) -> Path:
    """The data directory every command uses: --data-dir > TROUPE_DATA_DIR > file > default."""
    from ..settings import load_settings

    return load_settings(config_path=config, data_dir=data_dir).data_dir
