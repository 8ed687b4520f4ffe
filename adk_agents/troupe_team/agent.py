"""The troupe team for ``adk web adk_agents`` / ``adk run adk_agents/troupe_team``.

ADK's loader uses ``app`` (the tree with troupe's runtime plugins) and falls
back to ``root_agent`` only when there is no App.
"""

from troupe.adk_app import adk_app

app = adk_app()
root_agent = app.root_agent

__all__ = ["app", "root_agent"]
