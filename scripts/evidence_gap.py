"""The evidence sessions a LoCoMo run misses at session rank k, split by the words they share with the question.

    python scripts/evidence_gap.py results/locomo-baselines/<run-id> <system> [--k 5]

An evidence session is missed when it is not among the system's top k sessions. Its evidence words are the
content words (NLTK's stopwords out, Snowball-stemmed, as BM25 reads them) of its evidence turns and their
image captions. A missed session that shares no word with the question, speaker names aside, can be found
only through what the words mean; one that shares none with the answer either is one whose link to the
question a reader supplies. The table says how much of a session-recall gap is of each kind.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from openclaw_lab.datasets import load_locomo
from openclaw_lab.datasets.types import Conversation, Question
from openclaw_lab.errors import OpenClawError
from openclaw_lab.harness.results import read_run
from openclaw_lab.retrieval.tokenize import tokenize

CATEGORIES = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"]


def words(text: str) -> set[str]:
    return set(tokenize(text, stopwords="en_plus"))


def evidence_words(question: Question, conversation: Conversation) -> dict[str, set[str]]:
    """Each evidence session's evidence words (the words of its evidence turns and their captions)."""
    found: dict[str, set[str]] = {}
    for session in conversation.sessions:
        for turn in session.turns:
            if turn.id in question.evidence_turn_ids:
                found.setdefault(session.id, set()).update(words(f"{turn.text} {turn.caption}"))
    return found


def gap_rows(question: Question, conversation: Conversation, relevant: list[str], ranking: dict[str, float],
             k: int) -> list[dict]:  # fmt: skip
    """One row per relevant session of one question: retrieved within k, and the words it shares."""
    top = sorted(ranking, key=lambda session: (-ranking[session], session))[:k]
    names = set().union(*(words(speaker) for speaker in conversation.speakers))
    asked, answer = words(question.text) - names, words(str(question.answer))
    found = evidence_words(question, conversation)
    return [{"question": question.id, "category": question.category, "session": session,
             "retrieved": session in top, "shares_question": bool(found.get(session, set()) & asked),
             "shares_answer": bool(found.get(session, set()) & answer)} for session in relevant]  # fmt: skip


def main(run_dir: str, system: str, k: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-category table, and the per-session rows it sums."""
    data = read_run(run_dir)
    benchmark = load_locomo(conversations=data["config"]["dataset"].get("conversations"))
    conversations = {c.id: c for c in benchmark.conversations}
    if f"{system}.session" not in data["runs"]:
        systems = sorted(name.rsplit(".", 1)[0] for name in data["runs"] if name.endswith(".session"))
        raise ValueError(f"system: {system!r} has no session run in {data['path']}; it has {', '.join(systems)}")
    qrels, run = data["qrels"]["session"], data["runs"][f"{system}.session"]
    rows = pd.DataFrame([
        row for q in benchmark.questions if q.id in qrels
        for row in gap_rows(q, conversations[q.conversation_id], [s for s, grade in qrels[q.id].items() if grade > 0],
                            run.get(q.id, {}), k)
    ])  # fmt: skip
    missed = rows[~rows["retrieved"]]
    table = pd.DataFrame({
        "evidence sessions": rows.groupby("category").size(),
        "no word of the question": rows[~rows["shares_question"]].groupby("category").size(),
        f"missed at {k}": missed.groupby("category").size(),
        "missed, no word of the question": missed[~missed["shares_question"]].groupby("category").size(),
        "missed, no word of question or answer": missed[~missed["shares_question"] & ~missed["shares_answer"]]
        .groupby("category").size(),
    }).reindex([c for c in CATEGORIES if c in set(rows["category"])]).fillna(0).astype(int)
    return table, rows


def session_recall(rows: pd.DataFrame, found: pd.Series | None = None) -> float:
    """Session recall at the table's k over the rows' questions; ``found`` counts more sessions as found."""
    retrieved = rows["retrieved"] if found is None else rows["retrieved"] | found
    return float(retrieved.groupby(rows["question"]).mean().mean())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("system")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    try:
        table, rows = main(args.run_dir, args.system, args.k)
    except (OpenClawError, FileNotFoundError, ValueError) as error:
        sys.exit(f"evidence_gap: {error}")
    print(table.to_markdown())
    standard = rows[rows["category"] != "adversarial"]  # LoCoMo's categories 1-4, issue 20's subset
    print(f"\ncategories 1-4: session recall@{args.k} {session_recall(standard):.3f}; counting every evidence session "
          f"that shares a word with its question as found, {session_recall(standard, standard['shares_question']):.3f}")
