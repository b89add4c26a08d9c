"""The shared codec: flat fields round-trip, metadata pairs follow ==, batches are checked whole."""

from __future__ import annotations

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem
from openclaw_lab.stores.codec import check_batch, check_model, check_vector, flat_fields, from_flat, metadata_pair

from .conftest import T0, make_corpus


def test_flat_fields_round_trip(corpus):
    for item in corpus[:10]:
        flat = flat_fields(item)
        assert all(isinstance(value, (str, int, float, bool)) for value in flat.values())
        assert from_flat(flat) == item


def test_metadata_pairs_are_equal_exactly_when_values_are():
    assert metadata_pair("k", 1) == metadata_pair("k", 1.0) == metadata_pair("k", True)
    assert metadata_pair("k", 0) == metadata_pair("k", False)
    assert metadata_pair("k", "1") != metadata_pair("k", 1)
    assert metadata_pair("k", 2.5) != metadata_pair("k", 2)
    assert metadata_pair("k", 2**60 + 1) != metadata_pair("k", 2**60)
    assert metadata_pair("a", "b=c") != metadata_pair("a=b", "c")


def test_check_batch_keeps_the_last_copy_and_checks_every_item():
    items = make_corpus(3, seed=2)
    batch, matrix = check_batch([items[0], items[1], items[0].replace(content="again")], None)
    assert [i.content for i in batch] == ["again", items[1].content] and matrix.shape == (2, 32)
    with pytest.raises(ValueError, match="embedding: item 'bare' has no embedding"):
        check_batch([items[0], MemoryItem.new("x", now=T0, id="bare")], None)
    with pytest.raises(ValueError, match="dimension 4 does not match the store's 32"):
        check_batch([items[0], items[1].replace(embedding=np.ones(4))], None)
    assert check_batch([], 8)[1].shape == (0, 8)


def test_check_vector_and_check_model():
    with pytest.raises(ValueError, match="vector: contains NaN"):
        check_vector([1.0, float("nan")], 2, "vector")
    assert check_model(None, "m", "here") == "m" and check_model("m", None, "here") == "m"
    with pytest.raises(ValueError, match="embedding_model: here holds vectors of 'a', not 'b'"):
        check_model("a", "b", "here")
