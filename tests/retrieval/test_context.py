"""Neighbour context: an item gains ``weight`` times its best session neighbour's score, worked out by hand."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from openclaw_lab.model import Hit, MemoryItem, MemoryTier
from openclaw_lab.retrieval.context import NeighbourContext

T0 = datetime(2023, 5, 8)


class Fixed:
    """A first stage that returns its items with set scores, best first."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def index(self, items):
        self.items = {item.id: item for item in items}

    def search(self, query, k, filter=None):
        hits = [Hit(self.items[i], s) for i, s in self.scores.items() if i in self.items]
        return sorted(hits, key=lambda hit: -hit.score)[:k]

    def search_many(self, queries, k, filters=None):
        return {qid: {hit.item.id: hit.score for hit in self.search(text, k)} for qid, text in queries.items()}


def turn(n: int, session: str = "s1", **fields) -> MemoryItem:
    return MemoryItem.new(f"turn {n}", now=T0 + timedelta(minutes=n), id=f"{session}-{n}", session_id=session, **fields)


def scores(retriever, k=10):
    return {hit.item.id: round(hit.score, 6) for hit in retriever.search("q", k)}


def test_each_item_gains_a_share_of_its_best_neighbour_in_its_own_session():
    items = [turn(0), turn(1), turn(2), turn(3, "s2")]
    retriever = NeighbourContext(Fixed({"s1-0": 0.2, "s1-1": 1.0, "s1-2": 0.4, "s2-3": 0.9}), weight=0.5)
    retriever.index(items)
    # s1-0: 0.2 + 0.5 * 1.0; s1-1: 1.0 + 0.5 * max(0.2, 0.4); s1-2: 0.4 + 0.5 * 1.0; s2-3 is alone in its session
    assert scores(retriever) == {"s1-0": 0.7, "s1-1": 1.2, "s1-2": 0.9, "s2-3": 0.9}
    assert list(retriever.search_many({"a": "q"}, 2)["a"]) == ["s1-1", "s1-2"]  # ties broken by id, as search does


def test_a_copy_is_not_its_own_neighbour_and_the_window_reaches_further():
    first = turn(0)
    copy = first.replace(id="sem_s1-0", tier=MemoryTier.SEMANTIC)  # the same session and time: the same place
    items = [first, copy, turn(1), turn(2)]
    fixed = Fixed({"s1-0": 0.5, "sem_s1-0": 0.6, "s1-1": 0.1, "s1-2": 0.3})
    retriever = NeighbourContext(fixed, weight=1.0)
    retriever.index(items)
    assert scores(retriever) == {"s1-0": 0.6, "sem_s1-0": 0.7, "s1-1": 0.7, "s1-2": 0.4}
    wide = NeighbourContext(fixed, weight=1.0, window=2)
    wide.index(items)
    assert scores(wide)["s1-0"] == 0.8  # two places on: s1-2's 0.3 beats s1-1's 0.1


def test_a_neighbour_the_first_stage_did_not_return_adds_nothing():
    retriever = NeighbourContext(Fixed({"s1-0": 0.5}), weight=0.5)
    retriever.index([turn(0), turn(1)])
    assert scores(retriever) == {"s1-0": 0.5}


@pytest.mark.parametrize(("field", "value"), [("weight", -0.1), ("weight", True), ("window", 0), ("candidates", 0)])
def test_bad_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"^{field}"):
        NeighbourContext(Fixed({}), **{field: value})
