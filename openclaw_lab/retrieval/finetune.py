"""Fine-tuning the dense encoder on (question, evidence, hard negative) triplets.

The loss is sentence-transformers' ``MultipleNegativesRankingLoss``: a softmax over cosine similarities
(times ``scale``) of each question against its own evidence, the batch's other evidence and every hard
negative. Its memory grows with the batch times the square of the text length: batches of 32 triplets of
256-token texts peak near 13 GB on CPU (``benchmarks/bench_finetune.py``). ``mini_batch_size`` computes
the same loss with gradient caching (``CachedMultipleNegativesRankingLoss``), whose memory is bounded by
the mini-batch. The loop is ours because sentence-transformers' trainer needs the ``datasets`` and
``accelerate`` packages, which nothing else here uses.

A fitted model is saved under ``$OPENCLAW_LAB_CACHE/finetuned/<sha256>``, keyed by the base model, the
settings and the triplets, so a rerun loads it instead of training again; its embeddings are cached
under its own model id, never mixed with the base model's.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from openclaw_lab.embedding import Embedder, default_cache_path, default_model_path
from openclaw_lab.model import check_k, check_text

__all__ = ["Triplet", "FineTuner"]


@dataclass(frozen=True)
class Triplet:
    """A question, a memory holding its evidence, and a memory near it that does not."""

    query: str
    positive: str
    negative: str


def _check_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name}: {value!r} must be a number > 0")
    return float(value)


class FineTuner:
    """Fits a copy of an ``Embedder``'s model on triplets and returns an ``Embedder`` of the fitted copy.

    >>> FineTuner(epochs=2, batch_size=16)
    FineTuner(epochs=2, batch_size=16, learning_rate=2e-05, scale=20.0, seed=0)
    """

    def __init__(
        self, *, epochs: int = 1, batch_size: int = 32, learning_rate: float = 2e-5, scale: float = 20.0, seed: int = 0,
        mini_batch_size: int | None = None, folder: str | Path | None = None,
    ) -> None:
        self.epochs, self.batch_size = check_k(epochs, "epochs"), check_k(batch_size, "batch_size")
        if batch_size < 2:
            raise ValueError(f"batch_size: {batch_size!r} must be >= 2 (the batch's other evidence are negatives)")
        self.learning_rate, self.scale = _check_number(learning_rate, "learning_rate"), _check_number(scale, "scale")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed: {seed!r} must be an integer")
        self.seed = seed
        self.mini_batch_size = None if mini_batch_size is None else check_k(mini_batch_size, "mini_batch_size")
        self.folder = Path(folder) if folder is not None else default_cache_path().parent / "finetuned"

    def __repr__(self) -> str:
        cached = "" if self.mini_batch_size is None else f", mini_batch_size={self.mini_batch_size}"
        return (f"FineTuner(epochs={self.epochs}, batch_size={self.batch_size}, learning_rate={self.learning_rate}, "
                f"scale={self.scale}, seed={self.seed}{cached})")

    def key(self, base: Embedder, triplets: Sequence[Triplet]) -> str:
        """The sha256 naming the model fitted from ``base`` on ``triplets`` with these settings."""
        settings = [base.encoder_id, self.epochs, self.batch_size, self.learning_rate, self.scale, self.seed]
        if self.mini_batch_size is not None:  # a different computation of the loss: a model of its own
            settings.append(self.mini_batch_size)
        digest = hashlib.sha256(json.dumps(settings).encode())
        for t in triplets:
            digest.update(json.dumps([t.query, t.positive, t.negative]).encode())
        return digest.hexdigest()

    def fit(self, base: Embedder, triplets: Sequence[Triplet], progress: bool | None = None) -> Embedder:
        """An ``Embedder`` of ``base``'s model fitted on ``triplets`` (read from disk when fitted before).

        ``progress``: show a bar of training steps (default: on a terminal).
        """
        if type(base) is not Embedder or base.backend != "torch":
            raise ValueError(f"embedder: {base!r} cannot be fine-tuned; it must be a sentence-transformers Embedder "
                             "on the torch backend")
        triplets = list(triplets)
        if not triplets:
            raise ValueError("triplets: nothing to fine-tune on (no question has evidence and a negative)")
        for i, t in enumerate(triplets):
            for field in ("query", "positive", "negative"):
                check_text(getattr(t, field), f"triplets[{i}].{field}")
        key = self.key(base, triplets)
        path = self.folder / key
        if not (path / "modules.json").is_file():
            self._train(base, triplets, path, progress)
        return Embedder(path, model_id=f"{base.encoder_id}+finetuned-{key[:16]}",
                        cache=base.cache if base.cache is not None else False, batch_size=base.batch_size,
                        progress_threshold=base.progress_threshold, device=base.device, long_texts=base.long_texts)

    def _train(self, base: Embedder, triplets: list[Triplet], path: Path, progress: bool | None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.losses import (
            CachedMultipleNegativesRankingLoss,
            MultipleNegativesRankingLoss,
        )
        from sentence_transformers.util import batch_to_device
        from tqdm.auto import tqdm
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # bars per loaded or saved shard only clutter the stage
        torch.manual_seed(self.seed)
        model = SentenceTransformer(base.model or default_model_path(), device=base.device, local_files_only=True)
        if self.mini_batch_size is None:
            loss = MultipleNegativesRankingLoss(model, scale=self.scale)
        else:
            loss = CachedMultipleNegativesRankingLoss(model, scale=self.scale, mini_batch_size=self.mini_batch_size)
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.learning_rate)
        order, rng = list(triplets), random.Random(self.seed)
        steps = self.epochs * -(-len(order) // self.batch_size)
        model.train()
        hidden = None if progress is None else not progress  # None: tqdm shows the bar on a terminal only
        with tqdm(total=steps, desc="fine-tune", disable=hidden, leave=False) as bar:
            for _ in range(self.epochs):
                rng.shuffle(order)
                for start in range(0, len(order), self.batch_size):
                    batch = order[start:start + self.batch_size]
                    columns = [[getattr(t, field) for t in batch] for field in ("query", "positive", "negative")]
                    features = [batch_to_device(model.preprocess(texts), model.device) for texts in columns]
                    value = loss(features, None)
                    optimizer.zero_grad()
                    value.backward()
                    optimizer.step()
                    bar.update()
        model.eval()
        # Saved beside its final name and renamed into place: a crash leaves no half-written model to load.
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(path.parent)
        partial = path.with_name(f"{path.name}.partial-{socket.gethostname()}-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        model.save(str(partial), create_model_card=False)
        if path.is_dir() and not (path / "modules.json").is_file():
            shutil.rmtree(path)  # not a saved model (saves are renamed into place whole)
        try:
            os.rename(partial, path)
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)
            if not (path / "modules.json").is_file():  # else another process saved the same model first
                raise


def _remove_abandoned(folder: Path) -> None:
    """Delete the partial copies that this host's killed processes left in ``folder`` (before their rename).

    A live process is still saving its copy; another host's processes cannot be seen from here (a shared cache).
    """
    for partial in folder.glob("*.partial-*"):
        host, _, pid = partial.name.partition(".partial-")[2].rpartition("-")
        if host == socket.gethostname() and pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)
