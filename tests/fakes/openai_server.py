"""A scripted OpenAI-compatible chat completions server on 127.0.0.1.

It answers ``POST /v1/chat/completions`` (non-streaming) with the scripted
replies in order and records every request body, so a test can drive a
LiteLLM model over real HTTP without any network beyond the loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from troupe.testing import FunctionCallReply


def tool_call_reply(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """An assistant message that calls one tool."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def text_reply(text: str) -> dict[str, Any]:
    """An assistant message with plain text."""
    return {"role": "assistant", "content": text}


def wire_replies(replies: Iterable[Any]) -> list[dict[str, Any]]:
    """A :class:`~troupe.testing.ScriptedModel` script (text and ``call(...)`` replies)
    as the server's chat messages, in the same order."""
    wire = []
    for index, reply in enumerate(replies):
        if isinstance(reply, FunctionCallReply):
            wire.append(tool_call_reply(reply.name, dict(reply.args), f"call_{index}"))
        else:
            wire.append(text_reply(str(reply)))
    return wire


def failure(status: int, message: str = "") -> dict[str, Any]:
    """A scripted HTTP error (e.g. 429 or 500) instead of a reply, with its message."""
    return {"status": status, "message": message or f"scripted HTTP {status}"}


def slow(seconds: float, reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, sent after waiting ``seconds``."""
    return {**reply, "delay": seconds}


def cached(tokens: int, reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, with usage saying ``tokens`` of the prompt came from the provider's cache."""
    return {**reply, "cached_tokens": tokens}


@dataclass
class FakeOpenAI:
    """The server's script and what it received."""

    replies: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    """The Authorization header of each request (None when absent)."""
    port: int = 0
    models: list[str] | None = None
    """What ``GET /v1/models`` lists (None: the route is absent, 404)."""
    props: dict[str, Any] | None = None
    """What llama.cpp's ``GET /props`` answers (None: absent, 404)."""
    probes: list[tuple[str, str | None]] = field(default_factory=list)
    """Each GET (path, Authorization header): troupe's setup check, not chat requests."""

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completion(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        index = len(self.requests) - 1
        if index >= len(self.replies):
            return 500, {"error": {"message": f"script exhausted at request {index + 1}"}}
        message = self.replies[index]
        if "delay" in message:
            time.sleep(message["delay"])
        if "status" in message:
            return message["status"], {"error": {"message": message["message"]}}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if "cached_tokens" in message:
            usage["prompt_tokens_details"] = {"cached_tokens": message["cached_tokens"]}
        message = {k: v for k, v in message.items() if k not in ("delay", "cached_tokens")}
        return 200, {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }


def stream_chunks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat completion as the chunks an OpenAI-compatible server streams."""
    choice = payload["choices"][0]
    message = choice["message"]
    base = {k: payload[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    words = (message.get("content") or "").split(" ")
    if message.get("content"):
        chunks += [chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)]
    for index, call in enumerate(message.get("tool_calls") or []):
        chunks.append(chunk({"tool_calls": [{**call, "index": index}]}))
    last = chunk({}, choice["finish_reason"])
    last["usage"] = payload["usage"]
    return [*chunks, last]


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            fake.paths.append(self.path)
            fake.authorizations.append(self.headers.get("Authorization"))
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            status, payload = fake.completion(body)
            if body.get("stream") and status == 200:
                self._stream(payload)
            else:
                self._send(status, payload)

        def do_GET(self) -> None:
            fake.probes.append((self.path, self.headers.get("Authorization")))
            path = self.path.rstrip("/")
            if path == "/v1/models" and fake.models is not None:
                listed = [{"id": name, "object": "model"} for name in fake.models]
                self._send(200, {"object": "list", "data": listed})
            elif path == "/props" and fake.props is not None:
                self._send(200, fake.props)
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _stream(self, payload: dict[str, Any]) -> None:
            """The completion as server-sent chunks, the text a word at a time."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in stream_chunks(payload):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a turn timeout in a test) closes the socket
        # before the scripted reply is written; that is expected, not an error.
        pass


@contextmanager
def serve(
    replies: list[dict[str, Any]],
    *,
    models: list[str] | None = None,
    props: dict[str, Any] | None = None,
) -> Iterator[FakeOpenAI]:
    """Run the fake server on a free port of 127.0.0.1 until the block ends."""
    fake = FakeOpenAI(replies=replies, models=models, props=props)
    server = _QuietServer(("127.0.0.1", 0), _handler(fake))
    fake.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="fake-openai", daemon=True
    )
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
