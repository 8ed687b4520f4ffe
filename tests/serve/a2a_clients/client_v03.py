"""An a2a-sdk 0.3 client: fetch a troupe card, send one message, print what came back.

Run with the Python of a virtual environment holding a2a-sdk 0.3 (the test
creates one): ``python client_v03.py CARD_URL MESSAGE [TOKEN]``. It prints one
JSON object: the card's name and protocol version, and every text the agent
returned.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from urllib.parse import urlsplit

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart
from reply_texts import texts


async def main(card_url: str, message: str, token: str | None) -> None:
    parts = urlsplit(card_url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        card = await A2ACardResolver(
            http, f"{parts.scheme}://{parts.netloc}", agent_card_path=parts.path
        ).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        request = Message(
            role=Role.user, message_id=uuid.uuid4().hex, parts=[Part(root=TextPart(text=message))]
        )
        answers: list[str] = []
        async for event in client.send_message(request):
            items = event if isinstance(event, tuple) else (event,)
            for item in items:
                if item is not None:
                    answers += texts(item.model_dump(mode="json"))
    print(
        json.dumps(
            {
                "card": card.name,
                "protocol_version": card.protocol_version,
                "url": card.url,
                "texts": answers,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
