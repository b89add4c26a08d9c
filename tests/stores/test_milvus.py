"""Milvus specifics: string escaping, the filter expression, the .db path and the top-k limit."""

from __future__ import annotations

import numpy as np
import pytest

from openclaw_lab.stores import milvus
from openclaw_lab.stores.milvus import MilvusStore, milvus_expression, milvus_string

from .conftest import DIM, make_corpus


def test_strings_are_escaped_by_hand():
    assert milvus_string("plain") == '"plain"'
    assert milvus_string('a"b') == '"a\\"b"'
    assert milvus_string("back\\slash") == '"back\\\\slash"'
    assert milvus_string("two\nlines\r") == '"two\\nlines\\r"'
    assert milvus_string("it's ü") == '"it\'s ü"'


def test_expressions_by_hand():
    assert milvus_expression([]) == ""
    terms = [
        ("tier", "in", ["episodic", "semantic"]),
        ("importance", "gte", 2),
        ("created_at", "lt", 1683554160.5),
        ("tags", "any_true", ["tag:a", 'tag:b"c']),
        ("tag:x", "eq", True),
        ("meta:speaker", "eq", "bob"),
    ]
    assert milvus_expression(terms) == (
        '(tier in ["episodic", "semantic"]) and (importance >= 2) and (created_at < 1683554160.5)'
        ' and ($meta["tag:a"] == true or $meta["tag:b\\"c"] == true)'
        ' and ($meta["tag:x"] == true or $meta["tag:x"] == 1)'
        ' and ($meta["meta:speaker"] == "bob")'
    )
    assert milvus_expression([("meta:score", "eq", 2.25)]) == '($meta["meta:score"] == 2.25)'


def test_path_must_name_a_db_file(tmp_path):
    with pytest.raises(ValueError, match="path: milvus-lite needs a name ending in .db"):
        MilvusStore(tmp_path / "memories")
    with pytest.raises(ValueError, match="path/uri"):
        MilvusStore()


def test_k_above_the_milvus_limit_is_an_error_only_when_the_store_is_that_large(tmp_path, monkeypatch):
    store = MilvusStore(tmp_path / "m.db")
    store.upsert(make_corpus(12, seed=1))
    monkeypatch.setattr(milvus, "MAX_TOPK", 5)
    with pytest.raises(ValueError, match="k: 20 is above Milvus's limit of 5"):
        store.search(np.ones(DIM), 20)
    monkeypatch.setattr(milvus, "MAX_TOPK", 12)
    assert len(store.search(np.ones(DIM), 20)) == 12
    store.close()
