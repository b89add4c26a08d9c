"""A real replay of LoCoMo conversations through the default stack, with real recall figures."""

import json
from pathlib import Path

import pytest

from openclaw_lab.cli import main
from openclaw_lab.datasets import load_locomo, load_longmemeval
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment

CONFIG = {
    "name": "locomo-test",
    "dataset": {"name": "locomo", "conversations": ["conv-30"]},
    "consolidation": {"enabled": True, "law": "seed"},
    "systems": [{"name": "dense", "strategy": "dense"}, {"name": "bm25", "strategy": "bm25"}],
    "metrics": {"k": [1, 5, 10], "gate": ["session.recall@10", "turn.recall@10"]},
}


@pytest.fixture(scope="module")
def locomo_run(locomo_path, embedder, tmp_path_factory):
    """CONFIG's run of conv-30, written to a results folder, with answer-in-context at three budgets."""
    config = ExperimentConfig.from_dict({**CONFIG, "metrics": {**CONFIG["metrics"], "answer_budgets": [64, 512, 2048]}})
    benchmark = load_locomo(locomo_path, conversations=["conv-30"])
    results = tmp_path_factory.mktemp("results")
    return run_experiment(config, results_dir=results, embedder=embedder, benchmark=benchmark, progress=False)


def test_real_recall_on_a_locomo_conversation(locomo_run):
    table = locomo_run.table()
    # Measured on conv-30 (105 questions): dense session recall@10 is far above chance (19 sessions).
    assert table.loc["dense", "session.recall@10"] > 0.6
    assert table.loc["bm25", "session.recall@10"] > 0.5
    assert table.loc["dense", "turn.recall@10"] > 0.3
    for system in ("dense", "bm25"):
        assert table.loc[system, "turn.recall@1"] <= table.loc[system, "turn.recall@5"] <= table.loc[system, "turn.recall@10"]
    assert locomo_run.memory["retention.episodic"] == 1.0  # the seed policy prunes semantic items only
    assert 0 < locomo_run.memory["promotion.recall"] <= 1


def test_the_run_folder_holds_everything_needed_to_reproduce(locomo_run):
    root = locomo_run.path
    for name in ("config.json", "environment.json", "metrics.json", "per_category.csv", "footprint.csv",
                 "questions.csv", "runs/dense.turn.json", "runs/qrels.session.json",
                 "recall_at_k.session.png"):  # fmt: skip
        assert (root / name).exists(), name
    environment = json.loads((root / "environment.json").read_text())
    assert environment["dataset"]["sha256"] == "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
    assert environment["packages"]["ranx"] and environment["packages"]["chromadb"]
    run = json.loads((root / "runs/dense.session.json").read_text())
    qrels = json.loads((root / "runs/qrels.session.json").read_text())
    assert set(run) == set(qrels)  # every evaluated question is in the run


def test_check_passes_on_its_own_baseline_and_fails_on_a_higher_one(locomo_run, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    assert main(["check", str(locomo_run.path), "--baseline", str(baseline), "--update"]) == 0
    assert main(["check", str(locomo_run.path), "--baseline", str(baseline), "--tolerance", "0"]) == 0
    data = json.loads(baseline.read_text())
    values = data["per_question"]["dense"]["session.recall@10"]
    data["per_question"]["dense"]["session.recall@10"] = dict.fromkeys(values, 1.0)  # every question found
    baseline.write_text(json.dumps(data))
    assert main(["check", str(locomo_run.path), "--baseline", str(baseline), "--tolerance", "0.01"]) == 1
    assert "REGRESSION      dense session.recall@10" in capsys.readouterr().out


def test_compare_gives_p_values_against_the_first_system(locomo_run):
    from openclaw_lab.harness.compare import compare_dirs

    table = compare_dirs([locomo_run.path], level="session")
    assert list(table.index) == ["dense", "bm25"]  # the config's order: its first system is the baseline
    p = table["p(recall@10)"].dropna()
    assert len(p) == 1 and 0.0 <= float(p.iloc[0]) <= 1.0
    against_bm25 = compare_dirs([locomo_run.path], level="session", baseline="bm25")
    assert list(against_bm25.index) == ["bm25", "dense"]
    assert against_bm25.loc["dense", "p(recall@10)"] == table.loc["bm25", "p(recall@10)"]  # a paired test is symmetric
    with pytest.raises(ValueError, match="^baseline: no system 'bm52'"):
        compare_dirs([locomo_run.path], baseline="bm52")


def test_compare_tests_our_own_metrics_as_metrics_json_scores_them(locomo_run):
    from openclaw_lab.harness.compare import compare_dirs

    table = compare_dirs([locomo_run.path], level="turn", metrics=["recall_all@5", "recall@5"])
    for system in ("dense", "bm25"):
        for metric in ("recall_all@5", "recall@5"):
            assert table.loc[system, metric] == pytest.approx(locomo_run.metrics[system][f"turn.{metric}"], abs=1e-4)
    assert table.loc["dense", "recall_all@5"] < table.loc["dense", "recall@5"]  # every piece of evidence, not any
    assert 0.0 <= table.loc["bm25", "p(recall_all@5)"] <= 1.0
    with pytest.raises(ValueError, match="^metrics: 'recall_all' needs a cut-off"):
        compare_dirs([locomo_run.path], metrics=["recall_all"])
    with pytest.raises(ValueError, match="^metrics: .*recal.* Ours: recall_all@k, ndcg_lme@k"):
        compare_dirs([locomo_run.path], metrics=["recal@5"])


def test_compare_keeps_only_the_named_categories(locomo_run, tmp_path, capsys):
    import shutil

    import pandas as pd

    from openclaw_lab.harness.compare import compare_dirs

    per_category = pd.read_csv(locomo_run.path / "per_category.csv")
    dense = per_category[(per_category["system"] == "dense") & (per_category["level"] == "turn")].set_index("category")
    subset = ["single-hop", "temporal"]
    table = compare_dirs([locomo_run.path], level="turn", metrics=["recall@5", "mrr"], categories=subset)
    assert list(table.columns) == ["recall@5", "mrr", "p(recall@5)", "p(mrr)"]
    weights = dense.loc[subset, "questions"]  # the subset's mean is the question-weighted mean of its categories
    expected = (dense.loc[subset, "recall@5"] * weights).sum() / weights.sum()
    assert table.loc["dense", "recall@5"] == pytest.approx(expected, abs=1e-4)
    assert table.loc["dense", "recall@5"] != pytest.approx(dense.loc["all", "recall@5"], abs=1e-4)
    assert main(["compare", str(locomo_run.path), "--level", "turn", "--categories", "single-hop,temporal",
                 "--metrics", "recall@5,mrr"]) == 0  # fmt: skip
    assert f"{table.loc['dense', 'recall@5']:.4f}".rstrip("0") in capsys.readouterr().out
    with pytest.raises(ValueError, match="^categories: no question of category 'single_hop' in .*; it has adversarial"):
        compare_dirs([locomo_run.path], categories=["single_hop"])
    older = tmp_path / "older"
    shutil.copytree(locomo_run.path, older)
    (older / "questions.csv").unlink()  # a run folder written before question categories were stored
    with pytest.raises(ValueError, match="^categories: .* has no questions.csv"):
        compare_dirs([older], categories=subset)
    assert list(compare_dirs([older]).index) == ["dense", "bm25"]  # without a filter it still compares
    both = compare_dirs([locomo_run.path, locomo_run.path], level="turn", metrics=["recall@5"], categories=subset)
    assert both.iloc[0]["recall@5"] == table.loc["dense", "recall@5"]  # two folders, the same filtered questions


def load_script(name: str):
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_named_speaker_recall_splits_a_run_by_the_speaker_a_question_names(locomo_run):
    from datetime import datetime

    from openclaw_lab.datasets.types import Question

    script = load_script("named_speaker_recall")
    speaker_of = {"D1:1": "Ann", "D1:2": "Bo"}

    def ask(text: str, evidence: tuple[str, ...]) -> Question:
        return Question("q", "c", text, "", "single-hop", datetime(2020, 1, 1), evidence)

    assert script.named_group(ask("What did Ann buy?", ("D1:1",)), speaker_of) == "evidence speaker"
    assert script.named_group(ask("What did Bo buy?", ("D1:1",)), speaker_of) == "other speaker"
    assert script.named_group(ask("What did Ann and Bo buy?", ("D1:1",)), speaker_of) == "both or none"
    assert script.named_group(ask("What was bought?", ("D1:1",)), speaker_of) == "both or none"
    table = script.main(str(locomo_run.path), ["dense"])
    assert table["questions"].sum() == locomo_run.questions["scored"]["turn"]
    overall = (table["dense R@10"] * table["questions"]).sum() / table["questions"].sum()
    assert overall == pytest.approx(locomo_run.metrics["dense"]["turn.recall@10"])  # the groups partition the run
    with pytest.raises(ValueError, match="'learned' has no turn run"):
        script.main(str(locomo_run.path), ["learned"])


def test_evidence_gap_counts_the_missed_sessions_by_the_words_they_share(locomo_run):
    from datetime import datetime

    from openclaw_lab.datasets.types import Conversation, Question, Session, Turn

    script = load_script("evidence_gap")
    day = datetime(2020, 1, 1)
    conversation = Conversation("c", (
        Session("s1", day, (Turn("D1:1", "Ann", "I adopted a puppy"), Turn("D1:2", "Bo", "Lovely"))),
        Session("s2", day, (Turn("D2:1", "Ann", "Went running at dawn", caption="a beach"),)),
        Session("s3", day, (Turn("D3:1", "Ann", "Nothing new"),)),
    ), speakers=("Ann", "Bo"))  # fmt: skip
    question = Question("q", "c", "Which pets and hobbies does Ann have?", "a puppy; running", "multi-hop", day,
                        ("D1:1", "D2:1"))  # fmt: skip
    assert script.evidence_words(question, conversation) == {"s1": {"adopt", "puppi"},
                                                             "s2": {"went", "run", "dawn", "beach"}}  # fmt: skip
    question = Question("q", "c", "Which pets and hobbies does Ann have? A puppy?", "running", "multi-hop", day,
                        ("D1:1", "D2:1"))  # fmt: skip
    rows = script.gap_rows(question, conversation, ["s1", "s2"], {"s1": 0.2, "s2": 0.1, "s3": 0.3}, k=1)
    assert [(r["retrieved"], r["shares_question"], r["shares_answer"]) for r in rows] == [
        (False, True, False), (False, False, True)]  # fmt: skip

    table, rows = script.main(str(locomo_run.path), "dense", k=5)
    assert script.session_recall(rows) == pytest.approx(locomo_run.metrics["dense"]["session.recall@5"])
    assert script.session_recall(rows) <= script.session_recall(rows, rows["shares_question"]) <= 1
    assert script.session_recall(rows, rows["category"].notna()) == 1
    assert table["evidence sessions"].sum() == len(rows)
    assert (table["missed, no word of question or answer"] <= table["missed, no word of the question"]).all()
    bound = table[["missed at 5", "no word of the question"]].min(axis=1)
    assert (table["missed, no word of the question"] <= bound).all()
    with pytest.raises(ValueError, match="'learned' has no session run .* it has bm25, dense"):
        script.main(str(locomo_run.path), "learned")


def test_a_second_run_never_overwrites_the_first(locomo_run, embedder):
    again = run_experiment(locomo_run.config, results_dir=locomo_run.path.parents[1], embedder=embedder,
                           benchmark=load_locomo(conversations=["conv-30"]), progress=False)  # fmt: skip
    assert again.path != locomo_run.path and locomo_run.path.exists()
    assert again.metrics == locomo_run.metrics  # deterministic


def test_an_admission_policy_stores_only_what_it_admits(locomo_path, embedder):
    config = ExperimentConfig.from_dict({**CONFIG, "memory": {"admission": "rules"}, "consolidation": {},
                                         "systems": [{"name": "dense", "strategy": "dense"}]})  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder,
                            benchmark=load_locomo(locomo_path, conversations=["conv-30"]), progress=False)  # fmt: skip
    kept = result.memory["admission.kept"]
    assert 0 < kept < result.memory["units_seen"]
    assert result.footprint.iloc[-1]["episodic"] == kept  # CRITICAL ones are also copied to semantic memory
    assert 0 < result.memory["admission.precision"] < 1 and 0 < result.memory["admission.recall"] < 1


def test_answer_in_context_grows_with_the_budget(locomo_run):
    share = locomo_run.answer_in_context.loc["all", [64, 512, 2048]].tolist()
    assert share[0] < share[1] <= share[2] and share[2] > 0.2
    assert locomo_run.answer_in_context.loc["all", "questions"] < 105  # adversarial questions have no answer to find


FINE_TUNED = ("finetuned", "learned-finetuned", "learned-finetuned-combsum", "learned-finetuned-2-epochs-200")


def longmemeval_protocol(embedder, systems):
    """experiments/longmemeval-s.toml on the fixture, with only the named ``systems`` of the file."""
    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json"
    config = ExperimentConfig.from_toml(Path(__file__).resolve().parents[2] / "experiments" / "longmemeval-s.toml")
    config = config.with_values({"dataset.params": {"path": str(fixture), "drop_abstention": True},
                                 "systems": [s for s in config.to_dict()["systems"] if s["name"] in systems]})  # fmt: skip
    return run_experiment(config, results_dir=None, embedder=embedder, progress=False)


@pytest.mark.slow  # every fine-tuned system of the file; the next test runs the file without three of them
def test_longmemeval_format_under_the_official_protocol_with_every_fine_tuned_system(embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))  # where the fine-tuned fold models are saved
    result = longmemeval_protocol(embedder, ("dense", *FINE_TUNED))
    for name in ("dense", *FINE_TUNED):  # whole sessions as triplets
        assert set(result.runs[f"{name}.session"]) == set(result.qrels["session"])
    assert all("epochs=2" in fold["encoder"]["tuner"] for fold in result.models["learned-finetuned-2-epochs-200"])


def test_longmemeval_format_under_the_official_protocol(embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))  # where the fine-tuned fold models are saved
    config = ExperimentConfig.from_toml(Path(__file__).resolve().parents[2] / "experiments" / "longmemeval-s.toml")
    result = longmemeval_protocol(embedder, [s.name for s in config.systems if s.name not in FINE_TUNED[1:]])
    evaluated = set(result.qrels["session"])
    assert evaluated and not any(qid.endswith("_abs") for qid in evaluated)
    for name in ("dense", "finetuned", "rerank", "learned-splade"):  # whole sessions as triplets for finetuned
        assert set(result.runs[f"{name}.session"]) == evaluated
    assert 0.0 <= result.metrics["dense"]["session.hit_rate@5"] <= 1.0
    assert result.metrics["dense"]["session.recall_all@50"] == 1.0  # tiny haystacks: everything is within 50
    # a whole session is one memory, alone in its session: neighbour context changes nothing there
    assert result.runs["hybrid-context.session"] == result.runs["hybrid-combsum.session"]


def test_requests_for_advice_are_answered_by_dense_retrieval_on_the_longmemeval_path(embedder):
    """Preference questions ("Can you recommend…") name a topic, not the words the user used; the shipped `rerank`
    answers them by dense retrieval. The fixture is three hand-written questions whose other sessions are
    requests on other topics (tests/datasets/fixtures/lme_format_preferences.json)."""
    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_preferences.json"
    config = ExperimentConfig.from_dict({
        "name": "preferences", "dataset": {"name": "longmemeval", "params": {"path": str(fixture)}},
        "memory": {"unit": "user-session", "simulate_access": False}, "metrics": {"k": [1, 3]},
        "systems": [{"name": "dense", "strategy": "dense"}, {"name": "rerank", "strategy": "rerank"},
                    {"name": "rerank-all", "strategy": "rerank", "params": {"requests": "rerank"}}],
    })  # fmt: skip
    benchmark = load_longmemeval(fixture)
    assert {q.category for q in benchmark.questions} == {"single-session-preference"}
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert result.runs["rerank.session"] == result.runs["dense.session"]
    # measured: MRR 0.611 routed, 0.333 reranked (the other requests share the question's words)
    assert result.metrics["rerank"]["session.mrr"] > result.metrics["rerank-all"]["session.mrr"]


def test_the_cross_fitted_reranker_ranks_whole_sessions_with_its_session_features(embedder):
    """With session units each session is one memory: the session features repeat its scores, and still rank."""
    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json"
    config = ExperimentConfig.from_toml(Path(__file__).resolve().parents[2] / "experiments" / "longmemeval-s.toml")
    config = config.with_values({
        "dataset.params": {"path": str(fixture), "drop_abstention": True},
        "systems": [{"name": "learned", "strategy": "learned-crossfit", "params": {"folds": 2}}],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, progress=False)
    assert set(result.runs["learned.session"]) == set(result.qrels["session"])
    assert all("session_top3" in fold["features"] for fold in result.models["learned"])


@pytest.fixture(scope="module")
def two_conversations(locomo_path, embedder):
    """conv-30 and conv-26 without consolidation, one replay scored by the systems the next tests compare."""
    sources = ["dense", "bm25", "context"]
    crossfit = [("plain", {"session": False}), ("session", {}), ("context-source", {"sources": sources}),
                ("splade-source", {"sources": [*sources, "splade"]})]
    systems = [{"name": "combsum", "strategy": "hybrid", "params": {"method": "wsum", "candidates": 1000}},
               {"name": "context", "strategy": "hybrid-context"},
               *({"name": name, "strategy": "learned-crossfit", "params": {"folds": 2, **params}}
                 for name, params in crossfit)]  # fmt: skip
    config = ExperimentConfig.from_dict({**CONFIG, "consolidation": {"enabled": False}, "systems": systems,
                                         "metrics": {"k": [10]}})  # fmt: skip
    benchmark = load_locomo(locomo_path, conversations=["conv-30", "conv-26"])
    return run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)


def test_session_features_find_more_evidence_turns_on_real_conversations(two_conversations):
    """Evidence clusters in a few sessions; the session features let the cross-fitted reranker use that."""
    plain, session = two_conversations.metrics["plain"], two_conversations.metrics["session"]
    assert session["turn.recall@10"] > plain["turn.recall@10"] + 0.02


def test_splade_as_a_source_finds_more_evidence_turns_on_real_conversations(two_conversations):
    """SPLADE weighs words a memory implies; as a fourth source the cross-fitted reranker finds more evidence."""
    without, with_splade = two_conversations.metrics["context-source"], two_conversations.metrics["splade-source"]
    # measured: recall@10 0.773 -> 0.786, nDCG@10 0.569 -> 0.598
    assert with_splade["turn.recall@10"] > without["turn.recall@10"]
    assert with_splade["turn.ndcg@10"] > without["turn.ndcg@10"] + 0.02
    assert all("splade_score_z" in fold["features"] for fold in two_conversations.models["splade-source"])


def test_splade_ranks_whole_sessions_on_the_longmemeval_path(embedder):
    """With session units (the LongMemEval protocol), alone and as a source: every question is ranked."""
    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json"
    config = ExperimentConfig.from_toml(Path(__file__).resolve().parents[2] / "experiments" / "longmemeval-s.toml")
    config = config.with_values({
        "dataset.params": {"path": str(fixture), "drop_abstention": True},
        "systems": [{"name": "splade", "strategy": "splade"},
                    {"name": "learned", "strategy": "learned-crossfit",
                     "params": {"folds": 2, "sources": ["dense", "bm25", "splade"]}}],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, progress=False)
    for name in ("splade", "learned"):
        assert set(result.runs[f"{name}.session"]) == set(result.qrels["session"])
    assert result.metrics["splade"]["session.hit_rate@5"] > 0.5


def test_neighbour_context_finds_more_evidence_turns_than_its_first_stage(two_conversations):
    """On real LoCoMo conversations the evidence is often a short reply whose meaning sits in the turn before."""
    combsum, context = two_conversations.metrics["combsum"], two_conversations.metrics["context"]
    assert context["turn.recall@10"] > combsum["turn.recall@10"] + 0.03


@pytest.mark.slow  # three minutes of fine-tuning; the default run fits a small model in tests/retrieval/test_finetune.py
def test_a_fine_tuned_encoder_finds_more_evidence_turns_than_its_base_on_real_conversations(
    locomo_path, embedder, tmp_path, monkeypatch
):
    """Fitted on one conversation's questions and evidence, MiniLM ranks the other conversation's turns better."""
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))  # where the fold models are saved
    systems = [{"name": "dense", "strategy": "dense"},
               {"name": "finetuned", "strategy": "finetuned-crossfit", "params": {"folds": 2}}]  # fmt: skip
    config = ExperimentConfig.from_dict({**CONFIG, "consolidation": {"enabled": False}, "systems": systems,
                                         "metrics": {"k": [10]}})  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder,
                            benchmark=load_locomo(locomo_path, conversations=["conv-30", "conv-26"]), progress=False)  # fmt: skip
    dense, finetuned = result.metrics["dense"], result.metrics["finetuned"]
    assert finetuned["turn.recall@10"] > dense["turn.recall@10"] + 0.10  # measured: 0.420 -> 0.640


def test_whole_session_units_take_their_answer_sessions_as_fine_tuning_positives(embedder, tmp_path, monkeypatch):
    """q_soup_tip's evidence is an assistant turn, which no user-session key holds: only ``positives = "sessions"``
    pairs it with its answer session. Each of the other four questions pairs with its answer sessions either way."""
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))
    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json"
    config = ExperimentConfig.from_toml(Path(__file__).resolve().parents[2] / "experiments" / "longmemeval-s.toml")
    systems = [{"name": positives, "strategy": "finetuned-crossfit",
                "params": {"folds": 2, "batch_size": 4, "positives": positives}} for positives in ("turns", "sessions")]
    config = config.with_values({"dataset.params": {"path": str(fixture), "drop_abstention": True}, "systems": systems})
    result = run_experiment(config, results_dir=None, embedder=embedder, progress=False)
    # two folds: every question trains in exactly one, so the folds' triplets add up to all of them
    triplets = {name: sum(fold["triplets"] for fold in result.models[name]) for name in ("turns", "sessions")}
    assert triplets == {"turns": 6, "sessions": 7}  # 1 + 2 + 1 + 2 answer sessions, and q_soup_tip's one
