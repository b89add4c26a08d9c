from datetime import datetime

import numpy as np

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.stores.exact import ExactStore


def test_equal_scores_at_the_cut_keep_the_smallest_ids_whatever_the_insertion_order():
    """argpartition keeps an arbitrary one of tied scores; the store keeps the same top k on every machine."""
    ids = [f"m{i:02d}" for i in range(40)]
    tops = set()
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(ids)
        store = ExactStore()
        store.upsert([MemoryItem.new(i, now=datetime(2023, 1, 1), id=i, embedding=[1.0, 0.0], importance=3) for i in order])
        tops.add(tuple(hit.item.id for hit in store.search(np.array([1.0, 0.0]), k=3)))
        tops.add(tuple(hit.item.id for hit in store.search(np.array([1.0, 0.0]), k=3, filter=MemoryFilter(min_importance=2))))
    assert tops == {("m00", "m01", "m02")}
