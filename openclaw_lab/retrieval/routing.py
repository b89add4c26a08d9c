"""Route each query to the retriever suited to its kind: requests for advice go to dense retrieval.

A request ("Can you recommend…", "Any tips…?", "What should I…") names a topic, not the words the user used when
they said what they like or own: "resources to learn video editing" against "I've been trying Premiere Pro's
colour tools". Lexical matching cannot bridge that, and what is fitted on factual questions weighs it as if it
could: on the held-out LongMemEval-format set's preference questions (issue 38), recall_any@5 was dense 0.895,
CombSUM 0.789, the shipped reranker 0.737 and BM25 0.579. ``is_request`` recognises English requests by their
form (an ask addressed to "you", "any tips/ideas/…", "what should I"), never by topic, and Chinese ones by the same
forms ("有什么推荐…", "能不能给我一些建议…", "你建议我…"); no LoCoMo or synthetic question matches it, so routing leaves
their figures as they are.

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


# The same forms in Chinese: "有什么推荐…", "能不能给我一些建议…", "你建议我…", "推荐一些…", "我应该怎么…". A question about
# advice already given names it as past ("你之前推荐…", "你推荐过…", "你当时建议的是…", "他给我推荐了…") and is left out.
ADVICE_ZH = r"(?:推荐|建议|意见|主意|办法|点子)"
REQUEST_ZH = re.compile(
    rf"""
      (?<!没)有(?:什么|没有(?:什么)?|啥|哪些)(?:好的|好|别的|其他)?{ADVICE_ZH}
    | (?:能不能|能否|可不可以|可以|能|请|麻烦你?)(?:再)?(?:给|帮)我(?:一些|一点|点|几个|几条)?{ADVICE_ZH}(?![过了])
    | (?:给|帮)我(?:推荐|建议|出出?主意|想想?办法|挑一?挑|选一?选)(?![过了])
    | (?:^|[，。！？,.!?\s])(?:请|麻烦你?)?(?:推荐|建议)(?:一些|一下|几个|几款|几本|几家|几种|点)
    | 你(?:建议|推荐|觉得)我(?:应该|该)?(?![过了])
    | 我(?:应该|该)(?:怎么|如何|选|买|去|学|用|吃|穿|看|做)
    | 求(?:推荐|建议)
    """,
    re.VERBOSE,
)


def is_request(query: str) -> bool:
    """Whether ``query`` asks for advice or a recommendation (English or Chinese, by its form).

    >>> is_request("有什么推荐的跑鞋吗？"), is_request("你之前推荐我看哪本书？")
    (True, False)
    """
    return REQUEST.search(query) is not None or REQUEST_ZH.search(query) is not None


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
