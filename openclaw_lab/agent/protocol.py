"""The agent protocol (``respond(message, context) -> str``) and a scripted agent for tests and demos.

>>> context = "## Memories\\n[2023-05-08 13:56] Ana lives in Porto\\n[2023-05-08 14:00] I like tea"
>>> ScriptedAgent().respond("where does Ana live?", context)
'[2023-05-08 13:56] Ana lives in Porto'
>>> ScriptedAgent(["hi", "bye"]).respond("hello", "")
'hi'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Agent", "AgentError", "ScriptedAgent", "NO_ANSWER"]

NO_ANSWER = "I don't know."
_WORD = re.compile(r"[a-z0-9]+")
# Words too common to make a context line relevant to a message.
_STOPWORDS = frozenset(
    "a an and are as at be by did do does for from has have he her his how i in is it its me my of on or "
    "our she so that the their them they this to was we were what when where which who why will with you your".split()
)


class AgentError(RuntimeError):
    """An agent could not produce a reply: it raised, timed out, or its server answered badly."""


@runtime_checkable
class Agent(Protocol):
    def respond(self, message: str, context: str) -> str:
        """The reply to ``message``, given the memory ``context`` assembled for it."""


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOPWORDS


def most_relevant_line(message: str, context: str) -> str | None:
    """The context line sharing the most content words with ``message`` (first wins a tie); None if none does.

    >>> most_relevant_line("my dog?", "## Memories\\nI like tea\\nMy dog is Rex")
    'My dog is Rex'
    """
    wanted = _words(message)
    best, best_overlap = None, 0
    for line in context.splitlines():
        if line.startswith("#"):
            continue  # a section header, not a memory
        overlap = len(wanted & _words(line))
        if overlap > best_overlap:
            best, best_overlap = line, overlap
    return best


class ScriptedAgent:
    """Replies from a script: a list used in order, a function of (message, context), or (None) an echo.

    The echo returns the context line most relevant to the message (word overlap), or ``NO_ANSWER``.
    Every call is kept in ``calls`` as (message, context), so tests can see what the agent was shown.
    """

    def __init__(self, replies: Sequence[str] | Callable[[str, str], str] | None = None) -> None:
        if isinstance(replies, str):
            raise ValueError(f"replies: expected a list of replies or a function, got the string {replies!r}")
        if replies is not None and not callable(replies):
            replies = list(replies)
            if bad := [r for r in replies if not isinstance(r, str)]:
                raise ValueError(f"replies: {bad[0]!r} is not a string")
        self.replies = replies
        self.calls: list[tuple[str, str]] = []

    def __repr__(self) -> str:
        if self.replies is None:
            return "ScriptedAgent(echo)"
        return f"ScriptedAgent({'function' if callable(self.replies) else f'{len(self.replies)} replies'})"

    def respond(self, message: str, context: str) -> str:
        """The next scripted reply; see the class docstring."""
        self.calls.append((message, context))
        if self.replies is None:
            return most_relevant_line(message, context) or NO_ANSWER
        if callable(self.replies):
            return self.replies(message, context)
        index = len(self.calls) - 1
        if index >= len(self.replies):
            raise AgentError(f"agent: the scripted agent has no reply left; it had {len(self.replies)}")
        return self.replies[index]
