"""Assemble a :class:`Config` from a config file and command-line options."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .builtins import builtin_tools
from .config import Config, merged_agent_options, read_config_file

CONFIG_ENV = "TROUPE_CONFIG"
DATA_DIR_ENV = "TROUPE_DATA_DIR"


def default_data_dir() -> Path:
    """TROUPE_DATA_DIR, else $XDG_DATA_HOME/troupe, else ~/.local/share/troupe."""
    if env := os.environ.get(DATA_DIR_ENV):
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "troupe"


@dataclass
class Settings:
    """A Config plus the settings around it (where data lives)."""

    config: Config
    data_dir: Path
    workspace: Path


def load_settings(
    *,
    config_path: str | Path | None = None,
    model: str | None = None,
    workspace: str | Path | None = None,
    topology: str | None = None,
    multi_agent: bool | None = None,
    data_dir: str | Path | None = None,
) -> Settings:
    """Merge a config file (``--config`` or TROUPE_CONFIG) with explicit options.

    Options given here win over the file; the file wins over defaults.
    """
    path = config_path or os.environ.get(CONFIG_ENV)
    parsed = read_config_file(path) if path else None
    file_multi, file_rounds = merged_agent_options(parsed) if parsed else (None, None)
    ws = Path(workspace or (parsed.workspace if parsed and parsed.workspace else os.getcwd()))
    ws = ws.expanduser().resolve()
    use_builtins = parsed.builtin_tools if parsed else True
    config = Config(
        tools=builtin_tools(workspace=ws) if use_builtins else [],
        model=model or (parsed.model if parsed else None),
        api_base=parsed.api_base if parsed else None,
        system_prompt=parsed.system_prompt if parsed else None,
        multi_agent=multi_agent
        if multi_agent is not None
        else (file_multi if file_multi is not None else True),
        max_delegation_rounds=file_rounds or 0,
        topology=topology or (parsed.topology if parsed and parsed.topology else "default"),
    )
    return Settings(
        config=config,
        data_dir=Path(data_dir).expanduser() if data_dir else default_data_dir(),
        workspace=ws,
    )
