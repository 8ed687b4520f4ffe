"""The App for ADK's tools: ``adk web adk_agents``, ``adk run adk_agents/troupe_team``.

The tree is built from the same settings as the ``troupe`` CLI: TROUPE_CONFIG
(a YAML config file), TROUPE_MODEL and the current directory as workspace.
ADK's loader takes the module's ``app`` before its ``root_agent``, so these
tools run the same runtime plugins (guards, usage counts, turn timeout,
traces in the data directory's ``traces.db``) as ``troupe chat`` and
``troupe serve``.
"""

from __future__ import annotations

from google.adk.apps import App

from .runtime.app import build_app
from .settings import load_settings
from .tree import build_agent_tree

ADK_APP_NAME = "troupe_team"
"""The App's name: the folder under ``adk_agents/`` that ADK's tools load it from."""


def adk_app(name: str = ADK_APP_NAME) -> App:
    """The troupe App built from the environment's settings, traces kept."""
    settings = load_settings()
    root = build_agent_tree(settings.config)
    return build_app(root, name=name, trace_store=settings.trace_store())
