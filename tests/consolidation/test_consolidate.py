"""consolidate(): promotion, idempotence, access propagation, merge provenance, pruning, the report."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import numpy as np
import pytest

from openclaw_lab.consolidation import (
    ConsolidationPolicy,
    ConsolidationReport,
    ConsolidationLog,
    MemoryLog,
    PrunePolicy,
    ScoreSummary,
    consolidate,
    consolidation_job,
    provenance,
)
from openclaw_lab.consolidation.decay import ExponentialDecay, NoDecay
from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.stores.exact import ExactStore


@pytest.fixture
def stores():
    return ExactStore(), ExactStore()


def ids(store) -> list[str]:
    return sorted(item.id for item in store.items())


def test_promotion_copies_the_item_with_its_provenance(stores, make_item, now):
    episodic, semantic = stores
    item = make_item("e1", importance=5, access=1, age_days=2, source_ids=["D1:3", "D1:4"], tags=["food"],
                     session_id="s1", metadata={"speaker": "Caroline"})
    episodic.upsert([item, make_item("e2", importance=2, axis=1)])  # e2 meets no rule
    report = consolidate(episodic, semantic, now=now)
    assert report.promoted == ("e1",) and ids(semantic) == ["sem_e1"]
    [copy] = semantic.get(["sem_e1"])
    assert copy.tier is MemoryTier.SEMANTIC and copy.content == item.content
    assert copy.importance == 5 and copy.access_count == 1
    assert copy.created_at == item.created_at and copy.last_accessed == item.last_accessed  # a copy is no access
    assert copy.source_ids == ("D1:3", "D1:4") and copy.session_id == "s1"
    assert copy.tags == ("food", "consolidated")
    assert copy.metadata["consolidated_from"] == "e1"
    assert copy.metadata["original_type"] == "episodic"
    assert copy.metadata["access_count"] == 1
    assert copy.metadata["consolidated_at"] == now.isoformat()
    assert copy.metadata["speaker"] == "Caroline"
    assert provenance(copy) == {"e1": 1}
    np.testing.assert_array_equal(copy.embedding, item.embedding)


def test_episodic_items_stay_and_are_marked(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([make_item("e1", importance=5)])
    report = consolidate(episodic, semantic, now=now)
    assert report.removed == () and ids(episodic) == ["e1"]
    [marked] = episodic.get(["e1"])
    assert marked.metadata["consolidated_into"] == "sem_e1"
    assert marked.access_count == 0 and marked.last_accessed == now  # the mark is not an access


def test_removal_after_promotion_when_the_policy_says_so(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([make_item("e1", importance=5), make_item("e2", importance=1, axis=1)])
    report = consolidate(episodic, semantic, now=now, policy=ConsolidationPolicy(remove_after_promotion=True))
    assert report.removed == ("e1",) and ids(episodic) == ["e2"] and ids(semantic) == ["sem_e1"]
    assert consolidate(episodic, semantic, now=now).promoted == ()


def test_a_second_run_with_nothing_new_promotes_nothing(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([make_item("e1", importance=5), make_item("e2", access=3, axis=1),
                     make_item("e3", importance=3, access=1, axis=2), make_item("e4", importance=1, axis=3)])
    first = consolidate(episodic, semantic, now=now)
    assert first.promoted == ("e1", "e2", "e3")
    snapshot = {item.id: item for item in semantic.items()}
    for later in (now, now + timedelta(hours=1)):
        again = consolidate(episodic, semantic, now=later)
        assert again.promoted == () and dict(again.merged) == {} and again.refreshed == ()
        assert again.counts["candidates"] == 0 and again.counts["semantic_after"] == 3
    assert {item.id: item for item in semantic.items()} == snapshot


def test_home_is_found_from_the_sem_id_alone(stores, make_item, now):
    # e.g. the episodic store was rebuilt without marks, and the copy predates source_access_counts
    episodic, semantic = stores
    episodic.upsert([make_item("e1", importance=5)])
    semantic.upsert([make_item("sem_e1", importance=5, tier="semantic")])
    assert consolidate(episodic, semantic, now=now).promoted == ()


def test_new_episodic_accesses_are_propagated_to_the_semantic_copy(stores, make_item, now):
    episodic, semantic = stores
    item = make_item("e1", importance=3, access=1)
    episodic.upsert([item])
    consolidate(episodic, semantic, now=now)
    later = now + timedelta(hours=3)
    episodic.upsert([item.accessed(later).accessed(later)])  # two retrievals hit the episodic copy
    report = consolidate(episodic, semantic, now=later)
    assert report.refreshed == ("sem_e1",) and report.promoted == ()
    [copy] = semantic.get(["sem_e1"])
    assert copy.access_count == 3 and copy.last_accessed == later
    assert provenance(copy) == {"e1": 3}
    assert copy.metadata["access_count"] == 1  # the snapshot at promotion time
    assert consolidate(episodic, semantic, now=later).refreshed == ()  # propagated once, not every run


def test_a_pruned_copy_comes_back_only_after_a_new_access(stores, make_item, now):
    episodic, semantic = stores
    item = make_item("e1", importance=5, access=3)
    episodic.upsert([item])
    consolidate(episodic, semantic, now=now)
    month = now + timedelta(days=30)  # 1.3 · 0.9^30 ≈ 0.055 < 0.1
    assert consolidate(episodic, semantic, now=month).pruned["semantic"] == ("sem_e1",)
    assert consolidate(episodic, semantic, now=month + timedelta(hours=1)).promoted == ()  # no churn
    [marked] = episodic.get(["e1"])
    episodic.upsert([marked.accessed(month + timedelta(hours=2))])
    assert consolidate(episodic, semantic, now=month + timedelta(hours=3)).promoted == ("e1",)
    assert semantic.get(["sem_e1"])[0].access_count == 4


def test_duplicates_within_one_run_merge_into_the_oldest(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([
        make_item("new", importance=3, access=1, age_days=1, source_ids=["D2:1"]),
        make_item("old", importance=5, access=2, age_days=3, source_ids=["D1:1"]),
        make_item("other", importance=5, axis=4),
    ])
    report = consolidate(episodic, semantic, now=now)
    assert report.promoted == ("old", "other") and dict(report.merged) == {"new": "sem_old"}
    [home] = semantic.get(["sem_old"])
    assert home.metadata["consolidated_from"] == "old,new"
    assert home.source_ids == ("D1:1", "D2:1") and home.access_count == 3 and home.importance == 5
    assert home.last_accessed == now - timedelta(days=1)
    assert episodic.get(["new"])[0].metadata["consolidated_into"] == "sem_old"
    assert consolidate(episodic, semantic, now=now).counts["candidates"] == 0


def test_paraphrases_merge_with_real_embeddings(stores, embedder, now):
    episodic, semantic = stores
    texts = {
        "e1": "I moved to Lisbon last year.",
        "e2": "Last year I moved to Lisbon.",          # cosine ≈ 0.99 with e1: merges
        "e3": "I moved to Berlin last year.",          # ≈ 0.55: another fact, kept apart
        "e4": "The recipe needs two eggs and flour.",  # ≈ 0.01
    }
    vectors = embedder.encode(list(texts.values()))
    episodic.upsert([
        MemoryItem.new(text, now=now - timedelta(hours=4 - n), id=key, importance=4, access_count=n + 1,
                       embedding=vector, source_ids=[f"D1:{n}"])
        for n, ((key, text), vector) in enumerate(zip(texts.items(), vectors))
    ])
    report = consolidate(episodic, semantic, now=now, merge_threshold=0.95)
    assert dict(report.merged) == {"e2": "sem_e1"}
    assert report.promoted == ("e1", "e3", "e4")
    [home] = semantic.get(["sem_e1"])
    assert home.content == texts["e1"]
    assert home.metadata["consolidated_from"] == "e1,e2"
    assert provenance(home) == {"e1": 1, "e2": 2}
    assert home.source_ids == ("D1:0", "D1:1") and home.access_count == 1 + 2
    assert semantic.count() == 3


def test_a_later_paraphrase_merges_into_an_existing_semantic_item(stores, embedder, now):
    episodic, semantic = stores
    first, second = embedder.encode(["I am allergic to peanuts.", "I'm allergic to peanuts."])
    episodic.upsert([MemoryItem.new("I am allergic to peanuts.", now=now, id="e1", importance=5, embedding=first)])
    consolidate(episodic, semantic, now=now)
    later = now + timedelta(days=2)
    episodic.upsert([MemoryItem.new("I'm allergic to peanuts.", now=later, id="e2", importance=4,
                                    access_count=2, embedding=second)])
    report = consolidate(episodic, semantic, now=later, embed=embedder.encode)
    assert dict(report.merged) == {"e2": "sem_e1"} and report.promoted == ()
    [home] = semantic.get(["sem_e1"])
    assert home.importance == 5 and home.access_count == 2 and home.last_accessed == later
    assert home.metadata["consolidated_from"] == "e1,e2"
    assert home.metadata["consolidated_at"] == now.isoformat()  # the first promotion


def test_merging_can_be_switched_off(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([make_item("a", importance=5), make_item("b", importance=5)])  # identical vectors
    assert consolidate(episodic, semantic, now=now, merge_threshold=None).promoted == ("a", "b")
    with pytest.raises(ValueError, match="^merge_threshold: "):
        consolidate(episodic, semantic, now=now, merge_threshold=1.5)


def test_candidates_without_embeddings_need_embed(stores, make_item, unit, now):
    class NoVectorStore(ExactStore):  # an episodic tier that hands items back without vectors
        def items(self, filter=None):
            return (item.replace(embedding=None) for item in super().items(filter))

    episodic, semantic = NoVectorStore(), ExactStore()
    episodic.upsert([make_item("e1", importance=5)])
    with pytest.raises(ValueError, match="^embed: 1 candidates"):
        consolidate(episodic, semantic, now=now)
    calls = []
    report = consolidate(episodic, semantic, now=now,
                         embed=lambda texts: calls.append(list(texts)) or np.stack([unit(2)] * len(texts)))
    assert report.promoted == ("e1",) and calls == [["memory e1"]]
    np.testing.assert_array_equal(semantic.get(["sem_e1"])[0].embedding, unit(2))


def test_prune_deletes_decayed_semantic_items_at_now(stores, make_item, now):
    episodic, semantic = stores
    semantic.upsert([
        make_item("fresh", importance=1, tier="semantic", axis=0),
        make_item("old", importance=5, access=3, age_days=25, tier="semantic", axis=1),  # 1.3·0.9^25 ≈ 0.093
        make_item("kept", importance=5, access=3, age_days=24, tier="semantic", axis=2),  # ≈ 0.104
    ])
    episodic.upsert([make_item("e-old", importance=1, age_days=400, axis=3)])
    report = consolidate(episodic, semantic, now=now)
    assert report.pruned == {"semantic": ("old",), "episodic": ()}
    assert ids(semantic) == ["fresh", "kept"] and ids(episodic) == ["e-old"]  # episodic untouched by default
    assert consolidate(ExactStore(), semantic, now=now + timedelta(days=1)).pruned["semantic"] == ("kept",)


def test_episodic_pruning_needs_its_own_policy(stores, make_item, now):
    episodic, semantic = stores
    episodic.upsert([make_item("e-old", importance=1, age_days=400), make_item("e-new", importance=1, axis=1)])
    report = consolidate(episodic, semantic, now=now, prune_episodic=PrunePolicy())
    assert report.pruned["episodic"] == ("e-old",) and ids(episodic) == ["e-new"]


def test_an_item_accessed_since_the_last_run_survives_the_prune(stores, make_item, now):
    # the weakest accessed item (importance 1, 1 access), last read 59 minutes before an hourly run:
    # (0.2 + 0.1) · 0.9^(59/1440) ≈ 0.299 > 0.1
    episodic, semantic = stores
    weak = make_item("weak", importance=1, access=1, age_days=59 / 1440, tier="semantic")
    semantic.upsert([weak])
    report = consolidate(episodic, semantic, now=now)
    assert report.pruned["semantic"] == () and report.scores["semantic"].min == pytest.approx(0.3 * 0.9 ** (59 / 1440))


def test_the_report_summarises_scores_and_goes_to_the_log(stores, make_item, now):
    episodic, semantic = stores
    semantic.upsert([make_item(f"s{n}", importance=5, age_days=n, tier="semantic", axis=n) for n in range(4)])
    log = MemoryLog()
    assert isinstance(log, ConsolidationLog)
    law = ExponentialDecay(half_life_days=1)  # importance 5: 1, 0.5, 0.25, 0.125
    report = consolidate(episodic, semantic, now=now, prune=PrunePolicy(law, threshold=0.2), log=log)
    assert isinstance(report, ConsolidationReport)
    assert report.pruned["semantic"] == ("s3",)
    summary = report.scores["semantic"]
    assert (summary.count, summary.min, summary.max) == (4, 0.125, 1.0)
    assert summary.median == pytest.approx((0.25 + 0.5) / 2)
    assert summary.p10 == pytest.approx(0.125 + 0.3 * (0.25 - 0.125))  # numpy's linear percentile
    assert summary.histogram[1] == 1 and summary.histogram[2] == 1 and summary.histogram[5] == 1
    assert summary.histogram[10] == 1 and sum(summary.histogram) == 4
    assert report.counts["semantic_before"] == 4 and report.counts["semantic_after"] == 3
    [entry] = log.consolidation_log()
    assert entry == json.loads(json.dumps(report.to_dict()))  # JSON-able, and what was logged
    assert entry["at"] == now.isoformat() and entry["pruned"]["semantic"] == ["s3"]
    assert "ExponentialDecay(half_life_days=1" in entry["config"]["prune"]


def test_score_summary_of_nothing_and_clipping():
    empty = ScoreSummary.of(np.array([]))
    assert empty.count == 0 and empty.median is None and sum(empty.histogram) == 0
    clipped = ScoreSummary.of(np.array([-0.5, 3.0]))
    assert clipped.histogram[0] == 1 and clipped.histogram[-1] == 1 and len(clipped.histogram) == 15


def test_decay_is_evaluated_at_the_now_passed_in(stores, make_item, now):
    episodic, semantic = stores
    semantic.upsert([make_item("s", importance=1, tier="semantic")])  # 0.2 · 0.9^d < 0.1 after 6.58 days
    assert consolidate(episodic, semantic, now=now + timedelta(days=6)).pruned["semantic"] == ()
    assert consolidate(episodic, semantic, now=now + timedelta(days=7)).pruned["semantic"] == ("s",)


def test_no_decay_never_prunes_and_a_job_runs_on_now(stores, make_item, now):
    episodic, semantic = stores
    semantic.upsert([make_item("s", importance=1, age_days=10_000, tier="semantic")])
    job = consolidation_job(episodic, semantic, prune=PrunePolicy(NoDecay()))
    report = job(now)
    assert report.at == now and report.pruned["semantic"] == () and ids(semantic) == ["s"]
    assert consolidate(episodic, semantic, now=datetime(2023, 5, 8)).at.tzinfo is not None  # naive → UTC
