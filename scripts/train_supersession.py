"""Fit the learned supersession model that ``consolidation.supersession = { strategy = "learned" }`` ships with.

    python scripts/train_supersession.py

Training data: the synthetic generator's consolidation labels (seed 2024, which no committed experiment
uses). Each conversation's turns become memory items as a replay stores them (content ``speaker: text``,
the turn's time, the all-MiniLM-L6-v2 embedding); the candidate pairs are those similarity supersession
considers at ``MIN_SIMILARITY``; a pair is positive when both turns state the same fact and the newer one is
a later version. Before fitting on everything it prints, and records in the model's provenance, the
precision and recall at 0.5 of a model cross-fitted by conversation (5 folds).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from openclaw_lab.consolidation.learned_supersession import DEFAULT_MODEL_PATH, LearnedSupersession, pair_features
from openclaw_lab.consolidation.supersession import candidate_pairs
from openclaw_lab.datasets import generate
from openclaw_lab.datasets.synthetic import VERSION
from openclaw_lab.embedding import Embedder
from openclaw_lab.replay.conversation import memory_units
from openclaw_lab.model import MemoryItem

SEED, N_TURNS, MIN_SIMILARITY, FOLDS = 2024, 10_000, 0.3, 5
PARAMS = {"duplicate_rate": 0.03, "retraction_rate": 0.003, "plan_rate": 0.01}


def conversation_items(conversation, embedder) -> list[MemoryItem]:
    """One conversation's turns as a replay stores them: ``speaker: text``, the turn's time, the embedding."""
    items = []
    for session in conversation.sessions:
        for n, record in enumerate(memory_units(session, "turn", conversation.id)):
            items.append(MemoryItem.new(record["content"], now=session.started_at + timedelta(seconds=30 * n),
                                        id=record["source_ids"][0], metadata=record["metadata"]))  # fmt: skip
    vectors = embedder.encode([item.content for item in items], progress=False)
    return [item.replace(embedding=vector) for item, vector in zip(items, vectors)]


def conversation_pairs(conversation, labels, embedder):
    """The candidate pairs of one conversation's turns: features and labels."""
    live, pairs = candidate_pairs(conversation_items(conversation, embedder), MIN_SIMILARITY, 0.95)
    statements = labels.statements
    positive = [older.id in statements and newer.id in statements
                and statements[older.id].fact == statements[newer.id].fact
                and statements[newer.id].version > statements[older.id].version
                for older, newer in ((live[i], live[j]) for i, j, _ in pairs)]  # fmt: skip
    return pair_features(live, pairs), np.asarray(positive, dtype=bool)


def cross_fitted(parts) -> dict[str, float]:
    """Precision and recall at 0.5 of models fitted on the other folds' conversations."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    predicted, truth = [], []
    for fold in range(FOLDS):
        train = [p for n, p in enumerate(parts) if n % FOLDS != fold]
        test = [p for n, p in enumerate(parts) if n % FOLDS == fold]
        x, y = np.vstack([p[0] for p in train]), np.concatenate([p[1] for p in train])
        scaler = StandardScaler().fit(x)
        model = LogisticRegression(max_iter=2000).fit(scaler.transform(x), y)
        predicted.append(model.predict(scaler.transform(np.vstack([p[0] for p in test]))))
        truth.append(np.concatenate([p[1] for p in test]))
    predicted, truth = np.concatenate(predicted).astype(bool), np.concatenate(truth)
    right = int((predicted & truth).sum())
    return {"precision@0.5": right / max(int(predicted.sum()), 1), "recall@0.5": right / max(int(truth.sum()), 1)}


def main() -> None:
    benchmark = generate(N_TURNS, seed=SEED, **PARAMS)
    embedder = Embedder()
    parts = [conversation_pairs(c, benchmark.labels, embedder) for c in benchmark.conversations]
    held_out = cross_fitted(parts)
    x, y = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    provenance = {"dataset": f"synthetic v{VERSION}", "sha256": benchmark.sha256, "seed": SEED, "n_turns": N_TURNS,
                  **PARAMS, "min_similarity": MIN_SIMILARITY, "cross_fitted": held_out, "embedding": embedder.model_id,
                  "script": "scripts/train_supersession.py"}  # fmt: skip
    LearnedSupersession.save(DEFAULT_MODEL_PATH, x, y, provenance)
    print(f"{y.size} pairs, {int(y.sum())} positive; cross-fitted by conversation: {held_out} -> {DEFAULT_MODEL_PATH}")


if __name__ == "__main__":
    main()
