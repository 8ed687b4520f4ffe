"""``root_agent`` for ADK's tools: ``adk web adk_agents``, ``adk run adk_agents/troupe_team``.

The tree is built from the same settings as the ``troupe`` CLI: TROUPE_CONFIG
(a YAML config file), TROUPE_MODEL and the current directory as workspace.
"""

from __future__ import annotations

from .settings import load_settings
from .tree import build_agent_tree

root_agent = build_agent_tree(load_settings().config)
