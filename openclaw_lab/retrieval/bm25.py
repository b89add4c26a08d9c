"""Sparse retrieval: real BM25 on bm25s (IDF and average document length over the whole corpus).

bm25s builds its index over a whole corpus at once, so ``index`` only tokenises the new items and
marks the index stale; the next ``search`` rebuilds it over every item (cost linear in the corpus).
Index items in batches between searches rather than one search per added item.

Only items sharing at least one query term (with a positive score) are hits: an item without a
query term scores 0 (or a constant floor under ``bm25l`` and ``bm25+``), which is noise, not relevance.
So a search may return fewer than ``k`` hits. (``robertson`` clamps the IDF of a term found in half
the items or more to 0, so such a term alone finds nothing.) Filters mask items before the top ``k`` is cut.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> bm25 = BM25Retriever()
>>> bm25.index([MemoryItem.new(text, now=datetime(2023, 5, 8), id=str(i))
...             for i, text in enumerate(["I adopted a puppy", "We went hiking", "The puppy chewed my shoes"])])
>>> [hit.item.id for hit in bm25.search("puppies", k=5)]
['0', '2']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, to_timestamp
from openclaw_lab.retrieval.protocol import SearchEach, check_query
from openclaw_lab.retrieval.tokenize import CJK_MODES, Stopwords, resolve_stopwords, tokenize_many
from openclaw_lab.stores.codec import numeric_mask

__all__ = ["BM25Retriever", "BM25_METHODS"]

BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


class BM25Retriever(SearchEach):
    """BM25 over item contents; scores are BM25 sums over query terms (higher is better).

    ``method`` and ``idf_method`` are bm25s's variants (``lucene`` by default; ``atire`` with
    ``idf_method="robertson"`` reproduces rank_bm25's BM25Okapi where every IDF is positive).
    ``cjk``: how Chinese, Japanese and Korean text is cut into words (``jieba`` or ``bigram``; see ``tokenize``).
    """

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        idf_method: str | None = None,
        stemmer: str | None = "english",
        stopwords: Stopwords = "en",
        cjk: str = "jieba",
    ) -> None:
        self.k1, self.b, self.method, self.idf_method = k1, b, method, idf_method
        self.stemmer, self.stopwords, self.cjk = stemmer, stopwords, cjk
        self._items: dict[str, MemoryItem] = {}
        self._tokens: dict[str, list[str]] = {}
        self._stale = True
        self._checked = False
        self._bm25: Any = None
        self._ids: list[str] = []
        self._importance = np.zeros(0, dtype=np.int8)
        self._created = np.zeros(0, dtype=np.float64)
        self._id_rank = np.zeros(0, dtype=np.int64)
        self._check_params()  # a bad setting fails here, where it was given (an experiment: before any replay)

    def __repr__(self) -> str:
        return (
            f"BM25Retriever(k1={self.k1}, b={self.b}, method={self.method!r}, idf_method={self.idf_method!r}, "
            f"stemmer={self.stemmer!r}, stopwords={self.stopwords!r}, cjk={self.cjk!r})"
        )

    def count(self) -> int:
        return len(self._items)

    def index(self, items: Sequence[MemoryItem]) -> None:
        """Add or replace items by id; the bm25s index is rebuilt at the next search."""
        self._check_params()
        items = list(items)
        for i, item in enumerate(items):
            if not isinstance(item, MemoryItem):
                raise ValueError(f"items[{i}]: {item!r} is not a MemoryItem")
        if not items:
            return
        tokens = self._tokenize([item.content for item in items])
        for item, doc in zip(items, tokens):
            self._items[item.id] = item
            self._tokens[item.id] = doc
        self._stale = True

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """At most ``k`` items with a query term that pass ``filter``, by BM25 score descending."""
        query, k = check_query(query), check_k(k)
        if not self._items:
            return []
        token_ids = self._token_ids(query)
        if not token_ids:
            return []
        scores = self._bm25.get_scores_from_ids(token_ids)
        rows = np.flatnonzero(self._has_a_term(token_ids) & (scores > 0) & self._numeric_mask(filter))
        if filter is not None and _needs_items(filter):
            rows = np.asarray(self._first_matching(rows, scores, k, filter), dtype=np.int64)
        else:
            rows = self._best(rows, scores, k)
        rows = rows[np.lexsort((self._id_rank[rows], -scores[rows]))]  # sorted_hits's order: score, then id
        return [Hit(self._items[self._ids[r]], float(scores[r])) for r in rows]

    def _best(self, rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` rows of highest score, ties at the cut broken by id (as ``sorted_hits`` does)."""
        if rows.size <= k:
            return rows
        kth = np.partition(scores[rows], -k)[-k]
        above, tied = rows[scores[rows] > kth], rows[scores[rows] == kth]
        need = k - above.size
        if tied.size > need:
            tied = tied[np.argpartition(self._id_rank[tied], need - 1)[:need]]
        return np.concatenate([above, tied])

    def _first_matching(self, rows: np.ndarray, scores: np.ndarray, k: int, filter: MemoryFilter) -> list[int]:
        """Walk the ranking (score, then id) and keep the first ``k`` rows that pass the reference ``matches``."""
        kept: list[int] = []
        for r in rows[np.lexsort((self._id_rank[rows], -scores[rows]))]:
            if filter.matches(self._items[self._ids[r]]):
                kept.append(int(r))
                if len(kept) == k:
                    break
        return kept

    def scores(self, query: str) -> np.ndarray:
        """BM25 scores of every indexed item for ``query``, in index order (``ids``).

        Items without a query term score 0, except under ``bm25l`` and ``bm25+``, whose floor is positive.
        """
        token_ids = self._token_ids(check_query(query))
        if not token_ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        return self._bm25.get_scores_from_ids(token_ids)

    def _token_ids(self, query: str) -> list[int]:
        """The query's terms as bm25s vocabulary ids (unknown terms dropped; repeats kept, as in bm25s)."""
        self._build()
        if self._bm25 is None:
            return []
        return self._bm25.get_tokens_ids(self._tokenize([query])[0])

    def _has_a_term(self, token_ids: list[int]) -> np.ndarray:
        """Rows holding at least one of the terms, from the postings of bm25s's term-major matrix."""
        indptr, indices = self._bm25.scores["indptr"], self._bm25.scores["indices"]
        present = np.zeros(len(self._ids), dtype=bool)
        for t in set(token_ids):
            present[indices[indptr[t] : indptr[t + 1]]] = True
        return present

    @property
    def ids(self) -> list[str]:
        """Item ids in index order (the order of ``scores``)."""
        self._build()
        return list(self._ids)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return tokenize_many(texts, stopwords=self.stopwords, stemmer=self.stemmer, cjk=self.cjk)

    def _check_params(self) -> None:
        if self._checked:
            return
        if self.method not in BM25_METHODS:
            raise ValueError(f"method: unknown BM25 variant {self.method!r}; choose one of {', '.join(BM25_METHODS)}")
        if self.idf_method is not None and self.idf_method not in BM25_METHODS:
            raise ValueError(f"idf_method: unknown {self.idf_method!r}; choose one of {', '.join(BM25_METHODS)}")
        for name, value in (("k1", self.k1), ("b", self.b)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name}: {value!r} must be a number >= 0")
        if self.b > 1:
            raise ValueError(f"b: {self.b!r} must be between 0 and 1")
        resolve_stopwords(self.stopwords)
        if self.cjk not in CJK_MODES:
            raise ValueError(f"cjk: {self.cjk!r} is not one of {', '.join(CJK_MODES)}")
        self._checked = True

    def _build(self) -> None:
        """Rebuild the bm25s index over every item if items were added since the last build."""
        if not self._stale:
            return
        import bm25s

        self._check_params()
        self._ids = list(self._items)
        corpus = [self._tokens[i] for i in self._ids]
        self._bm25 = None  # bm25s cannot index a corpus without a single token: nothing can match then
        if any(corpus):
            self._bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method, idf_method=self.idf_method)
            self._bm25.index(corpus, show_progress=False)
        items = [self._items[i] for i in self._ids]
        self._importance = np.array([int(item.importance) for item in items], dtype=np.int8)
        self._created = np.array([to_timestamp(item.created_at) for item in items], dtype=np.float64)
        self._id_rank = np.empty(len(self._ids), dtype=np.int64)  # each row's place in id order, for ties
        self._id_rank[sorted(range(len(self._ids)), key=self._ids.__getitem__)] = np.arange(len(self._ids))
        self._stale = False

    def _numeric_mask(self, filter: MemoryFilter | None) -> np.ndarray:
        """Rows passing the filter's importance and time bounds (vectorised; the rest is item by item)."""
        return numeric_mask(filter, self._importance, self._created)


def _needs_items(filter: MemoryFilter) -> bool:
    """Whether the filter has conditions beyond importance and time, checked on the items themselves."""
    return bool(filter.tiers is not None or filter.tags_any or filter.tags_all or filter.session_ids or filter.where)
