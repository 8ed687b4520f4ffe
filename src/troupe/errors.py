"""Exceptions raised by troupe: one base class, one module.

Every error derives from :class:`TroupeError`, and every message names the
offending value and the fix. Which one is raised says whose mistake it was:

* :class:`ConfigError` -- configuration: tools, topologies, config files,
  ``TROUPE_*`` variables, options, model names;
* :class:`InvalidRequestError` -- a call that cannot be carried out as made:
  an empty message, a session id that is not text, a session that is not stored;
* :class:`BadArgument` -- an argument a model gave a built-in tool; the tool
  answers with it instead of raising;
* :class:`UnknownAgentError` -- the model kept naming an agent that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence


class TroupeError(Exception):
    """Base class of every error troupe raises on purpose."""


class ConfigError(TroupeError, ValueError):
    """Something the user configured is invalid; the message says how to fix it."""


class InvalidRequestError(TroupeError, ValueError):
    """A call troupe cannot carry out as made (not a configuration mistake)."""


class BadArgument(TroupeError):
    """An argument a tool cannot use: what was wrong and what is accepted."""

    def __init__(self, message: str, accepted: str) -> None:
        super().__init__(message)
        self.accepted = accepted
        """What the tool accepts instead, shown to the model with the error."""


class UnknownAgentError(TroupeError):
    """The model kept naming an agent that does not exist, even after a correction."""

    def __init__(self, agent_name: str, valid_names: Sequence[str]) -> None:
        self.agent_name = agent_name
        """The name the model asked for."""
        self.valid_names = tuple(valid_names)
        """The agent names that do exist in the tree."""
        super().__init__(
            f"The model transferred to agent {agent_name!r}, which does not exist, "
            f"and repeated the mistake after a correction. Valid agents: "
            f"{', '.join(self.valid_names)}. Try a stronger model or check the "
            "routing table with `troupe routing`."
        )


class ToolAdapterError(ConfigError):
    """The configured ``adapt_tool`` callable failed for one tool."""

    def __init__(self, agent_name: str, tool_name: str, cause: BaseException) -> None:
        self.agent_name = agent_name
        self.tool_name = tool_name
        super().__init__(
            f"adapt_tool failed for tool {tool_name!r} of agent {agent_name!r}: "
            f"{type(cause).__name__}: {cause}. Fix the adapter or remove the tool."
        )


def unexpected_failure(exc: BaseException) -> str:
    """What a model hears about an exception nobody planned for: its message as one
    sentence, never the exception's class name or the tool's name (whoever shows the
    error names the tool, once); the traceback is logged at debug level."""
    text = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    said = " ".join(text.split()).rstrip(".") or "no reason given"
    return f"stopped by an internal error: {said}"
