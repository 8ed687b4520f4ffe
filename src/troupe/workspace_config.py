"""A config file nobody vouched for may say only what it cannot abuse.

Tools and approved commands write the workspace, and a cloned repository
arrives with whatever files its author put there. A ``troupe.yaml`` there is
therefore read like the rest of the workspace: as something an attacker may
have written. It counts as the person's only when ``troupe trust FILE``
recorded exactly its bytes (:mod:`troupe.trust_store`); a file named with
``--config`` (or ``TROUPE_CONFIG``) that lies outside the workspace is the
person's as well. Every other one (inside the workspace, or found as
``./troupe.yaml`` without being named) is *untrusted*:

* only the fields below apply (the model's name, the topology, the router,
  the team's own limits), and the limits only where they are tighter than
  troupe's defaults (:data:`TIGHTEN_ONLY`): an untrusted file may lower
  ``max_model_calls`` or ``turn_timeout_s``, never raise them, and cannot turn
  the guards off;
* every other field (the ones that start programs, reach the network, hand
  out keys or loosen the sandbox) is ignored, each named in one line with
  what that means and the command that trusts the file.

The rule is an allow list: a field added to :class:`~troupe.settings.Settings`
later is untrusted until it is listed here.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRUST_ENV = "TROUPE_TRUST_WORKSPACE_CONFIG"
"""Once trusted any workspace file, whatever it held; now only named in a warning."""
TRUST_COMMAND = "troupe trust"
CONFIG_NAME = "troupe.yaml"
"""The file found in the current directory when no config file is named."""

TRUSTED_FIELDS = frozenset(
    {
        "model",
        "fallback_model",
        "topology",
        "builtin_tools",
        "system_prompt",
        "multi_agent",
        "max_delegation_rounds",
        "transfer_repair",
        "guards",
        "max_model_calls",
        "max_repeated_calls",
        "model_retries",
        "retry_base_delay",
        "turn_timeout_s",
        "router",
        "router_threshold",
        "router_require_transfer",
        "router_agent_schema",
    }
)
"""Fields an untrusted file may set: they shape prompts, routing and the team's
own limits, which a hostile model can already steer (the limits only downward)."""
TRUSTED_SHELL_FIELDS = frozenset(
    {"deny_commands", "timeout_s", "max_processes", "max_memory_mb", "max_open_files"}
)
"""``shell`` fields an untrusted file may set: deny patterns only add refusals,
and the limits apply only where they are lower than the defaults."""

TIGHTEN_ONLY: Mapping[str, str] = {
    "max_delegation_rounds": "lower",
    "max_model_calls": "lower",
    "max_repeated_calls": "lower",
    "model_retries": "lower",
    "turn_timeout_s": "lower",
    "guards": "on",
    "shell.timeout_s": "lower",
    "shell.max_processes": "lower",
    "shell.max_memory_mb": "lower",
    "shell.max_open_files": "lower",
}
"""Limits, guards and timeouts an untrusted file may only tighten: ``lower``
numbers (None is no limit, the highest) or a guard left ``on``."""
ZERO_MEANS: Mapping[str, float] = {"max_delegation_rounds": 5}
"""Fields whose 0 stands for a default (``max_delegation_rounds: 0`` is 5 rounds)."""

IGNORED_EFFECTS: Mapping[str, str] = {
    "api_base": "requests go to the provider's default endpoint",
    "api_key": "the model's key comes from its provider's usual environment variable",
    "api_key_env": "the model's key comes from its provider's usual environment variable",
    "mcp_servers": "none of its MCP servers is started",
    "remote_agents": "none of its remote agents joins the team",
    "session_store": "sessions stay in sessions.db in the data directory",
    "data_dir": "troupe keeps its data in TROUPE_DATA_DIR or the usual data directory",
    "workspace": "the workspace is --workspace or the current directory",
    "auth_token": "`troupe serve` takes its token from TROUPE_AUTH_TOKEN only",
    "max_request_bytes": "`troupe serve` reads requests up to its default size",
    "turn_lock_wait_s": "turns wait for a busy session the default time",
    "turn_lock_lease_s": "a stalled replica keeps a session's lease the default time",
    "turn_record_ttl_s": "keyed turns' records are kept the default time",
    "database_pool_size": "each process opens the default number of database connections",
    "database_replicas": "the start-up budget check counts one replica",
    "database_reserve": "the start-up budget check leaves the default reserve",
    "database_pool_timeout_s": "requests wait the default time for a database connection",
    "artifact_store": "artifacts go to the session store's database",
    "router_encoder_threads": "the router's encoder uses one thread",
    "shell.network": "commands run without network",
    "shell.pass_env": "commands see none of troupe's environment variables",
    "browser": "the browser loads no loopback or private host",
    "vault": "the vault imports no environment variable and keeps its key in the data directory",
}
"""What follows when an untrusted file's field is ignored, said with its name."""
DEFAULT_EFFECT = "troupe uses its default for it"

logger = logging.getLogger(__name__)


def trusted_by_flag(environ: Mapping[str, str]) -> bool:
    """True when ``TROUPE_TRUST_WORKSPACE_CONFIG`` is set to a yes (which no longer trusts)."""
    return environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def lies_inside(file: Path, roots: Iterable[Path]) -> Path | None:
    """The first of ``roots`` that holds ``file``, else None.

    ``file`` counts as inside when its path as given or its target is: a link in
    the workspace to a file elsewhere can be replaced by whoever writes the workspace.
    """
    named = Path(os.path.abspath(file.expanduser()))
    places = {named, *named.parents, *file.expanduser().resolve().parents}
    for root in roots:
        for top in {Path(os.path.abspath(root.expanduser())), root.expanduser().resolve()}:
            if top in places and top != named:
                return top
    return None


@dataclass
class Distrusted:
    """An untrusted file's layer as it applies, and what was left out of it."""

    kept: dict[str, Any]
    ignored: list[tuple[str, str]] = field(default_factory=list)
    """(field, why) for every field left out."""


def distrust(
    layer: dict[str, Any],
    *,
    field_of: Callable[[str], str],
    defaults: Mapping[str, Any],
) -> Distrusted:
    """``layer`` without what an untrusted file may not set, and each field left out.

    ``field_of`` maps a key of the file (a field name or its alias) to the
    field's name; ``defaults`` holds the default of every :data:`TIGHTEN_ONLY` field.
    """
    out = Distrusted({})
    for key, value in layer.items():
        name = field_of(key)
        if name == "shell" and isinstance(value, dict):
            shell: dict[str, Any] = {}
            for sub, item in value.items():
                dotted = f"shell.{sub}"
                if sub not in TRUSTED_SHELL_FIELDS:
                    out.ignored.append((dotted, IGNORED_EFFECTS.get(dotted, DEFAULT_EFFECT)))
                elif (why := _loosens(dotted, item, defaults)) is not None:
                    out.ignored.append((dotted, why))
                else:
                    shell[sub] = item
            if shell:
                out.kept[key] = shell
        elif name not in TRUSTED_FIELDS:
            out.ignored.append((str(name), IGNORED_EFFECTS.get(str(name), DEFAULT_EFFECT)))
        elif (why := _loosens(name, value, defaults)) is not None:
            out.ignored.append((name, why))
        else:
            out.kept[key] = value
    return out


def _loosens(name: str, value: Any, defaults: Mapping[str, Any]) -> str | None:
    """Why ``value`` for ``name`` would loosen a limit (and so is ignored), else None."""
    rule = TIGHTEN_ONLY.get(name)
    if rule is None:
        return None
    default = defaults.get(name)
    if rule == "on":
        if value is False:
            return "an untrusted file cannot turn the guards off; they stay on"
        return None
    here, base = _limit(name, value), _limit(name, default)
    if here is None or base is None:
        return None  # not a number: validation names it
    if here > base:
        shown = "no limit" if value is None else f"{value!r}"
        return (
            f"an untrusted file may only lower this limit, and {shown} is above the "
            f"default ({_shown_default(name, default)}), which stays"
        )
    return None


def _limit(name: str, value: Any) -> float | None:
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value == 0 and name in ZERO_MEANS:
        return ZERO_MEANS[name]
    return float(value)


def _shown_default(name: str, value: Any) -> str:
    if value == 0 and name in ZERO_MEANS:
        value = ZERO_MEANS[name]
    return "no limit" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def trust_hint(shown: str) -> str:
    """The command that trusts the file shown as ``shown``."""
    return f"run `{TRUST_COMMAND} {shown}`"


def warn_untrusted(shown: str, why: str, ignored: list[tuple[str, str]]) -> None:
    """One line saying the file is untrusted and why, then one per ignored field."""
    logger.warning(
        "config file %s is not trusted (%s): only its safe settings apply; %s to use all of it",
        shown,
        why,
        trust_hint(shown),
    )
    for name, effect in ignored:
        logger.warning("%s ignored: %s; %s to use it", name, effect, trust_hint(shown))


def warn_changed(shown: str, diff: str) -> None:
    """The file changed since it was trusted: say so, with the diff, a line a record."""
    logger.warning(
        "config file %s changed since you trusted it, so it lost that trust until you %s "
        "again; the change:",
        shown,
        trust_hint(shown),
    )
    for line in diff.splitlines():
        logger.warning("  %s", line)


def warn_flag_retired(environ: Mapping[str, str]) -> None:
    """``TROUPE_TRUST_WORKSPACE_CONFIG=1`` no longer trusts anything: say what does."""
    if trusted_by_flag(environ):
        logger.warning(
            "%s no longer trusts a config file whatever it holds: %s FILE once records the "
            "file's digest, and a change then needs your trust again",
            TRUST_ENV,
            TRUST_COMMAND,
        )
