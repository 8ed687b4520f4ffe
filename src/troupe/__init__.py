"""troupe: a flat list of tools becomes a team of agents on Google's ADK.

The names below are imported on first use, so ``import troupe`` (and the
``troupe --help`` that starts with it) does not load ADK, LiteLLM or the
built-in tools until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .environment import quiet_litellm

# LiteLLM fetches a price list from the internet when imported unless told to
# use the copy it bundles; troupe needs no network beyond the model's own API.
quiet_litellm()

if TYPE_CHECKING:
    from .builtins import Workspace, builtin_tools
    from .config import Config
    from .errors import ConfigError, ToolAdapterError, TroupeError, UnknownAgentError
    from .mcp import McpServer
    from .models.offline import OfflineModel
    from .models.resolve import resolve_model
    from .routing.capabilities import (
        CAPABILITY_MAP,
        GENERAL_ACTIONS,
        capability_description,
        tool_capability,
    )
    from .routing.instructions import RouteEntry, build_orchestrator_instruction
    from .routing.partition import RoleToolSet, partition_tools
    from .runtime.app import build_app
    from .runtime.assistant import Assistant, TurnResult
    from .settings import load_config
    from .tools import Tool
    from .topology import CLASSIC_TOPOLOGY, DEFAULT_TOPOLOGY, AgentSpec, Topology, load_topology
    from .tree import TroupeAgent, build_agent_tree

__version__ = "0.1.0"

_HOMES: dict[str, tuple[str, ...]] = {
    ".builtins": ("Workspace", "builtin_tools"),
    ".config": ("Config",),
    ".errors": ("ConfigError", "ToolAdapterError", "TroupeError", "UnknownAgentError"),
    ".mcp": ("McpServer",),
    ".models.offline": ("OfflineModel",),
    ".models.resolve": ("resolve_model",),
    ".routing.capabilities": (
        "CAPABILITY_MAP",
        "GENERAL_ACTIONS",
        "capability_description",
        "tool_capability",
    ),
    ".routing.instructions": ("RouteEntry", "build_orchestrator_instruction"),
    ".routing.partition": ("RoleToolSet", "partition_tools"),
    ".runtime.app": ("build_app",),
    ".runtime.assistant": ("Assistant", "TurnResult"),
    ".settings": ("load_config",),
    ".tools": ("Tool",),
    ".topology": ("CLASSIC_TOPOLOGY", "DEFAULT_TOPOLOGY", "AgentSpec", "Topology", "load_topology"),
    ".tree": ("TroupeAgent", "build_agent_tree"),
}
"""Module -> the public names it defines."""

_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'troupe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


__all__ = [
    "CAPABILITY_MAP",
    "CLASSIC_TOPOLOGY",
    "DEFAULT_TOPOLOGY",
    "GENERAL_ACTIONS",
    "AgentSpec",
    "Assistant",
    "Config",
    "ConfigError",
    "McpServer",
    "OfflineModel",
    "RoleToolSet",
    "RouteEntry",
    "Tool",
    "ToolAdapterError",
    "Topology",
    "TroupeAgent",
    "TroupeError",
    "TurnResult",
    "UnknownAgentError",
    "Workspace",
    "__version__",
    "build_agent_tree",
    "build_app",
    "build_orchestrator_instruction",
    "builtin_tools",
    "capability_description",
    "load_config",
    "load_topology",
    "partition_tools",
    "resolve_model",
    "tool_capability",
]
