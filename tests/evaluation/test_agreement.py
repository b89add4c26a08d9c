"""The judge against hand labels: the sheet to label, and the agreement read back (worked out by hand)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from openclaw_lab.cli import main
from openclaw_lab.evaluation.agreement import judge_agreement, labelling_sheet


@pytest.fixture
def run_dir(tmp_path):
    rows = [{"system": system, "budget": 256, "question": f"q{i}", "category": "temporal", "question_text": f"when {i}?",
             "gold_answer": f"day {i}", "answer": f"day {i}" if i % 2 else "I don't know",
             "verdict": ["CORRECT", "WRONG", "unread", "CORRECT"][i % 4]}
            for system in ("dense", "bm25") for i in range(6)]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "qa.csv", index=False)
    return tmp_path


def test_a_sheet_takes_as_many_from_each_system_hides_the_verdict_and_is_drawn_again_the_same(run_dir, capsys):
    assert main(["judge", "sheet", str(run_dir), "--n", "5", "--seed", "3"]) == 0
    sheet = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(sheet["system"]) == ["dense"] * 3 + ["bm25"] * 2
    assert "verdict" not in sheet.columns and set(sheet["label"]) == {""}
    assert not sheet.duplicated(["system", "question"]).any()
    main(["judge", "sheet", str(run_dir), "--n", "5", "--seed", "3"])
    assert pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False).equals(sheet)


def test_agreement_and_kappa_worked_out_by_hand(run_dir, tmp_path, capsys):
    table = pd.read_csv(run_dir / "qa.csv")
    labels = table[table["system"] == "dense"][["system", "budget", "question"]].assign(
        label=["CORRECT", "WRONG", "WRONG", "WRONG", "correct ", "CORRECT"])  # q0..q5; a label's case and spaces are forgiven
    # judge: C W unread(W) C C W; person: C W W W C C -> agree on q0 q1 q2 q4 (4 of 6); judge C / person W: q3;
    # judge W / person C: q5. Kappa: p_o = 4/6, p_e = (3/6)(3/6) + (3/6)(3/6) = 1/2 -> (2/3 - 1/2) / (1/2) = 1/3
    figures = judge_agreement(table, labels)
    assert figures["labelled"] == 6 and figures["agreement"] == pytest.approx(4 / 6)
    assert figures["cohen_kappa"] == pytest.approx(1 / 3)
    assert (figures["judge_correct_when_person_wrong"], figures["judge_wrong_when_person_correct"]) == (1, 1)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    assert main(["judge", "agreement", str(run_dir), str(tmp_path / "labels.csv")]) == 0
    assert "agreement: 0.6667" in capsys.readouterr().out


def test_a_sheet_with_a_missing_label_or_a_row_of_another_run_is_refused(run_dir, tmp_path, capsys):
    table = pd.read_csv(run_dir / "qa.csv")
    keys = table[["system", "budget", "question"]].head(2)
    with pytest.raises(ValueError, match=r"labels\.label: \[''\] are not CORRECT or WRONG"):
        judge_agreement(table, keys.assign(label=["CORRECT", ""]))
    with pytest.raises(ValueError, match=r"labels: 1 row\(s\) match no verdict"):
        judge_agreement(table, pd.concat([keys, keys.head(1).assign(question="q99")]).assign(label="WRONG"))
    with pytest.raises(ValueError, match="labels: no column label"):
        judge_agreement(table, keys)
    assert main(["judge", "sheet", str(tmp_path / "nowhere"), "--n", "5"]) == 2
    assert "no qa.csv" in capsys.readouterr().err
