"""Leave one dataset out: does the fact-pair model carry to a kind of history it was not fitted on?

    python scripts/pair_model_lodo.py [--beam PATH] [--turns N]

Three kinds of history with fact labels on their turns: the synthetic generator (seed 2024, the shipped model's
data, ``--turns`` turns), the hand-written set (``datasets/fact-updates``) and BEAM's knowledge-update chats
(``<data path>/beam-ku/beam_ku_100K.json``, or ``--beam``; never committed here, see its card). Each turn is a
memory as a replay stores it, the candidate pairs are ``neighbour_pairs``'s and a pair's relation comes from
the labels (``train_fact_pairs.relation``). For each held-out dataset it prints each relation's precision and
recall at 0.5 of:

- ``shipped``: the model that ships (fitted on the generator alone);
- ``in-domain``: models cross-fitted on the dataset's own other chats (5 folds by chat: questions on one
  chat share its sessions and a fold);
- ``others``: a model fitted on the two other datasets only (leave one dataset out).

Fitted models go to a temporary folder, never over the shipped one.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from train_fact_pairs import FOLDS, K, MIN_SIMILARITY, PARAMS, SEED, conversation_pairs

from openclaw_lab.consolidation.fact_pairs import RELATIONS, FactPairModel
from openclaw_lab.datasets import generate
from openclaw_lab.datasets.datapath import find_dataset
from openclaw_lab.datasets.longmemeval import load_longmemeval
from openclaw_lab.embedding import Embedder

HAND = Path(__file__).resolve().parents[1] / "datasets" / "fact-updates" / "fact_updates.json"
Parts = list[tuple[np.ndarray, np.ndarray]]  # per conversation: features, relation indices


def scores(chances: np.ndarray, truth: np.ndarray) -> dict[str, str]:
    """Each relation's precision / recall at 0.5, with how many pairs it has."""
    out = {}
    for index, name in enumerate(RELATIONS[1:], 1):
        said, right = chances[:, index] >= 0.5, truth == index
        hits = int((said & right).sum())
        out[name] = f"{hits / max(said.sum(), 1):.3f} / {hits / max(right.sum(), 1):.3f} (of {int(right.sum())})"
    return out


def fitted(parts: Parts, folder: Path, name: str) -> FactPairModel:
    path = folder / f"{name}.json"
    FactPairModel.save(path, np.vstack([x for x, _ in parts]), np.concatenate([y for _, y in parts]),
                       k=K, min_similarity=MIN_SIMILARITY, provenance={})  # fmt: skip
    return FactPairModel(path)


def chats(conversations) -> list[int]:
    """Each conversation's chat: a LongMemEval file gives each question its own history, and questions on one
    chat share its sessions, so they share a fold (a pair fitted on must not be tested on)."""
    chat: dict[str, int] = {}
    out = []
    for conversation in conversations:
        ids = [session.id for session in conversation.sessions]
        number = next((chat[i] for i in ids if i in chat), len(set(chat.values())))
        chat.update(dict.fromkeys(ids, number))
        out.append(number)
    return out


def in_domain(parts: Parts, chat: list[int], folder: Path) -> tuple[np.ndarray, np.ndarray]:
    predicted, truth = [], []
    for fold in range(FOLDS):
        train = [p for p, c in zip(parts, chat) if c % FOLDS != fold]
        test = [p for p, c in zip(parts, chat) if c % FOLDS == fold]
        if not test or len({int(r) for _, y in train for r in y}) < len(RELATIONS):
            continue  # a fold without every relation to fit on: left out (said below)
        predicted.append(fitted(train, folder, "fold").probabilities(np.vstack([x for x, _ in test])))
        truth.append(np.concatenate([y for _, y in test]))
    return np.vstack(predicted), np.concatenate(truth)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--beam", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=8_000)
    args = parser.parse_args()
    beam = args.beam or find_dataset("beam-ku", "beam_ku_100K.json")
    embedder = Embedder()
    benchmarks = {"generator": generate(args.turns, seed=SEED, **PARAMS), "hand-written": load_longmemeval(HAND),
                  "beam-ku": load_longmemeval(beam)}  # fmt: skip
    data = {name: [conversation_pairs(c, bench.labels, embedder) for c in bench.conversations]
            for name, bench in benchmarks.items()}  # fmt: skip
    shipped, folder = FactPairModel(), Path(tempfile.mkdtemp())
    print(f"relation: precision / recall at 0.5 (of the labelled pairs); {', '.join(RELATIONS)}")
    for held_out, parts in data.items():
        x, y = np.vstack([x for x, _ in parts]), np.concatenate([y for _, y in parts])
        others = fitted([p for name, ps in data.items() if name != held_out for p in ps], folder, "others")
        count = len(set(chats(benchmarks[held_out].conversations)))
        print(f"\n{held_out}: {count} chats, {y.size} judged pairs {np.bincount(y, minlength=3).tolist()}")
        print(f"  shipped   {scores(shipped.probabilities(x), y)}")
        print(f"  in-domain {scores(*in_domain(parts, chats(benchmarks[held_out].conversations), folder))}")
        print(f"  others    {scores(others.probabilities(x), y)}", flush=True)


if __name__ == "__main__":
    main()
