"""How far an LLM judge agrees with a person: a labelling sheet drawn from a QA table, and the agreement on it.

A judge's accuracy figure is only as good as the judge. ``labelling_sheet`` draws a seeded sample of the
QA stage's verdicts, the same number from each system, with the question, the gold answer and the answer
(not the judge's verdict, so the person labelling is not led by it); a person writes ``CORRECT`` or
``WRONG`` in its ``label`` column; ``judge_agreement`` then reads the sheet against the judge's verdicts.

>>> import pandas as pd
>>> table = pd.DataFrame({"system": ["a"] * 4, "budget": [256] * 4, "question": list("pqrs"),
...                       "verdict": ["CORRECT", "CORRECT", "WRONG", "unread"]})
>>> labels = table.assign(label=["CORRECT", "WRONG", "WRONG", "CORRECT"]).drop(columns="verdict")
>>> figures = judge_agreement(table, labels)
>>> figures["labelled"], figures["agreement"], figures["judge_correct_when_person_wrong"]
(4, 0.5, 1)
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["labelling_sheet", "judge_agreement", "KEYS"]

KEYS = ["system", "budget", "question"]  # one verdict of the QA table
LABELS = ("CORRECT", "WRONG")
SHEET_COLUMNS = [*KEYS, "category", "question_text", "gold_answer", "answer", "label"]


def labelling_sheet(table: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` verdicts of ``table`` (a QA stage's ``qa.csv``) to label by hand: as many from each system as
    ``n`` allows (the first systems take the remainder), drawn with ``seed`` (each system its own draw, so that
    the sheet covers more questions), with an empty ``label`` column."""
    systems = list(dict.fromkeys(table["system"]))
    if n < 1 or n > len(table):
        raise ValueError(f"n: {n} must be between 1 and the table's {len(table)} verdicts")
    share, extra = divmod(n, len(systems))
    parts = []
    for i, system in enumerate(systems):
        rows = table[table["system"] == system]
        take = min(len(rows), share + (i < extra))
        parts.append(rows.sample(n=take, random_state=seed + i))  # not the same questions for every system
    sheet = pd.concat(parts).assign(label="")
    return sheet[[c for c in SHEET_COLUMNS if c in sheet.columns]].reset_index(drop=True)


def judge_agreement(table: pd.DataFrame, labels: pd.DataFrame) -> dict[str, Any]:
    """The judge's verdicts in ``table`` against a person's ``label`` (CORRECT or WRONG) in ``labels``, matched on
    system, budget and question: the share where they agree, Cohen's kappa, and the two kinds of disagreement.
    A verdict the judge gave in no readable form (``unread``, ``empty``) counts as WRONG, as in the accuracy."""
    missing = [c for c in [*KEYS, "label"] if c not in labels.columns]
    if missing:
        raise ValueError(f"labels: no column {', '.join(missing)} (a labelling sheet has {', '.join(SHEET_COLUMNS)})")
    labels = labels.assign(label=labels["label"].astype(str).str.strip().str.upper())
    if bad := sorted(set(labels["label"]) - set(LABELS)):
        raise ValueError(f"labels.label: {bad} are not CORRECT or WRONG (every row of the sheet needs a label)")
    both = labels[[*KEYS, "label"]].merge(table[[*KEYS, "verdict"]], on=KEYS, how="left", validate="one_to_one")
    if unmatched := int(both["verdict"].isna().sum()):
        raise ValueError(f"labels: {unmatched} row(s) match no verdict of the run (system, budget, question)")
    judge = both["verdict"] == "CORRECT"
    person = both["label"] == "CORRECT"
    from sklearn.metrics import cohen_kappa_score

    kappa = float(cohen_kappa_score(person, judge)) if person.nunique() + judge.nunique() > 2 else float("nan")
    return {"labelled": len(both), "agreement": float((judge == person).mean()), "cohen_kappa": kappa,
            "judge_correct_when_person_wrong": int((judge & ~person).sum()),
            "judge_wrong_when_person_correct": int((~judge & person).sum()),
            "person_correct": int(person.sum()), "judge_correct": int(judge.sum())}  # fmt: skip
