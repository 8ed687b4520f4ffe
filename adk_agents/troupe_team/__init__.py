from . import agent  # noqa: F401  (ADK looks for agent.root_agent)
