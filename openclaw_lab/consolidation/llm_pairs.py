"""Fact pairs judged by an LLM: which newer memory updates an older one, and which says it again.

The fitted pair model (``fact_pairs``) learned the synthetic generator's phrasings and carries to none of the
hand-written set's updates ("Rainy again here in Porto, my home" → "we moved to Lisbon"): deciding them takes a
model of meaning. Here any OpenAI-compatible endpoint (``llm.Endpoint``: llama.cpp, vLLM, Ollama or a hosted
API) decides. Candidates are the pair model's (each memory's nearest older memories and those naming a subject
it names: ``fact_pairs.neighbour_pairs``); each is asked once, as ``update``, ``restatement`` or ``unrelated``.
Calls go through ``ChatClient``, whose cache on disk answers a pair asked again (a replay judges the same pairs
at every consolidation run) without a request. Nothing here can be measured on this machine, which has no
LLM: the tests check the mechanics against a stub server.

In an experiment::

    [consolidation]
    supersession = { strategy = "llm", endpoint = { base_url = "http://127.0.0.1:8080/v1", model = "qwen2.5-7b" } }
    merge = { strategy = "llm", endpoint = { base_url = "http://127.0.0.1:8080/v1", model = "qwen2.5-7b" } }

>>> parse_relation("Update. The later statement gives a new city.")
'update'
>>> parse_relation("I cannot tell.") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_lab.consolidation.fact_pairs import RELATIONS, neighbour_pairs
from openclaw_lab.consolidation.merge import RestatementMerge
from openclaw_lab.consolidation.supersession import mark_newest
from openclaw_lab.llm import CallCache, ChatClient, Endpoint, Messages
from openclaw_lab.model import MemoryItem

__all__ = ["LLMPairJudge", "LLMSupersession", "LLMRestatementMerge", "parse_relation", "pair_messages"]

SYSTEM = "You compare two statements from one chat history and answer with a single word."
QUESTION = """Earlier statement ({older_when}, {older_speaker}): {older}
Later statement ({newer_when}, {newer_speaker}): {newer}

Does the later statement change what the earlier one says (a new value of the same fact: a move, a new job, a
changed plan, a retraction), say the same fact again, or neither? Answer with one word: update, restatement or
unrelated."""
_RELATION = re.compile(r"\b(" + "|".join(RELATIONS) + r")\b", re.IGNORECASE)


def pair_messages(older: MemoryItem, newer: MemoryItem) -> Messages:
    """The chat that asks how ``newer`` relates to ``older``."""
    def said(item: MemoryItem) -> dict[str, str]:
        return {"when": item.created_at.date().isoformat(), "speaker": str(item.metadata.get("speaker", "unknown"))}

    fields = {f"older_{k}": v for k, v in said(older).items()} | {f"newer_{k}": v for k, v in said(newer).items()}
    question = QUESTION.format(older=older.content, newer=newer.content, **fields)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def parse_relation(reply: str) -> str | None:
    """The first of ``RELATIONS`` the reply names; None when it names none."""
    found = _RELATION.search(reply)
    return found.group(1).lower() if found else None


class LLMPairJudge:
    """Each candidate pair's relation as ``endpoint`` (an ``Endpoint``'s fields) says; ``k`` and
    ``min_similarity`` choose the candidates (see ``neighbour_pairs``). ``unparsed`` counts replies that named no
    relation (taken as ``unrelated``)."""

    def __init__(self, endpoint: Mapping[str, Any], *, k: int = 5, min_similarity: float = 0.5) -> None:
        if not isinstance(endpoint, Mapping):
            raise ValueError(f"endpoint: {endpoint!r} must be a table such as {{ base_url = ..., model = ... }}")
        self.endpoint, self.k, self.min_similarity = Endpoint(**endpoint), k, min_similarity
        self.unparsed = 0
        self._client: ChatClient | None = None  # made on first use, in the process that replays

    def __repr__(self) -> str:
        return f"LLMPairJudge({self.endpoint.base_url!r}, model={self.endpoint.model!r}, k={self.k})"

    def __getstate__(self) -> dict[str, Any]:  # a plan sent to another process leaves its connections behind
        return {**self.__dict__, "_client": None}

    @property
    def client(self) -> ChatClient:
        from openclaw_lab.embedding import default_cache_path

        if self._client is None:
            self._client = ChatClient(self.endpoint, CallCache(default_cache_path().parent / "llm_calls.sqlite"))
        return self._client

    def judged(
        self, items: Sequence[MemoryItem], relation: str
    ) -> tuple[list[MemoryItem], list[tuple[int, int, float]]]:
        """``items`` oldest first (unmarked, with embeddings), and the candidate pairs judged ``relation``."""
        live, pairs = neighbour_pairs(items, self.k, self.min_similarity)
        replies = self.client.complete_many([pair_messages(live[older], live[newer]) for older, newer, _ in pairs])
        relations = [parse_relation(reply) for reply in replies]
        self.unparsed += relations.count(None)
        return live, [pair for pair, said in zip(pairs, relations) if said == relation]


class LLMSupersession:
    """Mark an older memory superseded when the LLM says a newer one updates it (the newest such replacement is
    named), as ``fact_pairs.PairSupersession`` does with the fitted model."""

    def __init__(self, endpoint: Mapping[str, Any], *, k: int = 5, min_similarity: float = 0.5) -> None:
        self.judge = LLMPairJudge(endpoint, k=k, min_similarity=min_similarity)

    def __repr__(self) -> str:
        return f"LLMSupersession({self.judge!r})"

    def marks(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        return mark_newest(*self.judge.judged(items, "update"))


class LLMRestatementMerge(RestatementMerge):
    """``RestatementMerge`` with the LLM deciding which pairs restate one fact."""

    def __init__(self, endpoint: Mapping[str, Any], *, k: int = 5, min_similarity: float = 0.5) -> None:
        self.judge = LLMPairJudge(endpoint, k=k, min_similarity=min_similarity)

    def __repr__(self) -> str:
        return f"LLMRestatementMerge({self.judge!r})"

    def restatements(self, items: Sequence[MemoryItem]) -> tuple[list[MemoryItem], list[tuple[int, int]]]:
        live, pairs = self.judge.judged(items, "restatement")
        return live, [(older, newer) for older, newer, _ in pairs]
