"""Route each query to the retriever suited to its kind: requests for advice go to dense retrieval.

A request ("Can you recommend…", "Any tips…?", "What should I…") names a topic, not the words the user used when
they said what they like or own: "resources to learn video editing" against "I've been trying Premiere Pro's
colour tools". Lexical matching cannot bridge that, and what is fitted on factual questions weighs it as if it
could: on the held-out LongMemEval-format set's preference questions (issue 38), recall_any@5 was dense 0.895,
CombSUM 0.789, the shipped reranker 0.737 and BM25 0.579. ``is_request`` recognises English requests by their
form (an ask addressed to "you", "any tips/ideas/…", "what should I"), never by topic; no LoCoMo or synthetic
question matches it, so routing leaves their figures as they are.

>>> is_request("I'm planning a trip to Denver. Any suggestions on what to do there?")
True
>>> is_request("What did Melanie recommend to Caroline?")
False
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem
from openclaw_lab.retrieval.protocol import Retriever, SearchEach, TrainedModel, check_query

__all__ = ["QueryRouter", "is_request"]

ADVICE = r"(?:suggestions?|recommendations?|tips|ideas|advice|thoughts)"
REQUEST = re.compile(
    rf"""
      \b(?:can|could|would|will)\s+you\b[^?.!]*\b(?:recommend|suggest|give\s+me|help\s+me|find\s+me|point\s+me)\b
    | \bany\s+(?:good\s+|other\s+|more\s+|new\s+)?{ADVICE}\b
    | \b(?:do|would)\s+you\s+have\s+(?:any\s+)?{ADVICE}\b
    | \bwhat\s+(?:should|could|can|would)\s+i\b
    | ^\s*(?:please\s+)?(?:recommend|suggest)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def is_request(query: str) -> bool:
    """Whether ``query`` asks for advice or a recommendation (English, by its form)."""
    return REQUEST.search(query) is not None


class QueryRouter(SearchEach):
    """Each query searched by the first route whose test it passes, else by ``default``; every retriever indexes
    the same items. A fitted retriever among them keeps its check against conversations it was fitted on.

    >>> from openclaw_lab.retrieval.bm25 import BM25Retriever
    >>> router = QueryRouter(BM25Retriever(), [(is_request, BM25Retriever())])
    >>> router.route("Can you suggest a hotel?") is router.routes[0][1]
    True
    """

    def __init__(self, default: Retriever, routes: Sequence[tuple[Callable[[str], bool], Retriever]]) -> None:
        self.default, self.routes = default, list(routes)

    def __repr__(self) -> str:
        return f"QueryRouter({self.default!r}, routes={self.routes!r})"

    @property
    def retrievers(self) -> list[Retriever]:
        return [self.default, *(retriever for _, retriever in self.routes)]

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        for retriever in self.retrievers:
            retriever.index(items)

    def check_unseen(self, conversation_ids: Iterable[str]) -> None:
        """Raise if a fitted retriever among the routes was fitted on any of ``conversation_ids``."""
        conversation_ids = list(conversation_ids)
        for retriever in self.retrievers:
            if isinstance(retriever, TrainedModel):
                retriever.check_unseen(conversation_ids)

    def route(self, query: str) -> Retriever:
        """The retriever that answers ``query``."""
        return next((retriever for test, retriever in self.routes if test(query)), self.default)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        return self.route(check_query(query)).search(query, k, filter)
