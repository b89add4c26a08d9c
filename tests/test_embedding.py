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


LONG = " ".join(f"On day {i} we talked about the weather and the garden." for i in range(60))  # 12 tokens each


def test_a_long_text_is_read_window_by_window_and_averaged(embedder):
    pieces = embedder.windows(LONG)
    assert embedder.count_tokens(LONG) == 720
    assert len(pieces) == 3 and all(embedder.count_tokens(piece) <= 254 for piece in pieces)  # 254 + 254 + 212
    assert " ".join(pieces).split() == LONG.split()  # cut between tokens: nothing lost, nothing repeated
    assert embedder.windows("a short memory") == ["a short memory"]
    truncate = Embedder(cache=False, long_texts="truncate")
    truncate._model = embedder.st_model
    assert (embedder.model_id, truncate.model_id) == (f"{embedder.encoder_id}+windows", embedder.encoder_id)
    short = ["I adopted a puppy named Rex"]
    np.testing.assert_allclose(embedder.encode(short), truncate.encode(short), atol=1e-6)  # one window: the same
    weights = np.array([embedder.count_tokens(piece) for piece in pieces], dtype=np.float32)
    mean = weights @ truncate.encode(pieces)  # worked out here: the token-weighted mean of the windows' vectors
    np.testing.assert_allclose(embedder.encode([LONG])[0], mean / np.linalg.norm(mean), atol=1e-5)


def test_a_fact_past_the_first_window_is_found_only_with_windows(embedder):
    session = LONG + " By the way, I finally bought the red kayak I wanted for the lake."
    truncate = Embedder(cache=False, long_texts="truncate")
    truncate._model = embedder.st_model
    query = "What kind of boat did I buy?"
    windowed_gain = embedder.encode([query])[0] @ embedder.encode([session])[0] - embedder.encode([query])[0] @ (
        embedder.encode([LONG])[0])  # fmt: skip
    truncated_gain = truncate.encode([query])[0] @ truncate.encode([session])[0] - truncate.encode([query])[0] @ (
        truncate.encode([LONG])[0])  # fmt: skip
    assert truncated_gain == pytest.approx(0.0, abs=1e-6)  # the kayak is past 256 tokens: truncation never reads it
    assert windowed_gain > 0.01


def test_an_unknown_long_text_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="^long_texts: 'split' is not one of truncate, windows"):
        Embedder(cache=False, long_texts="split")


def test_token_counts_come_from_the_tokenizer(embedder):
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("unbelievably") > 1


def test_the_onnx_backends_encode_as_the_model_does_and_never_share_its_cache(tmp_path, monkeypatch):
    pytest.importorskip("onnx", reason='exporting needs the onnx extra (pip install "openclaw-lab[onnx]")')
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))
    texts = ["I adopted a puppy named Rex", "We went hiking in the Alps last summer, it rained", "ok"]
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    torch_vectors = Embedder(cache=cache).encode(texts)
    quantised = Embedder(cache=False, backend="onnx-int8")  # first on an empty cache: it exports both files
    assert quantised.encoder_id.endswith("@onnx-int8-per-text")  # not the vectors of earlier quantisations
    int8 = quantised.encode_uncached(texts)
    cosines = (int8 * torch_vectors).sum(axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.975  # close,
    assert not np.allclose(int8, torch_vectors, atol=1e-3)  # not equal
    # a text's int8 vector is its own: the same alone, among other texts and in another order
    alone = quantised.encode_uncached([texts[1]])[0]
    among = quantised.encode_uncached([*texts[::-1], "a much longer text about a trip to Lisbon " * 20])[1]
    assert np.array_equal(alone, int8[1]) and np.array_equal(among, int8[1])
    exported = next(tmp_path.glob("onnx/*/model.onnx"))
    written = exported.stat().st_mtime_ns
    onnx = Embedder(cache=cache, backend="onnx")
    assert onnx.model_id.endswith("@onnx+windows") and onnx.encoder_id.endswith("@onnx")
    assert np.allclose(onnx.encode(texts), torch_vectors, atol=1e-5)  # the same model, exported
    assert onnx.stats.hits == 0  # the torch vectors in the same cache are never read for it
    assert exported.stat().st_mtime_ns == written  # exported once, then read from disk
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)


def test_a_fixed_thread_count_is_used_while_encoding_and_given_back(embedder):
    import torch

    from openclaw_lab.embedding import Embedder

    before = torch.get_num_threads()
    fixed = 1 if before > 1 else 2  # not the count already in force (make test runs its workers on one thread)
    seen = []
    one = Embedder(cache=False, threads=fixed)
    one._model = embedder.st_model
    original = one.st_model.encode
    one.st_model.encode = lambda *a, **k: (seen.append(torch.get_num_threads()), original(*a, **k))[1]
    try:
        vector = one.encode(["the harbour office"])
    finally:
        del one.st_model.encode
    assert seen == [fixed] and torch.get_num_threads() == before
    np.testing.assert_allclose(vector, embedder.encode_uncached(["the harbour office"]), atol=1e-5)
    for bad in (0, "2", True):
        with pytest.raises(ValueError, match="^threads: "):
            Embedder(threads=bad)
