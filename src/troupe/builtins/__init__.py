"""troupe's built-in tools, one module per role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..environment import process_environ
from ..errors import ConfigError
from ..sandbox.private import guarded_files, protected_paths
from ..stores.knowledge import KnowledgeStore
from ..stores.memory import MemoryStore
from ..stores.postgres import Postgres
from ..stores.sqlite import StoreError, resolve_data_dir
from ..stores.vault import SecretStore, VaultError
from ..stores.vault_key import shared_key_configured, shared_key_missing
from ..tools import Tool
from ._limits import DEFAULT_LIMITS, CommandLimits
from .browser_session import browser_unavailable_reason
from .chronicler import ChroniclerTools, chronicler_tools
from .librarian import LibrarianTools, librarian_tools
from .navigator import NavigatorTools, navigator_tools
from .operator import DEFAULT_TIMEOUT_S, OperatorTools, operator_tools
from .vault import VaultTools, vault_tools
from .workspace import Workspace


def builtin_tools(
    *,
    workspace: str | Path | None = None,
    data_dir: str | Path | None = None,
    deny_commands: Sequence[str] | None = None,
    pass_env: Sequence[str] = (),
    shell_timeout_s: float = DEFAULT_TIMEOUT_S,
    shell_limits: CommandLimits = DEFAULT_LIMITS,
    shell_network: bool = False,
    browser_allow_hosts: Sequence[str] = (),
    import_env: Sequence[str] = (),
    database: Postgres | None = None,
    vault_key_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    chromium: str | None = None,
    config_files: Sequence[str | Path] = (),
) -> list[Tool]:
    """Every built-in tool, confined to ``workspace`` (default: the current directory).

    The librarian, chronicler and vault keep their SQLite stores in ``data_dir``
    (default: TROUPE_DATA_DIR, else ~/.local/share/troupe); the files are
    created on first use, not here. ``deny_commands``, ``pass_env``,
    ``shell_timeout_s`` and ``shell_limits`` (processes, memory and open files
    per command) shape exec_shell and skill_run (see :func:`operator_tools`);
    their commands run in a bubblewrap jail without network unless ``shell_network``.
    The browser never loads loopback or private addresses unless
    ``browser_allow_hosts`` lists the host. ``secrets_set(from_env=...)`` reads
    only the variables ``import_env`` names (never a model provider's key or
    ``TROUPE_*``; see :mod:`troupe.builtins.env_import`).

    With a PostgreSQL ``database`` (:class:`troupe.stores.postgres.Postgres`)
    the stores live there instead, shared by every process using it; the
    vault's key then comes from TROUPE_SECRET_KEY or ``vault_key_file``, and
    neither being set is a :class:`ConfigError` here, before any turn runs.

    ``environ`` is troupe's environment as :func:`troupe.load_settings` read it
    (``settings.environ``): the values of ``pass_env`` and ``import_env``,
    TROUPE_SECRET_KEY and troupe's own keys masked in output. None looks those
    up in this process's environment when they are needed. ``chromium`` is the
    browser binary (``TROUPE_CHROMIUM`` for the CLI); None looks in the usual
    places and on PATH. Which tools you get never depends on the environment.

    ``config_files`` are the files troupe read as configuration (the config
    file, a topology file): inside the workspace no tool or command may change
    them. A ``vault_key_file`` inside the workspace is hidden like the data directory.
    """
    data = resolve_data_dir(data_dir)
    root = Workspace(workspace).root
    key_file = None if vault_key_file is None else Path(vault_key_file).expanduser()
    read_only, hidden = guarded_files(
        root,
        config_files=[Path(p) for p in config_files],
        key_files=[key_file] if key_file is not None else [],
    )
    ws = Workspace(root, private=[*protected_paths(data, root), *hidden], read_only=read_only)
    if database is not None and not shared_key_configured(
        key_file, process_environ() if environ is None else environ
    ):
        raise ConfigError(shared_key_missing())
    knowledge = KnowledgeStore(database or data / "knowledge.db")
    secrets = SecretStore(data, database=database, key_file=key_file, environ=environ)
    tools = [
        *operator_tools(
            ws,
            timeout_s=shell_timeout_s,
            limits=shell_limits,
            deny_commands=deny_commands,
            pass_env=pass_env,
            skills=knowledge,
            secrets=secrets,
            network=shell_network,
            environ=environ,
        ),
        *vault_tools(ws, secrets, import_env, environ),
        *librarian_tools(knowledge),
        *chronicler_tools(MemoryStore(database or data / "memory.db")),
    ]
    # Without Playwright or Chromium the navigator is left out; `troupe tree` says why.
    if browser_unavailable_reason(chromium) is None:
        tools += navigator_tools(
            ws, secret_lookup=secrets.get, allow_hosts=browser_allow_hosts, chromium=chromium
        )
    return tools


__all__ = [
    "ChroniclerTools",
    "KnowledgeStore",
    "LibrarianTools",
    "MemoryStore",
    "NavigatorTools",
    "OperatorTools",
    "SecretStore",
    "StoreError",
    "VaultError",
    "VaultTools",
    "Workspace",
    "browser_unavailable_reason",
    "builtin_tools",
    "chronicler_tools",
    "librarian_tools",
    "navigator_tools",
    "operator_tools",
    "vault_tools",
]
