"""The seed's strategy names (``dense``, ``sparse``, ``hybrid``, ``rerank``) resolved through one registry.

``make_retriever`` builds a strategy by name; ``retrieve`` is the seed's one-call form, which
builds, indexes ``items`` and searches. For repeated searches over the same items build the
retriever once with ``make_retriever`` and call its ``search``.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> items = [MemoryItem.new("I adopted a puppy named Rex", now=datetime(2023, 5, 8), id="a"),
...          MemoryItem.new("We went hiking in the Alps", now=datetime(2023, 5, 8), id="b")]
>>> [hit.item.id for hit in retrieve("puppy", strategy="sparse", items=items, k=1)]
['a']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.registry import retrievers
from openclaw_lab.retrieval.protocol import Retriever, check_query

__all__ = ["make_retriever", "retrieve", "strategy_names"]


def strategy_names() -> list[str]:
    """The registered strategy names, e.g. ``['dense', 'sparse', 'bm25', 'hybrid', 'rerank']``."""
    return retrievers.names()


def make_retriever(strategy: str, *, embedder: Any = None, clock: Any = None, **params: Any) -> Retriever:
    """A fresh, empty retriever for ``strategy``; ``params`` go to its factory.

    >>> type(make_retriever("bm25", k1=1.2)).__name__
    'BM25Retriever'
    """
    if not isinstance(strategy, str) or strategy not in retrievers:
        raise ValueError(f"strategy: unknown {strategy!r}; choose one of {', '.join(strategy_names())}")
    return retrievers.create(strategy, embedder=embedder, clock=clock, **params)


def retrieve(
    query: str,
    strategy: str = "hybrid",
    *,
    items: Sequence[MemoryItem] | None = None,
    k: int = 10,
    filter: MemoryFilter | None = None,
    embedder: Any = None,
    clock: Any = None,
    **params: Any,
) -> list[Hit]:
    """The best ``k`` of ``items`` for ``query`` by ``strategy`` (higher score is better); no items → [].

    The query, ``k`` and the strategy name are checked before anything is built or loaded.
    """
    check_query(query)
    check_k(k)
    if not isinstance(strategy, str) or strategy not in retrievers:
        raise ValueError(f"strategy: unknown {strategy!r}; choose one of {', '.join(strategy_names())}")
    items = list(items or [])
    if not items:
        return []
    retriever = make_retriever(strategy, embedder=embedder, clock=clock, **params)
    retriever.index(items)
    return retriever.search(query, k, filter)
