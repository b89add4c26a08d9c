"""An agent that calls an OpenAI-compatible chat-completions server (Ollama, vLLM, llama.cpp, OpenAI).

It goes through ``llm.ChatClient`` (the ``openai`` client: timeouts, retries with back-off). Every
failure (timeout, refused connection, HTTP error, a reply that is not chat-completions JSON) is raised
as ``AgentError`` naming the URL and what came back.

>>> agent = OpenAICompatAgent("http://127.0.0.1:11434/v1", model="llama3.2")
>>> [m["role"] for m in agent.messages("Where does Ana live?", "[2023-05-08 13:56] Ana lives in Porto")]
['system', 'user']
"""

from __future__ import annotations

from openclaw_lab.agent.protocol import AgentError
from openclaw_lab.llm import DEFAULT_MAX_TOKENS, ChatClient, Endpoint, LLMError

__all__ = ["OpenAICompatAgent", "DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with a long-term memory. The memories below were retrieved for this "
    "message; each starts with the date it was recorded. Use them when they are relevant, and say so "
    "when they do not contain the answer."
)


class OpenAICompatAgent:
    """Chat completions from ``{base_url}/chat/completions`` with the memory context in the system message."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float = 0.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout: {timeout!r} must be a positive number of seconds")
        endpoint = Endpoint(base_url.rstrip("/"), model, temperature=temperature, max_tokens=max_tokens,
                            timeout=float(timeout), max_retries=max_retries)  # fmt: skip
        self.client = ChatClient(endpoint, api_key=api_key)
        self.system_prompt = system_prompt

    def __repr__(self) -> str:  # never shows the key
        endpoint = self.client.endpoint
        return f"OpenAICompatAgent({endpoint.base_url!r}, model={endpoint.model!r}, timeout={endpoint.timeout})"

    def messages(self, message: str, context: str) -> list[dict[str, str]]:
        """The chat messages sent: the system prompt with the context, then the user's message."""
        system = f"{self.system_prompt}\n\n{context}" if context.strip() else self.system_prompt
        return [{"role": "system", "content": system}, {"role": "user", "content": message}]

    def respond(self, message: str, context: str) -> str:
        """The first choice's message content; AgentError on any failure."""
        try:
            return self.client.complete(self.messages(message, context))
        except LLMError as error:
            raise AgentError(str(error).replace("llm:", "agent:", 1)) from error
