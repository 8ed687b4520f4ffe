"""Assemble a :class:`Config` from a config file and command-line options."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .builtins import builtin_tools
from .builtins.operator import DEFAULT_TIMEOUT_S
from .builtins.shell_policy import DEFAULT_DENY_COMMANDS
from .config import Config, ConfigFile, ShellSection, merged_agent_options, read_config_file
from .remote import build_remote_agents
from .sessions import SESSION_STORE_ENV, default_session_store
from .tools import Tool

CONFIG_ENV = "TROUPE_CONFIG"
DATA_DIR_ENV = "TROUPE_DATA_DIR"
AUTH_TOKEN_ENV = "TROUPE_AUTH_TOKEN"


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
    session_store: str = ""
    """Session store URL; empty means ``sessions.db`` in ``data_dir``."""
    auth_token: str | None = None
    """Bearer token ``troupe serve`` requires on every route but health."""

    def __post_init__(self) -> None:
        if not self.session_store:
            self.session_store = default_session_store(self.data_dir)


def load_settings(
    *,
    config_path: str | Path | None = None,
    model: str | None = None,
    workspace: str | Path | None = None,
    topology: str | None = None,
    multi_agent: bool | None = None,
    data_dir: str | Path | None = None,
    session_store: str | None = None,
) -> Settings:
    """Merge a config file (``--config`` or TROUPE_CONFIG) with explicit options.

    Options given here win over the file; the file wins over defaults.
    TROUPE_SESSION_STORE and TROUPE_AUTH_TOKEN win over the file too.
    """
    path = config_path or os.environ.get(CONFIG_ENV)
    parsed = read_config_file(path) if path else None
    file_multi, file_rounds = merged_agent_options(parsed) if parsed else (None, None)
    ws = Path(workspace or (parsed.workspace if parsed and parsed.workspace else os.getcwd()))
    ws = ws.expanduser().resolve()
    use_builtins = parsed.builtin_tools if parsed else True
    data = _data_dir(data_dir, parsed.data_dir if parsed else None, path)
    config = Config(
        tools=_builtins(ws, data, parsed) if use_builtins else [],
        model=model or (parsed.model if parsed else None),
        api_base=parsed.api_base if parsed else None,
        system_prompt=parsed.system_prompt if parsed else None,
        multi_agent=multi_agent
        if multi_agent is not None
        else (file_multi if file_multi is not None else True),
        max_delegation_rounds=file_rounds or 0,
        topology=topology or (parsed.topology if parsed and parsed.topology else "default"),
        remote_agents=build_remote_agents(parsed.remote_agents) if parsed else (),
        mcp_servers=[entry.to_server() for entry in parsed.mcp_servers] if parsed else (),
        session_store=session_store
        or os.environ.get(SESSION_STORE_ENV)
        or (parsed.session_store if parsed else None),
        **_runtime_options(parsed),
    )
    return Settings(
        config=config,
        data_dir=data,
        workspace=ws,
        session_store=config.session_store or "",
        auth_token=os.environ.get(AUTH_TOKEN_ENV) or (parsed.auth_token if parsed else None),
    )


def _data_dir(
    option: str | Path | None, from_file: str | None, config_path: str | Path | None
) -> Path:
    """--data-dir, else the config file's data_dir (relative to the file), else the default."""
    if option:
        return Path(option).expanduser()
    if from_file:
        chosen = Path(from_file).expanduser()
        if not chosen.is_absolute() and config_path:
            chosen = Path(config_path).parent / chosen
        return chosen
    return default_data_dir()


def load_config(path: str | Path, *, workspace: str | Path | None = None) -> Config:
    """A :class:`Config` from a YAML config file (built-in tools bound to ``workspace``).

    Accepts the spec's keys ``agent.multiAgent`` and ``agent.maxDelegationRounds``
    as well as ``multi_agent`` and ``max_delegation_rounds``.
    """
    return load_settings(config_path=path, workspace=workspace).config


def _builtins(workspace: Path, data_dir: Path, parsed: ConfigFile | None) -> list[Tool]:
    """The built-in tools, with the file's ``shell`` section applied."""
    shell = parsed.shell if parsed is not None else ShellSection()
    return builtin_tools(
        workspace=workspace,
        data_dir=data_dir,
        deny_commands=[*DEFAULT_DENY_COMMANDS, *shell.deny_commands],
        pass_env=shell.pass_env,
        shell_timeout_s=shell.timeout_s or DEFAULT_TIMEOUT_S,
    )


def _runtime_options(parsed: ConfigFile | None) -> dict[str, Any]:
    """Config fields a file may set that have defaults of their own in Config."""
    if parsed is None:
        return {}
    keys = ("fallback_model", "model_retries", "turn_timeout_s", "transfer_repair", "guards")
    options = {key: getattr(parsed, key) for key in keys if getattr(parsed, key) is not None}
    options["router"] = parsed.router.mode
    options["router_threshold"] = parsed.router.threshold
    return options
