"""The :class:`Assistant`: ADK's Runner plus troupe's recovery from bad transfers."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, Sequence

from google.adk.agents.base_agent import BaseAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from ..errors import UnknownAgentError

logger = logging.getLogger("troupe.runtime")

DEFAULT_APP_NAME = "troupe"
DEFAULT_USER_ID = "user"

# ADK 2.13, older ADK Python releases, and the Go release, in that order.
_UNKNOWN_AGENT_PATTERNS = (
    re.compile(r"Transfer target agent '([^']+)' not found"),
    re.compile(r"Agent '?([^'\s]+)'? not found in the agent tree"),
    re.compile(r"failed to find agent: (\S+)"),
)


def unknown_agent_name(error: BaseException) -> str | None:
    """The agent name in an ADK 'agent not found' error, else None."""
    message = str(error)
    for pattern in _UNKNOWN_AGENT_PATTERNS:
        if match := pattern.search(message):
            return match.group(1)
    return None


def correction_message(bad_name: str, valid_names: Sequence[str]) -> str:
    """The message sent to the model after it named an agent that does not exist."""
    return (
        f'[System: Agent "{bad_name}" does not exist. Valid agents: '
        f"{', '.join(valid_names)}. Please retry using one of the valid agent names "
        "listed above.]"
    )


def visible_text(event: Event) -> str:
    """The user-visible text of an event: model text, no thoughts, no partials."""
    if event.partial or event.author == "user" or not event.content:
        return ""
    return "".join(
        part.text for part in event.content.parts or [] if part.text and not part.thought
    )


class Assistant:
    """Runs an agent tree over ADK's Runner, with sessions created on first use."""

    def __init__(
        self,
        root_agent: BaseAgent,
        session_service: BaseSessionService | None = None,
        *,
        app_name: str = DEFAULT_APP_NAME,
        user_id: str = DEFAULT_USER_ID,
    ) -> None:
        self.root_agent = root_agent
        self.session_service = session_service or InMemorySessionService()
        self.app_name = app_name
        self.user_id = user_id
        self.runner = Runner(
            app_name=app_name,
            agent=root_agent,
            session_service=self.session_service,
            auto_create_session=False,
        )

    @property
    def agent_names(self) -> list[str]:
        """Names of the agents a transfer may target (the root's sub-agents)."""
        return [agent.name for agent in self.root_agent.sub_agents]

    async def ensure_session(self, session_id: str) -> None:
        """Create the session if it does not exist yet."""
        found = await self.session_service.get_session(
            app_name=self.app_name, user_id=self.user_id, session_id=session_id
        )
        if found is None:
            await self.session_service.create_session(
                app_name=self.app_name, user_id=self.user_id, session_id=session_id
            )

    async def _run_once(self, session_id: str, text: str) -> AsyncGenerator[Event, None]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in self.runner.run_async(
            user_id=self.user_id, session_id=session_id, new_message=message
        ):
            yield event

    async def run(self, session_id: str, text: str) -> AsyncGenerator[Event, None]:
        """Send ``text`` and yield ADK events as they happen.

        When the model transfers to an agent that does not exist, a correction
        naming the valid agents is sent in the same session and the turn is
        retried once; a second failure raises :class:`UnknownAgentError`.
        """
        await self.ensure_session(session_id)
        try:
            async for event in self._run_once(session_id, text):
                yield event
            return
        except Exception as exc:
            bad = unknown_agent_name(exc)
            if bad is None:
                raise
        valid = self.agent_names
        logger.warning(
            "Model transferred to unknown agent %r; retrying once with a correction.", bad
        )
        try:
            async for event in self._run_once(session_id, correction_message(bad, valid)):
                yield event
        except Exception as exc:
            again = unknown_agent_name(exc)
            if again is None:
                raise
            raise UnknownAgentError(again, valid) from exc

    async def run_and_collect(self, session_id: str, text: str) -> str:
        """Send ``text`` and return the user-visible reply."""
        chunks = [visible_text(event) async for event in self.run(session_id, text)]
        return "\n".join(chunk for chunk in chunks if chunk)
