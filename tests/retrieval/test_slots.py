"""Slot recency: the newest hit about the question's slot first, inside the top window, nothing else moved."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.harness.build import make_retriever
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.slots import Said, SlotRecency, SlotResolved

T0 = datetime(2024, 3, 1, tzinfo=timezone.utc)
AXES = ("budget", "sneakers", "weather", "dog")


class Axes:
    """A stand-in embedder: one axis per topic word, plus a little of everything (no zero vector)."""

    def encode(self, texts, progress=None):
        return np.array([[t.lower().count(w) + 0.05 for w in AXES] for t in texts], dtype=np.float32)


def memory() -> list[MemoryItem]:
    said = [
        (0, "My annual budget for buying sneakers is $2,000."),  # the stale statement, found first by BM25
        (5, "The weather was great for a dog walk."),
        (9, "Rain again, no dog walk: the weather is awful."),
        (20, "Cut the sneakers budget: $1,500 a year from now on."),  # the update, in other words
        (30, "The dog loves the new weather coat."),
    ]
    return [MemoryItem.new(text, now=T0 + timedelta(days=day), id=f"m{day}") for day, text in said]


def test_the_update_moves_above_the_statement_it_replaces():
    question = {"q": "What is my annual budget for buying sneakers?"}
    plain = make_retriever("bm25")
    plain.index(memory())
    before = list(plain.search_many(question, 3)["q"])
    assert before.index("m0") < before.index("m20")  # the stale statement ranks first without the rule
    resolved = make_retriever("slot-recency", embedder=Axes(), base="bm25", window=3, margin=0.2)
    resolved.index(memory())
    after = resolved.search_many(question, 3)["q"]
    assert list(after)[:2] == ["m20", "m0"]
    assert set(after) == set(before)  # the top window holds the same memories


def test_an_update_passes_its_statement_and_no_newer_hit_off_the_slot_passes_anything():
    rule = SlotRecency(window=4, margin=0.1)
    hits = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}
    slot = {"a": 0.9, "b": 0.1, "c": 0.85, "d": 0.2}  # a and c are about the slot; b and d are not
    days = dict(zip("abcd", (1, 9, 5, 8)))
    said = {key: Said(slot[key], T0 + timedelta(days=days[key])) for key in hits}
    assert rule.reorder(hits, said) == {"c": 4.0, "a": 3.0, "b": 2.0, "d": 1.0}


def test_nothing_below_the_window_moves():
    rule = SlotRecency(window=2, margin=1.0)
    hits = {"a": 3.0, "b": 2.0, "c": 1.0}
    said = {key: Said(0.5, T0 + timedelta(days=day)) for day, key in enumerate("abc")}
    assert rule.reorder(hits, said) == {"a": 2.0, "b": 3.0, "c": 1.0}


@pytest.mark.parametrize(("field", "value"), [("window", 1), ("window", 2.5), ("margin", -0.1), ("margin", True),
                                               ("cue", "yes"), ("same_speaker", 1)])
def test_bad_settings_name_their_field(field, value):
    with pytest.raises(ValueError, match=f"^{field}:"):
        SlotRecency(**{field: value})


def test_an_embedder_is_required():
    with pytest.raises(ValueError, match="^embedder:"):
        SlotResolved(make_retriever("bm25"), None)


def test_hits_tied_with_the_first_one_below_the_window_stay_put():
    rule = SlotRecency(window=2, margin=1.0)
    hits = {"a": 3.0, "b": 2.0, "c": 2.0}  # b is in the window only by its id: c, tied, is not
    said = {key: Said(0.5, T0 + timedelta(days=day)) for day, key in enumerate("abc")}
    assert rule.reorder(hits, said) == hits


def test_a_bad_unit_names_its_field():
    with pytest.raises(ValueError, match="^unit: 'word'"):
        SlotResolved(make_retriever("bm25"), Axes(), unit="word")


def chat() -> list[MemoryItem]:
    """A long message stating the budget among other things, its update, and the assistant's echo of it."""
    said = [
        (0, "user", "Walked the dog in awful weather today. My annual budget for buying sneakers is $2,000. "
                    "The dog hated the rain and the weather and the dog bed is wet."),
        (20, "user", "The sneakers budget is now $1,500 a year."),
        (21, "assistant", "A sneakers budget of $1,500 a year, noted: your new sneakers budget is set."),
        (25, "user", "My sneakers budget for shoes is lovely and the sneakers look great."),  # no change said
    ]
    return [MemoryItem.new(f"{who}: {text}", now=T0 + timedelta(days=day), id=f"m{day}", metadata={"speaker": who})
            for day, who, text in said]  # fmt: skip


def ranking(**settings) -> list[str]:
    resolved = make_retriever("slot-recency", embedder=Axes(), base="bm25", window=4, margin=0.3, **settings)
    resolved.index(chat())
    return list(resolved.search_many({"q": "What is my annual budget for buying sneakers?"}, 4)["q"])


def test_a_sentence_carries_the_slot_a_word_of_change_marks_the_update_and_an_echo_passes_no_statement():
    plain = make_retriever("bm25")
    plain.index(chat())
    assert list(plain.search_many({"q": "What is my annual budget for buying sneakers?"}, 4)["q"])[0] == "m0"
    # by sentence, with no cue, the newest hit on the slot comes first: here the user's aside, which updates nothing
    assert ranking(unit="sentence")[0] == "m25"
    # with cue, only a hit that says something changed passes: the update or the assistant's echo of it
    assert ranking(unit="sentence", cue=True)[0] in {"m20", "m21"}
    # and of the user's own statement, only the user's update passes it
    order = ranking(unit="sentence", cue=True, same_speaker=True)
    assert order.index("m20") < order.index("m0") and order[0] == "m20"
