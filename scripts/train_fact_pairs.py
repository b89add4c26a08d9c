"""Fit the fact-pair model that restatement merge and pair supersession ship with.

    python scripts/train_fact_pairs.py

Training data: the synthetic generator's consolidation labels (seed 2024, which no committed experiment
uses). Each conversation's turns become memory items as a replay stores them (content ``speaker: text``,
the turn's time, the all-MiniLM-L6-v2 embedding), and the candidate pairs are ``neighbour_pairs``'s. A pair
is a ``restatement`` when both turns state the same fact at the same version, an ``update`` when the newer
states a later version of the older's fact, else ``unrelated``. Only pairs with a labelled statement on
at least one side are used: whether two lines of chatter repeat each other, the labels do not say. Before
fitting on everything it prints, and records in the model's provenance, each relation's precision and
recall at 0.5 of models cross-fitted by conversation (5 folds).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from openclaw_lab.consolidation.fact_pairs import (
    DEFAULT_PAIR_MODEL, RELATIONS, FactPairModel, neighbour_pairs, pair_features,
)  # fmt: skip
from openclaw_lab.datasets import generate
from openclaw_lab.datasets.synthetic import VERSION
from openclaw_lab.datasets.types import FactLabels
from openclaw_lab.embedding import Embedder
from train_supersession import conversation_items  # scripts/: the turns as a replay stores them

SEED, N_TURNS, K, MIN_SIMILARITY, FOLDS = 2024, 40_000, 20, 0.3, 5
PARAMS = {"duplicate_rate": 0.03, "retraction_rate": 0.003, "plan_rate": 0.01}


def relation(labels: FactLabels, older: str, newer: str) -> int | None:
    """The index in ``RELATIONS`` of two turns' relation; None when neither states a labelled fact."""
    a, b = labels.statements.get(older), labels.statements.get(newer)
    if a is None and b is None:
        return None
    if a is None or b is None or a.fact != b.fact:
        return RELATIONS.index("unrelated")
    return RELATIONS.index("restatement" if a.version == b.version else "update")


def conversation_pairs(conversation, labels: FactLabels, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
    """The judged candidate pairs of one conversation's turns: features and relation indices."""
    live, pairs = neighbour_pairs(conversation_items(conversation, embedder), K, MIN_SIMILARITY)
    relations = [relation(labels, live[a].id, live[b].id) for a, b, _ in pairs]
    judged = [n for n, r in enumerate(relations) if r is not None]
    return pair_features(live, [pairs[n] for n in judged]), np.asarray([relations[n] for n in judged], dtype=int)


def cross_fitted(parts: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, dict[str, float]]:
    """Each relation's precision and recall at 0.5, of models fitted on the other folds' conversations."""
    predicted, truth = [], []
    path = Path(tempfile.mkdtemp()) / "fold.json"  # never over the shipped model
    for fold in range(FOLDS):
        train = [p for n, p in enumerate(parts) if n % FOLDS != fold]
        test = [p for n, p in enumerate(parts) if n % FOLDS == fold]
        FactPairModel.save(path, np.vstack([x for x, _ in train]), np.concatenate([y for _, y in train]),
                           k=K, min_similarity=MIN_SIMILARITY, provenance={})  # fmt: skip
        predicted.append(FactPairModel(path).probabilities(np.vstack([x for x, _ in test])))
        truth.append(np.concatenate([y for _, y in test]))
    chances, truth = np.vstack(predicted), np.concatenate(truth)
    out = {}
    for index, name in enumerate(RELATIONS[1:], 1):
        said, right = chances[:, index] >= 0.5, truth == index
        out[name] = {"precision@0.5": float((said & right).sum() / max(said.sum(), 1)),
                     "recall@0.5": float((said & right).sum() / max(right.sum(), 1))}  # fmt: skip
    return out


def main() -> None:
    benchmark = generate(N_TURNS, seed=SEED, **PARAMS)
    embedder = Embedder()
    parts = [conversation_pairs(c, benchmark.labels, embedder) for c in benchmark.conversations]
    held_out = cross_fitted(parts)
    x, y = np.vstack([x for x, _ in parts]), np.concatenate([y for _, y in parts])
    provenance = {"dataset": f"synthetic v{VERSION}", "sha256": benchmark.sha256, "seed": SEED, "n_turns": N_TURNS,
                  **PARAMS, "cross_fitted": held_out, "embedding": embedder.model_id,
                  "script": "scripts/train_fact_pairs.py"}  # fmt: skip
    FactPairModel.save(DEFAULT_PAIR_MODEL, x, y, k=K, min_similarity=MIN_SIMILARITY, provenance=provenance)
    print(f"{y.size} pairs {np.bincount(y).tolist()} ({', '.join(RELATIONS)}); cross-fitted by conversation: "
          f"{held_out} -> {DEFAULT_PAIR_MODEL}")


if __name__ == "__main__":
    main()
