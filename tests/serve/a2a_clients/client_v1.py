"""An a2a-sdk 1.x client: fetch a troupe card, send one message, print what came back.

``python client_v1.py CARD_URL MESSAGE [TOKEN]`` prints one JSON object: the
card's name and every text the agent returned.
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
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from reply_texts import texts


async def main(card_url: str, message: str, token: str | None) -> None:
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
        async for event in client.send_message(request):
            answers += texts(MessageToDict(event))
    print(
        json.dumps(
            {
                "card": card.name,
                "texts": answers,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
