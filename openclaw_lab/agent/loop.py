"""The memory-aware agent loop: assemble context from the tiers, ask the agent, store the turn.

One ``process(message)``: validate, gather candidates (the user's relevant long-term memories, the
current session's memories, its working memory), assemble them within the budgets, call the agent,
and only then write, through the manager's one write path: the turn goes to the session store
(episodic) and working memory, and when the remember policy says so, it is promoted: a long-term
(semantic) copy with the policy's importance. (In a replay the same policy decides admission instead:
whether a unit is stored at all.) Nothing is
written when the message is bad or the agent fails. Sessions persist in the episodic SQLite file, so
a new process for the same user finds their earlier sessions.

>>> import tempfile
>>> from openclaw_lab.agent.protocol import ScriptedAgent
>>> from openclaw_lab.manager import MemoryManager
>>> from openclaw_lab.stores.exact import ExactStore
>>> loop = MemoryAwareAgent(MemoryManager.open(tempfile.mkdtemp(), store=ExactStore()), ScriptedAgent(["Noted!"]))
>>> _ = loop.start_session("s1")
>>> turn = loop.process("Remember this: my sister Ana lives in Porto")
>>> turn.reply, turn.promoted is not None, turn.item.content
('Noted!', True, 'User: Remember this: my sister Ana lives in Porto | Assistant: Noted!')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openclaw_lab.agent.context import AssembledContext, ContextAssembler
from openclaw_lab.agent.protocol import Agent, AgentError
from openclaw_lab.agent.remember import RememberDecision, RememberPolicy, SeedRememberPolicy
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import Hit, Importance, MemoryFilter, MemoryItem, MemoryQuery, MemoryTier, check_k
from openclaw_lab.tiers.episodic import SessionInfo
from openclaw_lab.tiers.working import render_line

__all__ = ["AgentTurn", "MemoryAwareAgent", "turn_text", "DEFAULT_BUDGETS"]

# (query, k, filter) -> hits, higher score better: a Retriever's bound ``search`` fits as it is.
LongTermSearch = Callable[[str, int, MemoryFilter], Sequence[Hit]]
DEFAULT_BUDGETS = {"long_term": 600, "session": 400, "working": 500}
LONG_TERM = frozenset({MemoryTier.EPISODIC, MemoryTier.SEMANTIC})


def turn_text(message: str, reply: str) -> str:
    """One interaction as a single memory line.

    >>> turn_text("I like tea", "Noted.")
    'User: I like tea | Assistant: Noted.'
    """
    return f"User: {message} | Assistant: {reply}"


@dataclass(frozen=True)
class AgentTurn:
    """The reply, the context it was given, the stored turn and its long-term copy (None if not promoted)."""

    reply: str
    context: AssembledContext
    item: MemoryItem
    promoted: MemoryItem | None
    importance: Importance
    decision: RememberDecision


class MemoryAwareAgent:
    """An agent with memory: each ``process`` reads the tiers, replies, then writes the turn once."""

    def __init__(
        self,
        memory: MemoryManager,
        agent: Agent,
        assembler: ContextAssembler | None = None,
        remember_policy: RememberPolicy | None = None,
        *,
        user_id: str | None = None,
        long_term_k: int = 5,
        session_limit: int = 20,
        long_term_search: LongTermSearch | None = None,
    ) -> None:
        self.memory, self.agent = memory, agent
        self.assembler = assembler or ContextAssembler(memory.embedder.count_tokens, 1500, DEFAULT_BUDGETS)
        self.remember_policy = remember_policy or SeedRememberPolicy()
        self.user_id = user_id or memory.user_id
        self.long_term_k = check_k(long_term_k, "long_term_k")
        self.session_limit = check_k(session_limit, "session_limit")
        # A search handed in keeps its own access records; the memory's own search is recorded here.
        self.long_term_search = long_term_search or self._search_memory
        self._record_access = long_term_search is None
        self.session_id: str | None = None

    def __repr__(self) -> str:
        return f"MemoryAwareAgent(user_id={self.user_id!r}, agent={self.agent!r}, session_id={self.session_id!r})"

    # sessions
    def start_session(self, session_id: str, metadata: Mapping[str, Any] | None = None) -> SessionInfo:
        """Open (or resume) this user's session ``session_id``; later turns are stored in it."""
        info = self.memory.episodic.create_session(
            session_id, user_id=self.user_id, now=self.memory.clock.now(), metadata=metadata
        )
        self.session_id = session_id
        return info

    def previous_sessions(self, limit: int = 5) -> list[SessionInfo]:
        """The user's other sessions, most recently updated first (they survive a restart)."""
        sessions = [s for s in self.memory.episodic.user_sessions(self.user_id) if s.id != self.session_id]
        return sessions[: check_k(limit, "limit")]

    def end_session(self) -> None:
        self.memory.episodic.end_session(self._current_session(), self.memory.clock.now())
        self.session_id = None

    # one turn
    def context_for(self, message: str) -> tuple[AssembledContext, list[Hit]]:
        """The context ``process`` would give the agent, and the long-term hits behind it; writes nothing."""
        session_id = self._current_session()
        user_sessions = tuple(s.id for s in self.memory.episodic.user_sessions(self.user_id))
        scope = MemoryFilter(tiers=LONG_TERM, session_ids=user_sessions or (session_id,))
        hits = list(self.long_term_search(message, self.long_term_k, scope))
        candidates = {
            "long_term": [hit.item for hit in hits],
            "session": self.memory.episodic.list_memories(session_id, limit=self.session_limit),
            "working": list(reversed(self.memory.working(session_id).items())),  # newest first
        }
        return self.assembler.assemble(candidates), hits

    def process(
        self, message: str, *, source_ids: Sequence[str] = (), metadata: Mapping[str, Any] | None = None
    ) -> AgentTurn:
        """Reply to ``message`` with memory, then store the turn; AgentError if the agent fails."""
        if not isinstance(message, str) or not message.strip():
            raise ValueError(f"message: {message!r} is empty; give the user's message as a non-empty string")
        now = self.memory.clock.now()
        fields = self._turn_fields(source_ids, metadata)
        MemoryItem.new(message, now=now, **fields)  # bad source_ids/metadata fail here, before the agent is asked
        self._check_fits_working(message, "message")
        context, hits = self.context_for(message)
        reply = self._ask(message, context.text)
        decision = self.remember_policy.decide(message, reply)
        text = turn_text(message, reply)
        item = MemoryItem.new(text, now=now, importance=decision.importance, **fields)
        self._check_fits_working(render_line(item), "reply")
        item = item.replace(embedding=self.memory.embedder.encode_one(text))
        copies = self.memory.write([item], promote_ids={item.id} if decision.remember else (), user_id=self.user_id)
        self.memory.working(item.session_id).put(item)
        if self._record_access:
            used = set(context.used_item_ids.get("long_term", ()))
            self.memory.record_access([hit for hit in hits if hit.item.id in used])
        return AgentTurn(reply, context, item, copies[0] if copies else None, decision.importance, decision)

    # helpers
    def _current_session(self) -> str:
        if self.session_id is None:
            raise RuntimeError("session_id: no session is open; call start_session(session_id) first")
        return self.session_id

    def _search_memory(self, query: str, k: int, scope: MemoryFilter) -> list[Hit]:
        # Access is recorded after the agent replies, and only for the hits the context used.
        return self.memory.search(MemoryQuery(query, filter=scope, limit=k), record_access=False)

    def _ask(self, message: str, context: str) -> str:
        try:
            reply = self.agent.respond(message, context)
        except AgentError:
            raise
        except Exception as error:
            raise AgentError(f"agent: {self.agent!r} failed with {type(error).__name__}: {error}") from error
        if not isinstance(reply, str) or not reply.strip():
            raise AgentError(f"agent: {self.agent!r} returned an empty reply {reply!r}; nothing was stored")
        return reply

    def _check_fits_working(self, text: str, field_name: str) -> None:
        working = self.memory.working(self._current_session())
        tokens = working.count_tokens(text)
        if tokens > working.max_tokens:
            raise ValueError(
                f"{field_name}: the turn has {tokens} tokens, more than working memory's whole budget of "
                f"{working.max_tokens}; nothing was stored"
            )

    def _turn_fields(self, source_ids: Sequence[str], metadata: Mapping[str, Any] | None) -> dict[str, Any]:
        return {
            "session_id": self._current_session(), "source": "agent", "tags": ("turn",),
            "source_ids": source_ids, "metadata": {"user_id": self.user_id, **(metadata or {})},
        }  # fmt: skip
