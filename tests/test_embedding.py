import numpy as np
import pytest

from openclaw_lab.embedding import Embedder, EmbeddingCache


def test_paraphrases_score_higher_than_unrelated_pairs(embedder):
    pairs = [
        ("My sister lives in Porto.", "Porto is where my sister lives."),
        ("I started learning the cello last month.", "A few weeks ago I began cello lessons."),
        ("We adopted a puppy named Max.", "Max is the name of the dog we just adopted."),
    ]
    unrelated = ["The quarterly tax form is due in April.", "Quantum computers use qubits.", "Bake at 200 degrees."]
    a = embedder.encode([p[0] for p in pairs])
    b = embedder.encode([p[1] for p in pairs])
    c = embedder.encode(unrelated)
    paraphrase = np.sum(a * b, axis=1)
    other = np.sum(a * c, axis=1)
    assert np.all(paraphrase > other + 0.3), (paraphrase, other)


def test_vectors_are_normalised_float32(embedder):
    vectors = embedder.encode(["hello", "a much longer sentence about the weather in Lisbon"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_second_call_is_served_from_the_cache_without_the_model(tmp_path, embedder):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    first = Embedder(cache=cache)
    first._model = embedder.st_model  # share the loaded weights: this test is about the cache
    texts = ["a cached text", "another cached text", "a cached text"]
    cold = first.encode(texts)
    assert (cache.stats.hits, cache.stats.misses) == (0, 3)
    assert len(cache) == 2  # the repeated text is stored once

    reopened = Embedder(cache=EmbeddingCache(tmp_path / "cache.sqlite"))

    class NoModel:
        def __getattr__(self, name):
            raise AssertionError("the model was called for cached texts")

    reopened._model = NoModel()
    warm = reopened.encode(texts)
    np.testing.assert_array_equal(cold, warm)
    assert (reopened.stats.hits, reopened.stats.misses) == (3, 0)


def test_a_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="^model"):
        Embedder(tmp_path / "no-such-model", cache=False).encode(["x"])


def test_token_counts_come_from_the_tokenizer(embedder):
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("unbelievably") > 1


def test_the_onnx_backends_encode_as_the_model_does_and_never_share_its_cache(tmp_path, monkeypatch):
    pytest.importorskip("onnx", reason='exporting needs the onnx extra (pip install "openclaw-lab[onnx]")')
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))
    texts = ["I adopted a puppy named Rex", "We went hiking in the Alps last summer, it rained", "ok"]
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    torch_vectors = Embedder(cache=cache).encode(texts)
    onnx = Embedder(cache=cache, backend="onnx")
    assert onnx.model_id.endswith("@onnx")
    assert np.allclose(onnx.encode(texts), torch_vectors, atol=1e-5)  # the same model, exported
    assert onnx.stats.hits == 0  # the torch vectors in the same cache are never read for it
    exported = next(tmp_path.glob("onnx/*/model.onnx"))
    written = exported.stat().st_mtime_ns
    int8 = Embedder(cache=False, backend="onnx-int8").encode_uncached(texts)
    cosines = (int8 * torch_vectors).sum(axis=1)
    assert cosines.min() > 0.8 and cosines.mean() > 0.9 and not np.allclose(int8, torch_vectors, atol=1e-3)  # quantised: close, not equal
    assert exported.stat().st_mtime_ns == written  # exported once, then read from disk
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
