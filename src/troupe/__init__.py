"""troupe: a flat list of tools becomes a team of agents on Google's ADK."""

from __future__ import annotations

import os as _os

# LiteLLM fetches a price list from the internet when imported unless told to
# use the copy it bundles; troupe needs no network beyond the model's own API.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

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
from .topology import (
    CLASSIC_TOPOLOGY,
    DEFAULT_TOPOLOGY,
    AgentSpec,
    Topology,
    load_topology,
)
from .tree import TroupeAgent, build_agent_tree

__version__ = "0.1.0"

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
