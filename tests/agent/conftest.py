"""A real OpenAI-compatible chat server on 127.0.0.1, in a thread, for the agent tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class ChatHandler(BaseHTTPRequestHandler):
    """``/v1/chat/completions`` replies with the user's message and the first memory line it was given.

    Other prefixes misbehave: ``/fail`` answers 500, ``/slow`` waits until the test ends, ``/garbage``
    sends HTML, ``/empty`` sends no choices.
    """

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        prefix = self.path.removesuffix("/v1/chat/completions")
        if prefix == "/fail":
            return self._send(500, b'{"error": "model exploded"}')
        if prefix == "/slow":
            self.server.release.wait(10)  # past any client timeout; then close without answering
            return None
        if prefix == "/garbage":
            return self._send(200, b"<html>not json</html>")
        if prefix == "/empty":
            return self._send(200, b'{"choices": []}')
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        memories = [line for line in system.splitlines() if line.startswith("[")]
        content = f"You asked: {user}. I recall: {memories[0] if memories else 'nothing'}"
        reply = {"id": "x", "object": "chat.completion", "model": body["model"],
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}  # fmt: skip
        self._send(200, json.dumps(reply).encode())

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep the test output clean


@pytest.fixture
def chat_server():
    """The running server: ``server.url(prefix)`` is a base URL; the requests it got are in ``server.requests``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    server.requests, server.release = [], threading.Event()
    host, port = server.server_address[:2]
    server.url = lambda prefix="": f"http://{host}:{port}{prefix}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)

