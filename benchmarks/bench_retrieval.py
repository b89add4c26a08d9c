"""Per-query latency of each retrieval strategy at 10k and 100k memory items (printed, not asserted).

    .venv/bin/python benchmarks/bench_retrieval.py [--sizes 10000 100000] [--queries 50] [--splade-size 2000]

Texts are synthetic chat-like sentences (templates plus Zipf-distributed topic words). The dense
timings use random unit vectors (dim 384) for items and queries instead of the model, so they time
the search, not the encoder; the model's own cost for one query is measured apart (a fixed cost
added to every dense, hybrid and memory-aware query). Ratios are against exact numpy search
(``matrix @ q`` + argpartition) and, for BM25, rank_bm25's BM25Okapi against bm25s per query
(rank_bm25 is timed on a few queries only: it scans every document in Python). SPLADE is timed apart on
``--splade-size`` items, since indexing runs its model on every item. BLAS runs on one
thread (``OPENBLAS_NUM_THREADS=1`` unless set): one query is a matrix-vector product, and on a
busy 2-core machine waking BLAS threads costs more (spikes of ~10 ms) than it saves.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")  # before numpy loads its BLAS
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from openclaw_lab.clock import SimulatedClock  # noqa: E402
from openclaw_lab.model import MemoryFilter, MemoryItem  # noqa: E402
from openclaw_lab.retrieval.bm25 import BM25Retriever  # noqa: E402
from openclaw_lab.retrieval.context import NeighbourContext  # noqa: E402
from openclaw_lab.retrieval.dense import DenseRetriever  # noqa: E402
from openclaw_lab.retrieval.learned import LearnedReranker  # noqa: E402
from openclaw_lab.retrieval.rerank import HybridFirstStage, default_rerank, first_stage_sources  # noqa: E402
from openclaw_lab.retrieval.fusion import FusedRetriever  # noqa: E402
from openclaw_lab.retrieval.scoring import MemoryAwareRetriever  # noqa: E402
from openclaw_lab.retrieval.temporal import TimeAwareRetriever  # noqa: E402
from openclaw_lab.retrieval.tokenize import tokenize_many  # noqa: E402
from openclaw_lab.stores.exact import ExactStore, top_k_indices  # noqa: E402

DIM = 384
K = 10
NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
SPEAKERS = ["Caroline", "Melanie", "Jon", "Gina", "Tim", "Audrey", "Evan", "Sam"]
VERBS = ["talked about", "went to", "bought", "cooked", "painted", "read about", "fixed", "planned", "visited", "lost"]
PLACES = ["the park", "the office", "the beach", "the museum", "the lake", "a cafe", "the gym", "the market"]
WHEN = ["yesterday", "this morning", "last week", "on Saturday", "after work", "with the kids", "in May", "again"]


def cross_fitted_features(sources: tuple[str, ...]) -> LearnedReranker:
    """The cross-fitted reranker's feature set (``sources``, length, session) with unit weights: its cost."""
    model = LearnedReranker(sources=sources, length=True, session=True)
    n = len(model.features.names)
    model.mean_, model.scale_, model.coef_ = np.zeros(n), np.ones(n), np.ones(n)
    return model


def pseudo_words(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` distinct pronounceable words: a vocabulary for the topic words."""
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(syllables, size=rng.integers(2, 4)))] = None
    return list(words)


def synthetic_texts(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` chat-like sentences and the vocabulary of their topic words (Zipf-distributed)."""
    rng = np.random.default_rng(seed)
    vocabulary = pseudo_words(20_000, rng)
    ranks = np.minimum(rng.zipf(1.3, size=(n, 4)), len(vocabulary)) - 1
    texts = []
    for i in range(n):
        topic = " ".join(vocabulary[r] for r in ranks[i, : rng.integers(2, 5)])
        texts.append(
            f"{SPEAKERS[i % len(SPEAKERS)]}: I {VERBS[rng.integers(len(VERBS))]} {topic} "
            f"at {PLACES[rng.integers(len(PLACES))]} {WHEN[rng.integers(len(WHEN))]}."
        )
    return texts, vocabulary


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class RandomEmbedder:
    """A stand-in for the model: a fixed random unit vector per text (seeded by its hash)."""

    def encode(self, texts):
        seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
        return np.vstack([unit_vectors(np.random.default_rng(s), 1) for s in seeds])


def make_items(texts: list[str], seed: int = 1) -> list[MemoryItem]:
    rng = np.random.default_rng(seed)
    vectors = unit_vectors(rng, len(texts))
    minutes = rng.integers(0, 60 * 24 * 365, size=len(texts))
    return [
        MemoryItem(
            id=f"m{i}",
            content=text,
            tier="episodic",
            created_at=NOW - timedelta(minutes=int(minutes[i])),
            last_accessed=NOW - timedelta(minutes=int(minutes[i]) // 2),
            importance=int(rng.integers(1, 6)),
            embedding=vectors[i],
            metadata={"speaker": SPEAKERS[i % len(SPEAKERS)]},
        )
        for i, text in enumerate(texts)
    ]


def make_queries(vocabulary: list[str], n: int, seed: int = 2) -> list[str]:
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.3, size=(n, 3)), 2000) - 1
    return [f"what did they say about {' '.join(vocabulary[r] for r in row)} at the park" for row in ranks]


def per_query(search: Callable[[str], object], queries: list[str]) -> float:
    """Median seconds per query, after one warm-up call."""
    search(queries[0])
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed(build: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    value = build()
    return value, time.perf_counter() - start


def splade_latency(n: int, queries: list[str]) -> None:
    """SPLADE on ``n`` synthetic items: indexing (model encoding, no cache) and one query, encoding included."""
    try:
        from openclaw_lab.retrieval.splade import SpladeRetriever
        from openclaw_lab.splade import SpladeEncoder, default_splade_path

        default_splade_path()
    except ImportError as error:
        print(f"(SPLADE not measured: {error})")
        return
    items = make_items(synthetic_texts(n)[0])
    splade = SpladeRetriever(SpladeEncoder(cache=False))
    _, t_index = timed(lambda: splade.index(items))
    search = per_query(lambda q: splade.search(q, K), queries)
    print(f"\nsplade (SPLADE-tiny, CPU) on {n} items: index {t_index:.1f}s ({n / t_index:.0f} items/s); "
          f"search {search * 1e3:.1f} ms per query, its encoding included")


def model_query_latency(queries: list[str]) -> float | None:
    """Seconds to encode one query with the packaged model (no cache), or None without the model."""
    try:
        from openclaw_lab.embedding import Embedder

        embedder = Embedder(cache=False)
        embedder.encode(["warm up"])
    except (ImportError, ValueError) as error:
        print(f"(model latency not measured: {error})")
        return None
    return per_query(lambda q: embedder.encode([q]), queries[:20])


def bench(n: int, n_queries: int, n_rank_bm25: int) -> list[tuple[str, float, str]]:
    from rank_bm25 import BM25Okapi

    texts, vocabulary = synthetic_texts(n)
    queries = make_queries(vocabulary, n_queries)
    query_vectors = {q: v for q, v in zip(queries, RandomEmbedder().encode(queries))}
    items, t_items = timed(lambda: make_items(texts))
    clock = SimulatedClock(NOW)
    important = MemoryFilter(min_importance=4)
    rows: list[tuple[str, float, str]] = []

    store = ExactStore()
    _, t_store = timed(lambda: store.upsert(items))
    matrix = np.vstack([item.embedding for item in items])

    def exact_numpy(query: str):
        return top_k_indices(matrix @ query_vectors[query], K)

    dense = DenseRetriever(RandomEmbedder(), store=store)
    bm25 = BM25Retriever()
    _, t_bm25_index = timed(lambda: bm25.index(items))
    _, t_bm25_build = timed(lambda: bm25.search("warm up the index", K))
    tokens = tokenize_many(texts)
    okapi, t_okapi = timed(lambda: BM25Okapi(tokens))
    hybrid = FusedRetriever([dense, bm25], method="rrf", candidates=100)
    combsum = FusedRetriever([DenseRetriever(RandomEmbedder(), store=store), BM25Retriever()], method="wsum",
                             norm="min-max", candidates=1000)
    context = NeighbourContext(combsum, candidates=1000)
    _, t_context_index = timed(lambda: context.index(items))
    shipped = default_rerank(RandomEmbedder(), clock, store=store)  # the shipped model: dense, BM25 and context
    _, t_rerank_index = timed(lambda: shipped.index(items))
    first = HybridFirstStage(first_stage_sources(("dense", "bm25", "context"), RandomEmbedder(), store=store))
    first.index(items)
    candidates = {q: first.search_candidates(q, 100) for q in queries}  # the reranker's input, found beforehand
    deeper = {q: first.search_candidates(q, 200) for q in queries}
    learned = cross_fitted_features(("dense", "bm25", "context"))
    with_splade = cross_fitted_features(("dense", "bm25", "context", "splade"))  # a fourth source's features
    memory_aware = MemoryAwareRetriever(dense, clock, candidates=100)
    time_aware = TimeAwareRetriever(bm25, clock, mode="boost", candidates=100)

    strategies: list[tuple[str, Callable[[str], object]]] = [
        ("exact numpy (matrix @ q, argpartition)", exact_numpy),
        ("ExactStore.search", lambda q: store.search(query_vectors[q], K)),
        ("dense (DenseRetriever, ExactStore)", lambda q: dense.search(q, K)),
        ("dense + filter importance>=4", lambda q: dense.search(q, K, important)),
        ("bm25 (BM25Retriever on bm25s)", lambda q: bm25.search(q, K)),
        ("bm25 + filter importance>=4", lambda q: bm25.search(q, K, important)),
        ("bm25s scores only (get_scores)", lambda q: bm25.scores(q)),
        ("hybrid (dense + bm25, RRF, 100 cand.)", lambda q: hybrid.search(q, K)),
        ("hybrid-context (CombSUM, 1000 cand.)", lambda q: context.search(q, K)),
        ("rerank (shipped model, 50 cand.)", lambda q: shipped.search(q, K)),
        ("learned scoring only (session, 100 cand.)", lambda q: learned.scores(q, candidates[q], NOW)),
        ("  (same, with splade's features)", lambda q: with_splade.scores(q, candidates[q], NOW)),
        ("  (same, 200 cand.)", lambda q: with_splade.scores(q, deeper[q], NOW)),
        ("memory-aware (dense, 100 cand.)", lambda q: memory_aware.search(q, K)),
        ("time-aware boost (bm25, 'last week')", lambda q: time_aware.search(q + " last week", K)),
    ]
    results = {name: per_query(search, queries) for name, search in strategies}
    base = results[strategies[0][0]]
    rows += [(name, seconds, f"{seconds / base:8.2f}x exact") for name, seconds in results.items()]
    few = queries[:n_rank_bm25]
    okapi_time = per_query(lambda q: okapi.get_scores(tokenize_many([q])[0]), few)
    ours, raw = results["bm25 (BM25Retriever on bm25s)"], results["bm25s scores only (get_scores)"]
    rows.append((f"rank_bm25 BM25Okapi ({len(few)} queries)", okapi_time, f"{okapi_time / ours:8.0f}x our bm25"))
    rows.append(("  (same, against bm25s scores only)", okapi_time, f"{okapi_time / raw:8.0f}x bm25s"))
    print(
        f"\n{n} items: items built {t_items:.1f}s; ExactStore upsert {t_store:.1f}s; BM25 tokenise {t_bm25_index:.1f}s "
        f"+ bm25s build {t_bm25_build:.1f}s; rank_bm25 build {t_okapi:.1f}s; hybrid-context index "
        f"{t_context_index:.1f}s; rerank index {t_rerank_index:.1f}s"
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rank-bm25-queries", type=int, default=5)
    parser.add_argument("--splade-size", type=int, default=2000, help="items for SPLADE, whose indexing runs the model")
    args = parser.parse_args()
    model = model_query_latency(make_queries(synthetic_texts(100)[1], 21))
    tables = {n: bench(n, args.queries, args.rank_bm25_queries) for n in args.sizes}
    print(f"\nmedian latency per query, k={K} ({args.queries} queries; ms)")
    header = f"{'strategy':42s}" + "".join(f"{f'{n} items':>14s}{'ratio':>20s}" for n in args.sizes)
    print(header)
    print("-" * len(header))
    for i, (name, _, _) in enumerate(tables[args.sizes[0]]):
        cells = "".join(f"{tables[n][i][1] * 1e3:14.3f}{tables[n][i][2]:>20s}" for n in args.sizes)
        print(f"{name:42s}{cells}")
    if model is not None:
        print(f"\nall-MiniLM-L6-v2, one query encoded (uncached, CPU): {model * 1e3:.1f} ms (add to every dense query)")
    splade_latency(args.splade_size, make_queries(synthetic_texts(100)[1], args.queries))


if __name__ == "__main__":
    main()
