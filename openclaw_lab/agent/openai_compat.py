"""An agent that calls an OpenAI-compatible chat-completions server (Ollama, vLLM, llama.cpp, OpenAI).

Standard library only (``urllib``). A local server needs no key; requests to a loopback host never
go through an environment proxy. Every failure (timeout, refused connection, HTTP error, a reply
that is not chat-completions JSON) is raised as ``AgentError`` naming the URL and what came back.

>>> agent = OpenAICompatAgent("http://127.0.0.1:11434/v1", model="llama3.2")
>>> [m["role"] for m in agent.messages("Where does Ana live?", "[2023-05-08 13:56] Ana lives in Porto")]
['system', 'user']
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from openclaw_lab.agent.protocol import AgentError

__all__ = ["OpenAICompatAgent", "DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with a long-term memory. The memories below were retrieved for this "
    "message; each starts with the date it was recorded. Use them when they are relevant, and say so "
    "when they do not contain the answer."
)
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_EXCERPT = 300  # characters of a server's body quoted in an error


class OpenAICompatAgent:
    """POST ``{base_url}/chat/completions`` with the memory context in the system message."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url: {base_url!r} is not an http(s) URL such as 'http://127.0.0.1:11434/v1'")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: {model!r} must name the server's model, e.g. 'llama3.2'")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout: {timeout!r} must be a positive number of seconds")
        self.base_url, self.model, self.api_key = base_url.rstrip("/"), model, api_key
        self.timeout, self.system_prompt = float(timeout), system_prompt
        self.temperature, self.max_tokens = temperature, max_tokens

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatAgent({self.base_url!r}, model={self.model!r}, timeout={self.timeout})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def messages(self, message: str, context: str) -> list[dict[str, str]]:
        """The chat messages sent: the system prompt with the context, then the user's message."""
        system = f"{self.system_prompt}\n\n{context}" if context.strip() else self.system_prompt
        return [{"role": "system", "content": system}, {"role": "user", "content": message}]

    def respond(self, message: str, context: str) -> str:
        """The first choice's message content; AgentError on any failure."""
        payload: dict[str, Any] = {"model": self.model, "messages": self.messages(message, context)}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return _reply_content(self._post(payload), self.url)

    def _post(self, payload: dict[str, Any]) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode(), headers=headers, method="POST")
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8", "replace")[:_EXCERPT]
            raise AgentError(f"agent: POST {self.url} returned HTTP {error.code} {error.reason}: {body!r}") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, (TimeoutError, socket.timeout)):
                raise AgentError(f"agent: no reply from {self.url} within {self.timeout:g} s") from error
            raise AgentError(f"agent: cannot reach {self.url}: {error.reason}") from error
        except TimeoutError as error:  # the connection opened but the reply did not come in time
            raise AgentError(f"agent: no reply from {self.url} within {self.timeout:g} s") from error
        except (OSError, http.client.HTTPException) as error:  # the server dropped or garbled the reply
            raise AgentError(f"agent: the connection to {self.url} failed: {error}") from error

    def _opener(self) -> urllib.request.OpenerDirector:
        if urlsplit(self.base_url).hostname in _LOOPBACK:
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a local server: no proxy
        return urllib.request.build_opener()


def _reply_content(body: bytes, url: str) -> str:
    """``choices[0].message.content`` of a chat-completions body, or AgentError quoting the body."""
    excerpt = body.decode("utf-8", "replace")[:_EXCERPT]
    try:
        data = json.loads(body)
    except ValueError as error:
        raise AgentError(f"agent: {url} did not return JSON: {excerpt!r}") from error
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as error:
        raise AgentError(f"agent: {url} returned no choices[0].message.content: {excerpt!r}") from error
    if not isinstance(content, str):
        raise AgentError(f"agent: {url} returned a non-text message content: {excerpt!r}")
    return content
