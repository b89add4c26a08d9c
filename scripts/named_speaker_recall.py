"""Turn recall@10 of a LoCoMo run, split by whether the question names the speaker of its evidence.

    python scripts/named_speaker_recall.py results/locomo-baselines/<run-id> [system ...]

A memory's key is ``speaker: text``, so an encoder can learn to rank the turns of the speaker a question
names. On LoCoMo's categories 1-4 the named speaker is almost always the evidence's; an adversarial
question asks about one speaker what the other said. The table shows, per system, how much of its recall
rests on that regularity, and the named speaker's share of its top 10.
"""

from __future__ import annotations

import sys

import pandas as pd

from openclaw_lab.datasets import load_locomo
from openclaw_lab.datasets.types import Question
from openclaw_lab.errors import OpenClawError
from openclaw_lab.evaluation.metrics import evaluate_run
from openclaw_lab.harness.results import read_run

K = 10


def named_group(question: Question, speaker_of: dict[str, str]) -> str:
    """``evidence speaker`` when the question names only speakers of its evidence, ``other speaker`` when it
    names only others, else ``both or none``."""
    named = {speaker for speaker in set(speaker_of.values()) if speaker in question.text}
    evidence = {speaker_of[turn] for turn in question.evidence_turn_ids}
    if named and named <= evidence:
        return "evidence speaker"
    if named and not named & evidence:
        return "other speaker"
    return "both or none"


def main(run_dir: str, systems: list[str]) -> pd.DataFrame:
    data = read_run(run_dir)
    benchmark = load_locomo(conversations=data["config"]["dataset"].get("conversations"))
    speaker_of = {c.id: {t.id: t.speaker for s in c.sessions for t in s.turns} for c in benchmark.conversations}
    qrels = data["qrels"]["turn"]
    questions = [q for q in benchmark.questions if q.id in qrels]
    groups = pd.DataFrame([{"question": q.id, "subset": "adversarial" if q.category == "adversarial" else "1-4",
                            "names": named_group(q, speaker_of[q.conversation_id])} for q in questions])  # fmt: skip
    groups = groups.set_index("question")
    columns = {}
    for system in systems or [s["name"] for s in data["config"]["systems"]]:
        if f"{system}.turn" not in data["runs"]:
            raise ValueError(f"system: {system!r} has no turn run in {data['path']}")
        run = data["runs"][f"{system}.turn"]
        recall = evaluate_run(qrels, run, [K])[f"recall@{K}"]
        top = {q.id: sorted(run[q.id], key=lambda turn: (-run[q.id][turn], turn))[:K] for q in questions}
        named_share = pd.Series({q.id: sum(speaker_of[q.conversation_id][t] in q.text for t in top[q.id]) / K
                                 for q in questions})  # fmt: skip
        columns[f"{system} R@{K}"] = recall
        columns[f"{system} named share"] = named_share
    table = groups.join(pd.DataFrame(columns)).groupby(["subset", "names"]).mean()
    return table.assign(questions=groups.groupby(["subset", "names"]).size())


if __name__ == "__main__":
    try:
        print(main(sys.argv[1], sys.argv[2:]).round(3).to_markdown())
    except (OpenClawError, FileNotFoundError, ValueError) as error:
        sys.exit(f"named_speaker_recall: {error}")
