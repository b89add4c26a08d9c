"""OpenAI-compatible chat endpoints (llama.cpp, vLLM, Ollama, hosted APIs) through the ``openai`` client.

``ChatClient`` adds what an evaluation needs on top of the client: a cache on disk keyed by (model,
messages, parameters) so that a re-run costs nothing and a changed prompt is a new key, counts of calls,
cache hits, tokens and wall time, and a pace that fits the server it meets:

- requests in flight: ``max_in_flight`` when set; else the server's slots where it reports them (llama.cpp's
  ``/props``); else one at first, one more while the latency holds (``InFlight``);
- a timeout per request from its prompt's tokens, ``max_tokens`` and the measured speed (``Pace``), unless
  ``timeout`` fixes one; a timed-out request is retried alone, with a longer timeout, never into a full queue;
- ``max_tokens`` always sent, so that every request has a bounded cost.

The API key is read from the environment variable the endpoint names; it is never stored.

>>> endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")
>>> endpoint.params()
{'model': 'qwen2.5-7b-instruct', 'temperature': 0.0, 'max_tokens': 256}
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import statistics
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openclaw_lab.errors import OpenClawError

__all__ = ["Endpoint", "ChatClient", "CallCache", "CallStats", "LLMError", "Messages", "Reply", "Pace", "InFlight",
           "server_slots", "DEFAULT_MAX_TOKENS"]  # fmt: skip

Messages = list[dict[str, str]]

DEFAULT_MAX_TOKENS = 256  # a short answer or a one-sentence verdict in JSON fits with room to spare
FIRST_TIMEOUT = 600.0  # before any reply was timed: a 7B model reading 4k tokens on two cores fits in it
MIN_TIMEOUT = 30.0  # the floor of a derived timeout (a loaded machine's hiccups)
TIMEOUT_SLACK = 3.0  # a derived timeout is this many times the predicted seconds (doubles after each timeout)
AUTO_CEILING = 8  # the most requests in flight the probe grows to


class LLMError(OpenClawError):
    """An endpoint that cannot be reached or answers with something other than a chat completion."""


@dataclass(frozen=True)
class Endpoint:
    """One model on one OpenAI-compatible server; ``api_key_env`` names the variable holding its key.

    ``timeout`` (seconds per request) and ``max_in_flight`` are found from the server when left out (None);
    set them to fix them, e.g. a hosted API's rate limit.
    """

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float | None = None
    max_retries: int = 3
    max_in_flight: int | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url: {self.base_url!r} is not an http(s) URL such as 'http://127.0.0.1:8080/v1'")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model: {self.model!r} must name the server's model")
        checks = {
            "max_tokens": (self.max_tokens, 1, "an integer >= 1"),
            "timeout": (self.timeout, 1e-9, "a number of seconds > 0, or left out (derived)"),
            "max_retries": (self.max_retries, 0, "an integer >= 0"),
            "max_in_flight": (self.max_in_flight, 1, "an integer >= 1, or left out (from the server)"),
        }
        for name, (value, least, wanted) in checks.items():
            optional = name in ("timeout", "max_in_flight")
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < least or (
                    name != "timeout" and not isinstance(value, int)):  # fmt: skip
                raise ValueError(f"{name}: {value!r} must be {wanted}")

    def params(self) -> dict[str, Any]:
        """What decides a completion besides the messages (the cache key's other half)."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def api_key(self) -> str:
        """The key from ``api_key_env`` (a local server takes any placeholder)."""
        if self.api_key_env is None:
            return "not-needed"
        key = os.environ.get(self.api_key_env)
        if not key:
            raise LLMError(f"api_key_env: the variable {self.api_key_env} is not set (it holds the key for {self.base_url})")
        return key


@dataclass(frozen=True)
class Reply:
    """One completion: its text, why it stopped (``length``: cut at ``max_tokens``), its tokens and seconds."""

    text: str
    finish_reason: str = ""  # stop, length, or "" where the server does not say
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # waiting for the server, when it was asked (a cached reply keeps its first figure)
    cached: bool = False

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass
class CallStats:
    calls: int = 0  # requests that reached the server
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # wall time spent waiting for the server
    truncated: int = 0  # replies cut at max_tokens
    timeouts: int = 0
    retries: int = 0
    in_flight: int = 0  # the requests in flight it ran with at the end
    in_flight_from: str = ""  # max_in_flight, the server's slots, or probe

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Pace:
    """A server's measured speed: seconds ≈ a · prompt tokens + b · completion tokens, over recent replies.

    Prompt and completion tokens cost differently (reading is batched, writing is one token at a time), so
    both are fitted (least squares); until the replies tell them apart, the slowest seconds per token seen
    stands for both. Prompt tokens are estimated before sending from characters, at the most tokens per
    character seen.

    >>> pace = Pace()
    >>> pace.seconds(1000, 100) is None  # nothing measured yet
    True
    >>> for prompt, completion in [(1000, 10), (400, 60), (800, 30)]:
    ...     pace.observe(4 * prompt, prompt, completion, 0.001 * prompt + 0.02 * completion)
    >>> round(pace.seconds(1000, 256), 2), pace.tokens(4000)
    (6.12, 1000)
    """

    def __init__(self, window: int = 32) -> None:
        self._seen: deque[tuple[int, int, int, float]] = deque(maxlen=window)

    def observe(self, prompt_chars: int, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        if prompt_tokens + completion_tokens > 0 and seconds > 0:
            self._seen.append((prompt_chars, prompt_tokens, completion_tokens, seconds))

    def tokens(self, prompt_chars: int) -> int:
        """Prompt tokens for ``prompt_chars`` characters (half a token per character before any reply)."""
        per_char = max((p / c for c, p, _, _ in self._seen if c > 0), default=0.5)
        return round(prompt_chars * per_char)

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The predicted seconds of one request, or None before any reply."""
        if not self._seen:
            return None
        rows = [(p, c, s) for _, p, c, s in self._seen]
        spp, scc, spc = (sum(p * p for p, _, _ in rows), sum(c * c for _, c, _ in rows),
                         sum(p * c for p, c, _ in rows))  # fmt: skip
        sps, scs = sum(p * s for p, _, s in rows), sum(c * s for _, c, s in rows)
        det = spp * scc - spc * spc
        if det > 1e-3 * spp * scc:  # the replies tell the two costs apart
            a, b = (sps * scc - scs * spc) / det, (scs * spp - sps * spc) / det
            if a > 0 and b > 0:
                return a * prompt_tokens + b * completion_tokens
        slowest = max(s / (p + c) for p, c, s in rows)
        return slowest * (prompt_tokens + completion_tokens)


class InFlight:
    """How many requests go to the server at once, and the gate that holds the rest back.

    ``grow``: start at ``limit``; after ``window`` replies at the kept level, try one more in flight. Keep it
    while the median latency (each reply's seconds over the predicted ones) rose by less than the added
    request is worth (``level / kept / 1.25``: a one-slot server doubles it and is left at one); else go
    back and stop. The first ``level`` replies of a trial are left out (they met no queue yet). A timeout
    settles at one.

    >>> gate = InFlight(1, grow=True, window=2)
    >>> for ratio in (1.0, 1.0):
    ...     gate.observe(gate.acquire(), ratio); gate.release()
    >>> gate.limit  # two came back at one in flight: try two
    2
    >>> for ratio in (1.0, 1.5, 2.0, 2.1):  # a one-slot server: each request waits for the other
    ...     gate.observe(gate.acquire(), ratio); gate.release()
    >>> gate.limit, gate.growing
    (1, False)
    """

    def __init__(self, limit: int, grow: bool = False, ceiling: int = AUTO_CEILING, window: int = 6) -> None:
        self.limit, self.settled, self.growing = limit, limit, grow and limit < ceiling
        self.ceiling, self.window = ceiling, window
        self._busy = 0
        self._kept: list[float] = []  # latency ratios at the kept level
        self._trial: list[float] = []  # at the level on trial
        self._cond = threading.Condition()

    def acquire(self) -> int:
        """Wait for room; the level in flight the request starts at."""
        with self._cond:
            self._cond.wait_for(lambda: self._busy < self.limit)
            self._busy += 1
            return self.limit

    def release(self) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify_all()

    def observe(self, level: int, ratio: float | None) -> None:
        """A reply that started at ``level``, its seconds over the predicted ones (None: no prediction yet)."""
        with self._cond:
            if not self.growing or ratio is None or level != self.limit:
                return
            if self.limit == self.settled:
                self._kept = (self._kept + [ratio])[-self.window:]
                if len(self._kept) == self.window:
                    self._try_next()
                return
            self._trial.append(ratio)
            if len(self._trial) < self.window + self.limit:
                return
            worth = self.limit / self.settled / 1.25
            trial = self._trial[self.limit:]
            if statistics.median(trial) <= worth * statistics.median(self._kept):
                self.settled, self._kept = self.limit, trial[-self.window:]
                self._try_next()
            else:
                self.limit, self.growing = self.settled, False
            self._cond.notify_all()

    def _try_next(self) -> None:
        self._trial = []
        if self.settled < self.ceiling:
            self.limit = self.settled + 1
        else:
            self.growing = False
        self._cond.notify_all()

    def settle(self, limit: int) -> None:
        """Stop growing and keep at most ``limit`` requests in flight (after a timeout: one)."""
        with self._cond:
            self.limit = self.settled = max(1, min(limit, self.limit))
            self.growing, self._trial = False, []

    def probing(self, level: int) -> bool:
        """Whether a request started at ``level`` is a trial of a level not yet kept."""
        return level > self.settled


def server_slots(base_url: str, timeout: float = 2.0) -> int | None:
    """The parallel slots a server reports (llama.cpp's ``/props``: ``total_slots``), or None.

    The one request made outside the ``openai`` client: a GET of the server's properties, which the OpenAI
    API has no call for. llama-cpp-python's server, vLLM and hosted APIs do not report slots (None).
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/props", timeout=timeout) as response:  # noqa: S310 - http(s) only
            slots = json.loads(response.read()).get("total_slots")
    except (OSError, ValueError, AttributeError):
        return None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1 else None


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
        found = self.lookup(key)
        return found.text if found else None

    def lookup(self, key: str) -> Reply | None:
        """The cached reply, with the finish reason, tokens and seconds of the call that made it."""
        with self._lock:
            row = self._db.execute("SELECT reply, usage FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        usage = json.loads(row[1] or "{}")
        return Reply(row[0], usage.get("finish_reason", ""), usage.get("prompt_tokens", 0),
                     usage.get("completion_tokens", 0), usage.get("seconds", 0.0), cached=True)  # fmt: skip

    def put(self, key: str, reply: str | Reply, usage: dict[str, Any] | None = None) -> None:
        if isinstance(reply, Reply):
            usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                     "finish_reason": reply.finish_reason, "seconds": round(reply.seconds, 4)}  # fmt: skip
            reply = reply.text
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", (key, reply, json.dumps(usage or {})))


class _Timeout(Exception):
    """One attempt ran out of time (retried alone, or raised as LLMError after the last retry)."""


RETRIED_STATUS = (408, 409, 429, 500, 502, 503, 504)


@dataclass
class ChatClient:
    """Cached calls to one endpoint, paced to the server; ``LLMError`` names the URL and what came back.

    >>> client = ChatClient(Endpoint("http://127.0.0.1:9/v1", "m", max_in_flight=2))
    >>> client  # the key is never shown
    ChatClient('http://127.0.0.1:9/v1', model='m')
    """

    endpoint: Endpoint
    cache: CallCache | None = None
    stats: CallStats = field(default_factory=CallStats)
    api_key: str | None = field(default=None, repr=False)  # overrides the endpoint's variable (an agent's own key)

    def __post_init__(self) -> None:
        from openai import OpenAI  # imported on use: the QA stage is optional

        # Retries are ours (below): the client's own would resend a timed-out request into a full queue.
        self._client = OpenAI(base_url=self.endpoint.base_url, api_key=self.api_key or self.endpoint.api_key(),
                              max_retries=0)  # fmt: skip
        self._lock = threading.Lock()
        self._gate: InFlight | None = None
        self.pace = Pace()
        self._slack = TIMEOUT_SLACK

    def __repr__(self) -> str:  # never shows the key
        return f"ChatClient({self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    @property
    def gate(self) -> InFlight:
        """The requests in flight: fixed, the server's slots, or probed (asks the server once, on first use)."""
        with self._lock:
            if self._gate is None:
                if self.endpoint.max_in_flight is not None:
                    self._gate, source = InFlight(self.endpoint.max_in_flight), "max_in_flight"
                elif (slots := server_slots(self.endpoint.base_url)) is not None:
                    self._gate, source = InFlight(slots), "the server's slots"
                else:
                    self._gate, source = InFlight(1, grow=True), "probe"
                self.stats.in_flight, self.stats.in_flight_from = self._gate.limit, source
            return self._gate

    def complete(self, messages: Messages) -> str:
        """The first choice's text for ``messages`` (from the cache when this exact call was made before)."""
        return self.reply(messages).text

    def reply(self, messages: Messages, extra: dict[str, Any] | None = None) -> Reply:
        """``complete`` with the finish reason, tokens and seconds; ``extra`` parameters (``response_format``)
        are sent too, and are part of the cache key."""
        params = {**self.endpoint.params(), **(extra or {})}
        key = CallCache.key(params, messages)
        if self.cache is not None and (cached := self.cache.lookup(key)) is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        reply = self._ask(params, messages)
        with self._lock:
            self.stats.calls += 1
            self.stats.seconds += reply.seconds
            self.stats.prompt_tokens += reply.prompt_tokens
            self.stats.completion_tokens += reply.completion_tokens
            self.stats.truncated += reply.truncated
        if self.cache is not None:
            self.cache.put(key, reply)
        return reply

    def complete_many(self, batch: Sequence[Messages]) -> list[str]:
        """``complete`` for each, in order, as many in flight as the gate lets through."""
        return [reply.text for reply in self.replies(batch)]

    def replies(self, batch: Sequence[Messages], on_reply: Callable[[Reply], Any] | None = None,
                extra: dict[str, Any] | None = None) -> list[Reply]:  # fmt: skip
        """``reply`` for each, in order; ``on_reply`` is called as each arrives (a progress bar)."""

        def one(messages: Messages) -> Reply:
            reply = self.reply(messages, extra)
            if on_reply is not None:
                on_reply(reply)
            return reply

        if not batch:
            return []
        gate = self.gate
        workers = min(len(batch), gate.ceiling if gate.growing else gate.limit)
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = [pool.submit(one, messages) for messages in batch]
            return [future.result() for future in futures]
        finally:  # after an error (a dead server), the requests not yet started are dropped, not each retried
            pool.shutdown(wait=True, cancel_futures=True)

    def _ask(self, params: dict[str, Any], messages: Messages) -> Reply:
        """One completion from the server: retried after a refused connection, a 429 or a 5xx with back-off,
        and after a timeout alone (one in flight from now on) with a timeout twice as long."""
        import openai

        gate, chars = self.gate, sum(len(m.get("content", "")) for m in messages)
        longer = 1.0
        for attempt in range(self.endpoint.max_retries + 1):
            if attempt:
                with self._lock:
                    self.stats.retries += 1
            predicted = self._predicted(chars, params["max_tokens"])
            timeout = self._timeout(predicted) * longer
            level = gate.acquire()
            try:
                reply = self._post(params, messages, timeout)
            except _Timeout:
                with self._lock:
                    self.stats.timeouts += 1
                    self._slack *= 2
                gate.settle(1)  # the server is slower than measured, or queued: one at a time from now on
                longer *= 2
                if attempt == self.endpoint.max_retries:
                    raise LLMError(f"llm: no reply from {self._url} within {timeout:g} s "
                                   f"({attempt + 1} attempt(s), the last one alone)") from None  # fmt: skip
                continue
            except (openai.APIConnectionError, openai.APIStatusError) as error:
                status = getattr(error, "status_code", None)
                if attempt == self.endpoint.max_retries or (status is not None and status not in RETRIED_STATUS):
                    raise self._error(error) from error
                time.sleep(self._backoff(error, attempt))
                continue
            finally:
                gate.release()
            expected = self.pace.seconds(reply.prompt_tokens, reply.completion_tokens)  # before this reply
            if not gate.probing(level):  # a trial level's latency is judged against the pace, not learnt
                self.pace.observe(chars, reply.prompt_tokens, reply.completion_tokens, reply.seconds)
            gate.observe(level, reply.seconds / expected if expected else None)
            with self._lock:
                self.stats.in_flight = gate.settled  # the level kept, not one on trial
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _predicted(self, chars: int, max_tokens: int) -> float | None:
        """The predicted seconds of a request whose reply runs to ``max_tokens`` (None before any reply)."""
        return self.pace.seconds(self.pace.tokens(chars), max_tokens)

    def _timeout(self, predicted: float | None) -> float:
        if self.endpoint.timeout is not None:
            return self.endpoint.timeout
        if predicted is None:
            return FIRST_TIMEOUT
        return max(MIN_TIMEOUT, self._slack * predicted)

    @staticmethod
    def _backoff(error: Exception, attempt: int) -> float:
        """The server's Retry-After (at most 30 s), else 0.5, 1, 2 … s."""
        response = getattr(error, "response", None)
        try:
            return min(30.0, float(response.headers.get("retry-after")))
        except (AttributeError, TypeError, ValueError):
            return min(8.0, 0.5 * 2**attempt)

    @property
    def _url(self) -> str:
        return f"{self.endpoint.base_url.rstrip('/')}/chat/completions"

    def _error(self, error: Exception) -> LLMError:
        import openai

        if isinstance(error, openai.APIConnectionError):
            return LLMError(f"llm: cannot reach {self._url}: {error.__cause__ or error}")
        return LLMError(f"llm: POST {self._url} returned HTTP {error.status_code}: {str(error.body)[:300]!r}")

    def _post(self, params: dict[str, Any], messages: Messages, timeout: float) -> Reply:
        import openai

        url = self._url
        start = time.perf_counter()
        try:
            response = self._client.chat.completions.create(messages=messages, timeout=timeout, **params)
        except openai.APITimeoutError as error:
            raise _Timeout() from error
        except (openai.APIConnectionError, openai.APIStatusError):
            raise
        except openai.APIError as error:  # a 200 whose body is not a chat completion
            raise LLMError(f"llm: {url} returned something other than a chat completion: {error}") from error
        except ValueError as error:  # the body is not JSON at all
            raise LLMError(f"llm: {url} did not return JSON: {getattr(error, 'doc', '')[:300]!r}") from error
        seconds = time.perf_counter() - start
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError) as error:
            raise LLMError(f"llm: {url} returned no choices[0].message.content: {str(response)[:300]!r}") from error
        if not isinstance(content, str):
            raise LLMError(f"llm: {url} returned no choices[0].message.content: {str(response)[:300]!r}")
        usage = getattr(response, "usage", None)
        return Reply(content, getattr(choice, "finish_reason", None) or "", getattr(usage, "prompt_tokens", 0) or 0,
                     getattr(usage, "completion_tokens", 0) or 0, seconds)  # fmt: skip
