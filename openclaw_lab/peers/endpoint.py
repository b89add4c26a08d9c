"""An OpenAI-compatible ``/v1/embeddings`` endpoint on 127.0.0.1 that serves one of our embedders.

A memory system that embeds over HTTP (MemPalace's ``openai-compat`` setting) then uses our offline
model and its on-disk cache instead of downloading its own. The standard library's threading HTTP
server is enough for one local client; no web framework is worth a dependency here.

>>> from openclaw_lab.embedding import Embedder, EmbeddingCache
>>> with EmbeddingEndpoint(Embedder(cache=EmbeddingCache(":memory:"))) as endpoint:  # doctest: +SKIP
...     endpoint.url
'http://127.0.0.1:41235/v1'
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openclaw_lab.embedding import Embedder

__all__ = ["EmbeddingEndpoint"]


class EmbeddingEndpoint:
    """Serves ``embedder`` at ``endpoint.url`` from ``start()`` to ``stop()`` (or for a ``with`` block)."""

    def __init__(self, embedder: Embedder, host: str = "127.0.0.1", port: int = 0) -> None:
        self.embedder = embedder
        self._server = ThreadingHTTPServer((host, port), _handler(embedder))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> EmbeddingEndpoint:
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedding-endpoint", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> EmbeddingEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(embedder: Embedder) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()  # one encode at a time: the model and its cache are shared

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                return self._reply(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                texts = body["input"]
                texts = [texts] if isinstance(texts, str) else list(texts)
                if not all(isinstance(text, str) for text in texts):
                    raise ValueError("input: every item must be a string")
            except (ValueError, KeyError, TypeError) as error:
                return self._reply(400, {"error": {"message": f"bad request: {error}"}})
            with lock:
                vectors = embedder.encode(texts, progress=False) if texts else []
            data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vectors)]
            self._reply(200, {"object": "list", "data": data, "model": embedder.model_id,
                              "usage": {"prompt_tokens": 0, "total_tokens": 0}})  # fmt: skip

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request would flood a replay
            pass

    return Handler
