"""A config file inside the workspace is the workspace's: it may not say what troupe runs.

Tools and approved commands write the workspace, and a cloned repository
arrives with whatever files its author put there. A ``troupe.yaml`` found
there is therefore read like the rest of the workspace: as something an
attacker may have written. Its harmless settings apply (the model's name, the
topology, the router, limits on the team), but the fields that start
programs, reach the network, hand out keys or loosen the sandbox are ignored
unless the person running troupe says they trust the file
(``--trust-workspace-config`` or ``TROUPE_TRUST_WORKSPACE_CONFIG=1``); a
warning names every ignored field and the flag.

The rule is an allow list: a field added to :class:`~troupe.settings.Settings`
later is untrusted until it is listed here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

TRUST_ENV = "TROUPE_TRUST_WORKSPACE_CONFIG"
TRUST_FLAG = "--trust-workspace-config"

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
"""Fields a workspace's config file may set: they shape prompts, routing and the
team's own limits, which a hostile model can already steer. Everything else
(``mcp_servers``, ``remote_agents``, ``shell.*`` but ``deny_commands``,
``browser.*``, ``api_base``, ``api_key``, ``api_key_env``, ``session_store``,
``data_dir``, ``workspace``, ``auth_token``) is ignored without the flag."""
TRUSTED_SHELL_FIELDS = frozenset({"deny_commands"})
"""``shell`` fields a workspace's file may set: deny patterns only add refusals."""

logger = logging.getLogger(__name__)


def trusted_by_flag(environ: Mapping[str, str]) -> bool:
    """True when ``TROUPE_TRUST_WORKSPACE_CONFIG`` says to trust a workspace's config file."""
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


def distrust(layer: dict[str, Any], *, field_of: Any) -> tuple[dict[str, Any], list[str]]:
    """``layer`` without the fields a workspace's file may not set, and their names.

    ``field_of`` maps a key of the file (a field name or its alias) to the field's name.
    """
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in layer.items():
        name = field_of(key)
        if name in TRUSTED_FIELDS:
            kept[key] = value
        elif name == "shell" and isinstance(value, dict):
            shell = {k: v for k, v in value.items() if k in TRUSTED_SHELL_FIELDS}
            dropped += [f"shell.{k}" for k in value if k not in TRUSTED_SHELL_FIELDS]
            if shell:
                kept[key] = shell
        else:
            dropped.append(str(name))
    return kept, dropped


def warn_ignored(file: Path, workspace: Path, dropped: list[str]) -> None:
    """One line naming the ignored fields and how to trust the file."""
    logger.warning(
        "config file %s lies inside the workspace %s, which tools and commands can write: "
        "ignored its %s (pass %s or set %s=1 if you trust this file)",
        file,
        workspace,
        ", ".join(dropped),
        TRUST_FLAG,
        TRUST_ENV,
    )
