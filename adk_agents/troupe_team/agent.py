"""The troupe team for ``adk web adk_agents`` / ``adk run adk_agents/troupe_team``."""

from troupe.adk_app import root_agent

__all__ = ["root_agent"]
