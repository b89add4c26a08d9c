"""OpenAI-compatible chat endpoints (llama.cpp, vLLM, Ollama, hosted APIs) through the ``openai`` client.

``ChatClient`` adds what an evaluation needs on top of the client's timeouts and retries with back-off:
a bounded number of requests in flight, a cache on disk keyed by (model, messages, parameters) so that
a re-run costs nothing and a changed prompt is a new key, and counts of calls, cache hits, tokens and
wall time. The API key is read from the environment variable the endpoint names; it is never stored.

>>> endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")
>>> endpoint.params()
{'model': 'qwen2.5-7b-instruct', 'temperature': 0.0}
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openclaw_lab.errors import OpenClawError

__all__ = ["Endpoint", "ChatClient", "CallCache", "CallStats", "LLMError", "Messages"]

Messages = list[dict[str, str]]


class LLMError(OpenClawError):
    """An endpoint that cannot be reached or answers with something other than a chat completion."""


@dataclass(frozen=True)
class Endpoint:
    """One model on one OpenAI-compatible server; ``api_key_env`` names the variable holding its key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout: float = 60.0
    max_retries: int = 3
    max_in_flight: int = 4

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url: {self.base_url!r} is not an http(s) URL such as 'http://127.0.0.1:8080/v1'")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model: {self.model!r} must name the server's model")
        if self.timeout <= 0 or self.max_retries < 0 or self.max_in_flight < 1:
            raise ValueError(f"timeout/max_retries/max_in_flight: {self.timeout}, {self.max_retries}, "
                             f"{self.max_in_flight} must be > 0, >= 0 and >= 1")  # fmt: skip

    def params(self) -> dict[str, Any]:
        """What decides a completion besides the messages (the cache key's other half)."""
        out: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        return out

    def api_key(self) -> str:
        """The key from ``api_key_env`` (a local server takes any placeholder)."""
        if self.api_key_env is None:
            return "not-needed"
        key = os.environ.get(self.api_key_env)
        if not key:
            raise LLMError(f"api_key_env: the variable {self.api_key_env} is not set (it holds the key for {self.base_url})")
        return key


@dataclass
class CallStats:
    calls: int = 0  # requests that reached the server
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # wall time spent waiting for the server

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class CallCache:
    """Completions on disk in SQLite, keyed by sha256 of (model parameters, messages)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, reply TEXT NOT NULL, usage TEXT)")
        self._lock = threading.Lock()

    @staticmethod
    def key(params: dict[str, Any], messages: Messages) -> str:
        return hashlib.sha256(json.dumps([params, messages], sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM calls WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, reply: str, usage: dict[str, int]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", (key, reply, json.dumps(usage)))


@dataclass
class ChatClient:
    """Cached, bounded calls to one endpoint; ``LLMError`` names the URL and what came back."""

    endpoint: Endpoint
    cache: CallCache | None = None
    stats: CallStats = field(default_factory=CallStats)
    api_key: str | None = field(default=None, repr=False)  # overrides the endpoint's variable (an agent's own key)

    def __post_init__(self) -> None:
        from openai import OpenAI  # imported on use: the QA stage is optional

        self._client = OpenAI(base_url=self.endpoint.base_url, api_key=self.api_key or self.endpoint.api_key(),
                              timeout=self.endpoint.timeout, max_retries=self.endpoint.max_retries)  # fmt: skip
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the key
        return f"ChatClient({self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    def complete(self, messages: Messages) -> str:
        """The first choice's text for ``messages`` (from the cache when this exact call was made before)."""
        params = self.endpoint.params()
        key = CallCache.key(params, messages)
        if self.cache is not None and (cached := self.cache.get(key)) is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        reply, usage, seconds = self._call(params, messages)
        with self._lock:
            self.stats.calls += 1
            self.stats.seconds += seconds
            self.stats.prompt_tokens += usage.get("prompt_tokens", 0)
            self.stats.completion_tokens += usage.get("completion_tokens", 0)
        if self.cache is not None:
            self.cache.put(key, reply, usage)
        return reply

    def complete_many(self, batch: Sequence[Messages]) -> list[str]:
        """``complete`` for each, at most ``max_in_flight`` requests at a time, in order."""
        with ThreadPoolExecutor(max_workers=self.endpoint.max_in_flight) as pool:
            return list(pool.map(self.complete, batch))

    def _call(self, params: dict[str, Any], messages: Messages) -> tuple[str, dict[str, int], float]:
        import openai

        url = f"{self.endpoint.base_url.rstrip('/')}/chat/completions"
        start = time.perf_counter()
        try:
            response = self._client.chat.completions.create(messages=messages, **params)
        except openai.APITimeoutError as error:
            raise LLMError(f"llm: no reply from {url} within {self.endpoint.timeout:g} s") from error
        except openai.APIConnectionError as error:
            raise LLMError(f"llm: cannot reach {url}: {error.__cause__ or error}") from error
        except openai.APIStatusError as error:
            raise LLMError(f"llm: POST {url} returned HTTP {error.status_code}: {str(error.body)[:300]!r}") from error
        except openai.APIError as error:  # a 200 whose body is not a chat completion
            raise LLMError(f"llm: {url} returned something other than a chat completion: {error}") from error
        except ValueError as error:  # the body is not JSON at all
            raise LLMError(f"llm: {url} did not return JSON: {getattr(error, 'doc', '')[:300]!r}") from error
        seconds = time.perf_counter() - start
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as error:
            raise LLMError(f"llm: {url} returned no choices[0].message.content: {str(response)[:300]!r}") from error
        if not isinstance(content, str):
            raise LLMError(f"llm: {url} returned no choices[0].message.content: {str(response)[:300]!r}")
        usage = getattr(response, "usage", None)
        counts = {"prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                  "completion_tokens": getattr(usage, "completion_tokens", 0) or 0}  # fmt: skip
        return content, counts, seconds
