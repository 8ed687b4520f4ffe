"""Settings: every option troupe reads, declared once, and the layers that set it.

:class:`Settings` is the single source of names, defaults, bounds and help text
(the team's options come from :class:`troupe.options.TeamOptions`). Values are
layered onto it in one order, highest first:

1. command-line options (``--data-dir``, ``--model``, ...),
2. environment variables ``TROUPE_<FIELD>`` (``TROUPE_DATA_DIR``, ``TROUPE_MODEL``, ...),
3. the YAML file (``--config`` or ``TROUPE_CONFIG``),
4. the defaults declared here.

Every command resolves the data directory (and everything else) through
:func:`load_settings`, so ``troupe secrets``, ``troupe trace`` and
``troupe chat`` always agree on where data lives.

This is the one module that reads troupe's settings from the environment:
:func:`load_settings` takes one snapshot of it (:attr:`Settings.environ`), and
every value below comes from that snapshot as an argument (the data directory,
the default model, the vault's key, the Chromium binary, the variables
``shell.pass_env`` and ``vault.import_env`` name, the tokens of remote agents
and MCP servers). docs/configuration.md lists every variable troupe reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)

from .builtins._limits import MEMORY_MB, OPEN_FILES, PROCESSES, CommandLimits
from .builtins._process import check_pass_env
from .builtins.browser_session import CHROMIUM_ENV
from .builtins.env_import import check_import_env
from .builtins.shell_policy import compile_deny_list
from .errors import ConfigError
from .mcp.entries import McpServerEntry
from .options import TeamOptions, describe_errors
from .paths import (
    DATA_DIR_ENV,
    ROUTER_CACHE_DIR,
    default_cache_dir,
    default_data_dir,
    default_session_store,
)
from .remote import RemoteAgentEntry
from .stores.budget import (
    DEFAULT_POOL_SIZE,
    DEFAULT_POOL_TIMEOUT_S,
    DEFAULT_RESERVE,
    PoolBudget,
)
from .stores.lock_limits import (
    DEFAULT_LEASE_S,
    DEFAULT_RECORD_TTL_S,
    DEFAULT_WAIT_S,
    LockLimits,
)
from .trust_store import TrustStore
from .workspace_config import (
    CONFIG_NAME,
    TIGHTEN_ONLY,
    distrust,
    lies_inside,
    warn_changed,
    warn_flag_retired,
    warn_untrusted,
)
from .yaml_file import read_mapping

if TYPE_CHECKING:
    from google.adk.sessions.base_session_service import BaseSessionService

    from .config import Config
    from .stores.postgres import Postgres
    from .stores.traces import TraceStore
    from .tools import Tool

CONFIG_ENV = "TROUPE_CONFIG"
ENV_PREFIX = "TROUPE_"
AUTH_TOKEN_ENV = "TROUPE_AUTH_TOKEN"
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
"""1 MiB: far above any message a client posts to ``troupe serve``."""

__all__ = [
    "AUTH_TOKEN_ENV",
    "CONFIG_ENV",
    "DATA_DIR_ENV",
    "Settings",
    "ShellSection",
    "VaultSection",
    "default_data_dir",
    "load_config",
    "load_settings",
    "read_config_file",
]


class ShellSection(BaseModel):
    """The ``shell`` section of ``troupe.yaml``: how exec_shell and skill_run run commands."""

    model_config = ConfigDict(extra="forbid")

    deny_commands: list[str] = Field(
        default_factory=list,
        description="More regular expressions to refuse, on top of the built-in deny list.",
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Variables of troupe's environment that commands may see (none by default).",
    )
    network: bool = Field(
        default=False, description="Let approved commands reach the network (default: off)."
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=3600, description="Seconds a command may run (default 30)."
    )
    max_processes: int = Field(
        default=PROCESSES[1],
        ge=PROCESSES[0],
        le=PROCESSES[2],
        description="Processes one command may run at once, itself included.",
    )
    max_memory_mb: int = Field(
        default=MEMORY_MB[1],
        ge=MEMORY_MB[0],
        le=MEMORY_MB[2],
        description="Address space of each process of a command, in MiB.",
    )
    max_open_files: int = Field(
        default=OPEN_FILES[1],
        ge=OPEN_FILES[0],
        le=OPEN_FILES[2],
        description="Files each process of a command may hold open.",
    )

    def limits(self) -> CommandLimits:
        """These limits for the process runner."""
        return CommandLimits(self.max_processes, self.max_memory_mb, self.max_open_files)

    @field_validator("deny_commands")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        compile_deny_list(patterns)
        return patterns

    @field_validator("pass_env")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        check_pass_env(names)
        return names


class BrowserSection(BaseModel):
    """The ``browser`` section of ``troupe.yaml``: where the navigator may go."""

    model_config = ConfigDict(extra="forbid")

    allow_hosts: list[str] = Field(
        default_factory=list,
        description="Loopback or private hosts (host or host:port) the browser may load.",
    )


class VaultSection(BaseModel):
    """The ``vault`` section of ``troupe.yaml``: what the vault's tools may read."""

    model_config = ConfigDict(extra="forbid")

    import_env: list[str] = Field(
        default_factory=list,
        description="Variables of troupe's environment secrets_set(from_env=...) may store "
        "(none by default; never a model provider's key or TROUPE_*).",
    )

    key_file: Path | None = Field(
        default=None,
        description="A file (owner-only) holding the vault's master key; needed with a "
        "PostgreSQL session store unless TROUPE_SECRET_KEY is set.",
    )

    @field_validator("import_env", mode="before")
    @classmethod
    def _names(cls, names: Any) -> Any:
        check_import_env(names)
        return names


class Settings(TeamOptions):
    """Every option of ``troupe.yaml``, ``TROUPE_*`` and the CLI, with its default."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str | None = Field(
        default=None,
        description="Model name: offline, gemini-2.5-flash, openai/gpt-4o-mini, ...; "
        "none picks offline unless a key is configured.",
    )
    fallback_model: str | None = Field(
        default=None, description="Model used when the primary still fails after retries."
    )
    topology: str = Field(default="default", description="default, classic or a YAML file.")
    workspace: Path = Field(
        default_factory=Path.cwd, description="Directory the file and shell tools may use."
    )
    data_dir: Path = Field(
        default_factory=lambda: default_data_dir({}),
        description="Where sessions, stores and traces live (XDG data home /troupe).",
    )
    session_store: str = Field(
        default="",
        description="Session store URL (sqlite:///..., postgresql+asyncpg://..., memory://); "
        "empty means sessions.db in the data directory.",
    )
    turn_lock_wait_s: float = Field(
        default=DEFAULT_WAIT_S,
        ge=0.1,
        le=600,
        description="Seconds a turn waits for its busy session before a 409 with Retry-After.",
    )
    turn_lock_lease_s: float = Field(
        default=DEFAULT_LEASE_S,
        ge=2,
        le=3600,
        description="Seconds a stalled or dead replica keeps a session's PostgreSQL lease at "
        "most (the holder renews it every third).",
    )
    turn_record_ttl_s: float = Field(
        default=DEFAULT_RECORD_TTL_S,
        ge=60,
        le=30 * 24 * 3600,
        description="Seconds a keyed turn's record (Idempotency-Key, approval, A2A messageId) "
        "is kept after its last change; a retry within it never runs the turn twice.",
    )
    database_pool_size: int = Field(
        default=DEFAULT_POOL_SIZE,
        ge=2,
        le=500,
        description="PostgreSQL connections one process opens at most, for every store.",
    )
    database_replicas: int = Field(
        default=1,
        ge=1,
        le=1000,
        description="Processes sharing the PostgreSQL session store; `troupe serve` refuses "
        "to start when replicas x database_pool_size + database_reserve exceeds what the "
        "server allows.",
    )
    database_reserve: int = Field(
        default=DEFAULT_RESERVE,
        ge=0,
        le=1000,
        description="PostgreSQL connections the start-up check leaves for the CLI and admins.",
    )
    database_pool_timeout_s: float = Field(
        default=DEFAULT_POOL_TIMEOUT_S,
        ge=0.1,
        le=600,
        description="Seconds a request waits for a pooled PostgreSQL connection before a 503.",
    )
    artifact_store: str = Field(
        default="",
        description="Where `troupe serve` keeps ADK artifacts: empty for the session store's "
        "database, or one of ADK's artifact services (gs://bucket, file:///path, memory://).",
    )
    builtin_tools: bool = Field(default=True, description="Register troupe's built-in tools.")
    auth_token: str | None = Field(
        default=None, description="Bearer token `troupe serve` requires on every route."
    )
    max_request_bytes: int = Field(
        default=DEFAULT_MAX_REQUEST_BYTES,
        ge=1024,
        le=1024**3,
        description="Largest request body `troupe serve` reads (bytes); larger ones get a 413.",
    )
    remote_agents: list[RemoteAgentEntry] = Field(
        default_factory=list, description="A2A agents added as sub-agents."
    )
    mcp_servers: list[McpServerEntry] = Field(
        default_factory=list, description="MCP servers (stdio command or streamable HTTP url)."
    )
    shell: ShellSection = Field(
        default_factory=ShellSection, description="Deny list, environment and timeout of commands."
    )
    browser: BrowserSection = Field(
        default_factory=BrowserSection, description="Hosts the navigator may load."
    )
    vault: VaultSection = Field(
        default_factory=VaultSection,
        description="Environment variables the vault's tools may import.",
    )

    _data_dir_named: bool = PrivateAttr(default=False)
    _config_file: Path | None = PrivateAttr(default=None)
    _environ: Mapping[str, str] = PrivateAttr(default_factory=dict)

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment :func:`load_settings` read, once (empty for ``Settings()``)."""
        return self._environ

    @property
    def config_file(self) -> Path | None:
        """The config file these settings read (named, or ``./troupe.yaml`` found), if any."""
        return self._config_file

    @property
    def config_files(self) -> tuple[Path, ...]:
        """Every file troupe reads as configuration: the config file and a topology file.

        Inside the workspace they are read-only to every tool and command
        (see :func:`troupe.builtins.builtin_tools`); the vault's key file is hidden.
        """
        found = [self._config_file] if self._config_file is not None else []
        if self.topology.endswith((".yaml", ".yml")):
            found.append(Path(self.topology))
        return tuple(path.expanduser().absolute() for path in found)

    @property
    def key_files(self) -> tuple[Path, ...]:
        """The vault's key file when one is set (hidden from every tool and command)."""
        key = self.vault.key_file
        return (key.expanduser().absolute(),) if key is not None else ()

    @property
    def chromium(self) -> str | None:
        """The Chromium binary ``TROUPE_CHROMIUM`` names, if any."""
        return self._environ.get(CHROMIUM_ENV) or None

    @field_validator("data_dir")
    @classmethod
    def _a_directory(cls, path: Path) -> Path:
        target = path.expanduser()
        existing = next((p for p in (target, *target.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            raise ValueError(
                f"{str(existing)!r} is a file, not a directory; choose a writable data "
                "directory (or a path that does not exist yet, which troupe creates) "
                "as --data-dir"
            )
        return path

    @property
    def router_cache_dir(self) -> Path:
        """The router's phrase-vector cache: inside the data directory when the user
        named one (config, ``--data-dir`` or ``TROUPE_DATA_DIR``), else the XDG cache."""
        if self._data_dir_named or self._environ.get(DATA_DIR_ENV):
            return self.data_dir / ROUTER_CACHE_DIR
        return default_cache_dir(self._environ) / ROUTER_CACHE_DIR

    @property
    def lock_limits(self) -> LockLimits:
        """How turns wait for a session and how long a stalled holder keeps it."""
        return LockLimits(self.turn_lock_wait_s, self.turn_lock_lease_s)

    @property
    def pool_budget(self) -> PoolBudget:
        """The PostgreSQL connections this process may open, and what the start-up check counts."""
        return PoolBudget(
            size=self.database_pool_size,
            timeout_s=self.database_pool_timeout_s,
            replicas=self.database_replicas,
            reserve=self.database_reserve,
        )

    def model_post_init(self, context: Any, /) -> None:
        self._data_dir_named = "data_dir" in self.model_fields_set
        if isinstance(context, dict) and isinstance(context.get("config_file"), Path):
            self._config_file = context["config_file"]
        if isinstance(context, dict) and isinstance(context.get("environ"), Mapping):
            self._environ = MappingProxyType(dict(context["environ"]))
            if not self._data_dir_named:
                self.data_dir = default_data_dir(self._environ)
        self.workspace = self.workspace.expanduser().resolve()
        self.data_dir = self.data_dir.expanduser()
        if not self.session_store:
            self.session_store = default_session_store(self.data_dir)

    @cached_property
    def state_database(self) -> Postgres | None:
        """The PostgreSQL database every built-in store and the traces share when the
        session store is PostgreSQL; None keeps them as SQLite files in the data directory."""
        from .stores.postgres import Postgres

        return Postgres.for_session_store(self.session_store, self.pool_budget)

    def open_session_store(self) -> BaseSessionService:
        """The session service of ``session_store``, with these settings' lock limits,
        connection budget and keyed-turn lifetime."""
        from .stores.sessions import open_session_store

        return open_session_store(
            self.session_store,
            self.lock_limits,
            budget=self.pool_budget,
            record_ttl_s=self.turn_record_ttl_s,
        )

    def trace_store(self) -> TraceStore:
        """Where turns' traces go: the shared database, else ``traces.db`` in the data dir."""
        from .stores.traces import TraceStore

        return TraceStore(self.state_database or self.data_dir / "traces.db")

    def builtin_tool_list(self) -> list[Tool]:
        """troupe's built-in tools under these settings' workspace, data directory and
        policies (shell, browser, vault); none when ``builtin_tools`` is off."""
        from .builtins import builtin_tools
        from .builtins.operator import DEFAULT_TIMEOUT_S
        from .builtins.shell_policy import DEFAULT_DENY_COMMANDS

        return (
            builtin_tools(
                workspace=self.workspace,
                data_dir=self.data_dir,
                deny_commands=[*DEFAULT_DENY_COMMANDS, *self.shell.deny_commands],
                pass_env=self.shell.pass_env,
                shell_timeout_s=self.shell.timeout_s or DEFAULT_TIMEOUT_S,
                shell_limits=self.shell.limits(),
                shell_network=self.shell.network,
                browser_allow_hosts=self.browser.allow_hosts,
                import_env=self.vault.import_env,
                database=self.state_database,
                vault_key_file=self.vault.key_file,
                environ=self._environ,
                chromium=self.chromium,
                config_files=self.config_files,
            )
            if self.builtin_tools
            else []
        )

    @cached_property
    def config(self) -> Config:
        """The :class:`troupe.Config` these settings describe (built-in tools included)."""
        from .remote import build_remote_agents

        return self.config_over(self.builtin_tool_list()).model_copy(
            update={
                "router_cache_dir": self.router_cache_dir,
                "remote_agents": build_remote_agents(self.remote_agents, self._environ),
                "mcp_servers": [
                    entry.to_server(
                        workspace=self.workspace,
                        data_dir=self.data_dir,
                        environ=self._environ,
                        config_files=self.config_files,
                        hidden_files=self.key_files,
                    )
                    for entry in self.mcp_servers
                ],
            }
        )

    def config_over(self, tools: Sequence[Tool]) -> Config:
        """These settings' model, topology and team options over ``tools`` alone:
        no built-in tools, MCP servers or remote agents (``troupe eval`` scores this)."""
        from .config import Config
        from .models.keys import configured_key
        from .models.resolve import default_model_name

        shared = self.model_dump(include=set(TeamOptions.model_fields))
        # The key api_key_env names is read here, from the snapshot: the Config holds it.
        shared["api_key"] = configured_key(self.api_key, self.api_key_env, self._environ)
        shared["api_key_env"] = None
        return Config(
            **shared,
            tools=tools,
            model=self.model or default_model_name(self._environ),
            fallback_model=self.fallback_model,
            topology=self.topology,
        )


def load_settings(
    *,
    config_path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    trust_workspace_config: bool | None = None,
    discover: bool = True,
    **cli: Any,
) -> Settings:
    """The settings from the CLI options in ``cli``, ``TROUPE_*``, the file and the defaults.

    ``cli`` takes any :class:`Settings` field; a None value means "not given".
    The file is ``config_path``, else TROUPE_CONFIG, else (with ``discover``)
    ``troupe.yaml`` in the current directory. A file nobody vouched for (see
    :mod:`troupe.workspace_config`) sets only the fields that module allows,
    unless ``trust_workspace_config`` (a library caller's own say) trusts it.

    Raises:
        ConfigError: naming each bad value and the layer it came from.
    """
    env = MappingProxyType(dict(os.environ if environ is None else environ))
    warn_flag_retired(env)
    named = config_path or env.get(CONFIG_ENV)
    file = Path(named) if named else (_discovered() if discover else None)
    layers: list[tuple[str, dict[str, Any]]] = []
    if file is not None:
        content = _config_bytes(file)
        layer = _file_layer(file, content)
        if not trust_workspace_config:
            layer = _as_trusted(file, content, layer, named=bool(named), cli=cli, env=env)
        layers.append((f"config file {str(file)!r}", layer))
    layers.extend(
        (f"environment variable {ENV_PREFIX}{k.upper()}", {k: v})
        for k, v in _env_layer(env).items()
    )
    unknown = sorted(set(cli) - set(Settings.model_fields))
    if unknown:
        raise TypeError(f"load_settings() got unknown options: {', '.join(unknown)}")
    layers.extend(
        (f"option --{k.replace('_', '-')}", {k: v}) for k, v in cli.items() if v is not None
    )
    merged: dict[str, Any] = {}
    source: dict[str, str] = {}
    for where, values in layers:
        for key, value in values.items():
            name = _field_name(key)
            merged.pop(name, None)
            merged.pop(_alias(name), None)
            merged[key] = value
            source[name] = where
    try:
        settings = Settings.model_validate(merged, context={"environ": env, "config_file": file})
    except ValidationError as exc:
        problems = [
            f"field {name!r}: {said} (from {source.get(_field_name(name.split('.')[0]))})"
            for name, said in describe_errors(exc, Settings)
        ]
        raise ConfigError("Invalid settings: " + "; ".join(problems) + ".") from None
    try:
        check_import_env(settings.vault.import_env, model_key_env=settings.api_key_env)
    except ConfigError as exc:
        raise ConfigError(f"Invalid settings: {exc} (from {source.get('vault')})") from None
    if settings.remote_agents:
        settings.config  # noqa: B018 - names, tokens and the A2A SDK are checked up front
    return settings


def trust_store(
    data_dir: str | Path | None, environ: Mapping[str, str] | None = None
) -> TrustStore:
    """Where the trust records live: ``data_dir`` (``--data-dir``), else
    TROUPE_DATA_DIR (in ``environ``, default: this process's environment), else the
    default data directory; never a config file's ``data_dir``, which the file's own
    trust would decide."""
    env = os.environ if environ is None else environ
    return TrustStore(Path(data_dir) if data_dir else default_data_dir(env))


def needs_trust(file: Path, content: bytes) -> list[str]:
    """The fields of ``content`` (the bytes of the config file ``file``) that apply
    only when the file is trusted."""
    out = distrust(_file_layer(file, content), field_of=_field_name, defaults=_tighten_defaults())
    return [name for name, _ in out.ignored]


def _discovered() -> Path | None:
    """``troupe.yaml`` in the current directory, when it is a file."""
    found = Path(CONFIG_NAME)
    return found if found.is_file() else None


def _config_bytes(file: Path) -> bytes:
    """The config file's bytes, read once: what is checked against its trust is what applies."""
    try:
        return file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {str(file)!r}: {exc.strerror}.") from None


def load_config(path: str | Path, *, workspace: str | Path | None = None) -> Config:
    """A :class:`Config` from a YAML config file (built-in tools bound to ``workspace``).

    Accepts the spec's keys ``agent.multiAgent`` and ``agent.maxDelegationRounds``
    as well as ``multi_agent`` and ``max_delegation_rounds``.
    """
    return load_settings(config_path=path, workspace=workspace).config


def read_config_file(path: str | Path) -> Settings:
    """The settings of one YAML file alone (no environment, no options)."""
    return load_settings(config_path=path, environ={})


def _field_name(key: str) -> str:
    for name, field in Settings.model_fields.items():
        if key in (name, field.alias):
            return name
    return key


def _alias(name: str) -> str:
    field = Settings.model_fields.get(name)
    return field.alias if field is not None and field.alias else name


def _file_layer(file: Path, content: bytes | None = None) -> dict[str, Any]:
    """The file's mapping (``content`` when read already), with ``agent.*`` lifted to
    the top and paths made absolute."""
    raw = read_mapping(
        file,
        "config file",
        "a mapping of settings (`key: value` lines)",
        empty_ok=True,
        content=content,
    )
    agent = raw.pop("agent", None)
    if agent is not None:
        if not isinstance(agent, dict) or set(agent) - {"multiAgent", "maxDelegationRounds"}:
            raise ConfigError(
                f"Config file {str(file)!r}: 'agent' takes only multiAgent and "
                f"maxDelegationRounds, not {agent!r}."
            )
        for key, value in agent.items():
            raw.pop(_field_name(key), None)
            raw[key] = value
    router = raw.get("router")
    if isinstance(router, dict):
        keys = {"mode", "threshold", "encoder_threads", "require_transfer", "agent_schema"}
        if set(router) - keys:
            raise ConfigError(
                f"Config file {str(file)!r}: 'router' takes auto or off, or a mapping of "
                f"mode, threshold, encoder_threads, require_transfer and agent_schema, "
                f"not {router!r}."
            )
        raw["router"] = router.get("mode")
        if "threshold" in router:
            raw["router_threshold"] = router["threshold"]
        if "encoder_threads" in router:
            raw["router_encoder_threads"] = router["encoder_threads"]
        if "require_transfer" in router:
            raw["router_require_transfer"] = router["require_transfer"]
        if "agent_schema" in router:
            raw["router_agent_schema"] = router["agent_schema"]
    topology = raw.get("topology")
    if isinstance(topology, str) and topology.endswith((".yaml", ".yml")):
        raw["topology"] = str((file.parent / Path(topology).expanduser()).resolve())
    if isinstance(raw.get("data_dir"), str):
        raw["data_dir"] = file.parent / Path(raw["data_dir"]).expanduser()
    if isinstance(raw.get("mcp_servers"), list):
        raw["mcp_servers"] = [_beside(file, entry) for entry in raw["mcp_servers"]]
    # YAML reads 1e23 as text; a number-valued field gets it as the number it reads as.
    return {
        key: _scalar(value)
        if isinstance(value, str) and _kinds(_field_name(key)) & {int, float}
        else value
        for key, value in raw.items()
    }


def _beside(file: Path, entry: Any) -> Any:
    """An ``mcp_servers`` entry with the relative paths of its command line that
    name files next to ``file`` made absolute: a server started from another
    folder (or in the jail, whose working folder is the workspace) finds its
    script, as a relative topology path is read from beside the file."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return entry

    def absolute(part: Any) -> Any:
        if not isinstance(part, str) or part.startswith("-") or Path(part).is_absolute():
            return part
        if "/" not in part and not Path(part).suffix:
            return part  # a program on PATH or a plain word, not a file
        beside = file.parent / Path(part).expanduser()
        return str(beside.resolve()) if beside.exists() else part

    found = dict(entry)
    found["command"] = absolute(entry["command"])
    if isinstance(entry.get("args"), list):
        found["args"] = [absolute(arg) for arg in entry["args"]]
    return found


def _as_trusted(
    file: Path,
    content: bytes,
    layer: dict[str, Any],
    *,
    named: bool,
    cli: Mapping[str, Any],
    env: Mapping[str, str],
) -> dict[str, Any]:
    """``layer`` whole when the person vouched for ``file``, else as an untrusted
    file may set it (:mod:`troupe.workspace_config`), with a line per field left out.

    The person vouched for it when ``troupe trust`` recorded exactly ``content``,
    or when they named it (``--config``, TROUPE_CONFIG) and it lies outside the
    workspace (the one the options or environment give, else the current
    directory, or the one the file itself names).
    """
    given = cli.get("workspace") or env.get(f"{ENV_PREFIX}WORKSPACE") or Path.cwd()
    roots = [Path(given)]
    if isinstance(layer.get("workspace"), str | Path):
        roots.append(Path(layer["workspace"]))
    inside = lies_inside(file, roots)
    if named and inside is None:
        return layer
    check = trust_store(cli.get("data_dir"), env).check(file, content)
    if check.trusted:
        return layer
    shown = str(file)
    if check.changed:
        warn_changed(shown, check.shown_diff())
    out = distrust(layer, field_of=_field_name, defaults=_tighten_defaults())
    if out.ignored:
        why = (
            f"it lies inside the workspace {inside}, which tools and commands can write"
            if inside is not None
            else "it was found in the current directory, not named with --config"
        )
        warn_untrusted(shown, why, out.ignored)
    return out.kept


def _tighten_defaults() -> dict[str, Any]:
    """The default of every limit an untrusted file may only tighten."""
    from .builtins.operator import DEFAULT_TIMEOUT_S

    found: dict[str, Any] = {}
    for name in TIGHTEN_ONLY:
        section, _, sub = name.partition(".")
        if sub:
            found[name] = ShellSection.model_fields[sub].default
        else:
            found[name] = Settings.model_fields[section].default
    found["shell.timeout_s"] = DEFAULT_TIMEOUT_S
    return found


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    """``TROUPE_<FIELD>`` for every field a single value can set."""
    found: dict[str, Any] = {}
    for name in Settings.model_fields:
        raw = env.get(f"{ENV_PREFIX}{name.upper()}")
        if not raw:
            continue
        kinds = _kinds(name)
        if kinds & {str, Path}:
            found[name] = raw
        elif kinds & {int, float, bool}:
            found[name] = _scalar(raw)
    return found


def _kinds(name: str) -> set[Any]:
    """The types a field's annotation allows, None left out."""
    field = Settings.model_fields.get(name)
    if field is None:
        return set()
    return {field.annotation, *get_args(field.annotation)} - {type(None)}


def _scalar(text: str) -> Any:
    """``"10"`` -> 10, ``"2.5"`` -> 2.5, ``"true"`` -> True; anything else stays text."""
    try:
        return json.loads(text.strip().lower())
    except ValueError:
        return text
