"""An a2a-sdk 1.x client: fetch a troupe card, send one message, print what came back.

``python client_v1.py CARD_URL MESSAGE [TOKEN] [--approve]`` prints one JSON
object: the card's name, every text the agent returned, and the approvals it
was asked for. With ``--approve``, a task that stops for a person's approval
(``input-required`` with ADK's ``adk_request_confirmation`` call) is answered
"yes" on the same task, as a user at an A2A client would, until it ends.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from urllib.parse import urlsplit

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest
from google.protobuf.json_format import MessageToDict, ParseDict  # type: ignore[import-untyped]
from reply_texts import confirmation_requests, texts

MAX_APPROVALS = 5


def _approval(request: dict[str, object], task_id: str, context_id: str) -> Message:
    """A user message approving one ``adk_request_confirmation`` call on a task."""
    part = Part()
    ParseDict(
        {
            "id": request["id"],
            "name": "adk_request_confirmation",
            "response": {"confirmed": True},
        },
        part.data.struct_value,
    )
    ParseDict({"adk_type": "function_response"}, part.metadata)
    return Message(
        role=Role.ROLE_USER,
        message_id=uuid.uuid4().hex,
        task_id=task_id,
        context_id=context_id,
        parts=[part],
    )


async def main(card_url: str, message: str, token: str | None, approve: bool) -> None:
    parts = urlsplit(card_url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        card = await A2ACardResolver(http, f"{parts.scheme}://{parts.netloc}").get_agent_card(
            relative_card_path=parts.path
        )
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=message)]
            )
        )
        answers: list[str] = []
        asked: list[dict[str, object]] = []
        for _ in range(MAX_APPROVALS + 1):
            pending: list[dict[str, object]] = []
            task_id = context_id = ""
            async for event in client.send_message(request):
                reply = MessageToDict(event)
                answers += texts(reply)
                task = reply.get("task") or {}
                status = task.get("status") or {}
                if status.get("state") == "TASK_STATE_INPUT_REQUIRED":
                    # The question is in the status message; the history repeats old ones.
                    pending += confirmation_requests(status.get("message") or {})
                task_id = str(task.get("id") or task_id)
                context_id = str(task.get("contextId") or context_id)
            asked += pending
            if not (approve and pending and task_id):
                break
            request = SendMessageRequest(message=_approval(pending[-1], task_id, context_id))
    print(json.dumps({"card": card.name, "texts": answers, "asked": asked}))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--approve"]
    asyncio.run(main(args[0], args[1], args[2] if len(args) > 2 else None, "--approve" in sys.argv))
