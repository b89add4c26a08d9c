"""One consolidation run: promote episodic items to semantic memory, merge near-duplicates, prune.

A run is idempotent: an episodic item that already has a semantic home is never promoted again.
Its home is found, in this order, from the semantic items' provenance (``source_access_counts``,
else ``consolidated_from``), from the mark ``consolidated_into`` written on the episodic item at
promotion, or from the id ``sem_<id>``. Instead of a second copy, accesses made to the episodic item
since the last run are propagated to its home (``refreshed``): access count += the new accesses,
last access and importance = the later/higher. When the home has been pruned, the episodic item is
promoted again only if it was accessed after its last promotion (a new signal), so a pruned item
does not come back on every run.

Semantic metadata (values must be scalars): ``consolidated_from`` the source episodic ids joined by
commas (a single id for an unmerged item, as in the seed), ``original_type`` the source tier,
``access_count`` the sources' summed access counts when promoted/merged, ``consolidated_at`` the ISO
time of the first promotion, and ``source_access_counts`` a JSON object {episodic id: access count
last copied}, the exact provenance that idempotence and access propagation read.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> from openclaw_lab.stores.exact import ExactStore
>>> now = datetime(2023, 5, 8)
>>> episodic, semantic = ExactStore(), ExactStore()
>>> episodic.upsert([MemoryItem.new("I am allergic to nuts", now=now, id="e1", importance=5, embedding=[1.0, 0])])
>>> consolidate(episodic, semantic, now=now).promoted
('e1',)
>>> consolidate(episodic, semantic, now=now).promoted
()
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np

from openclaw_lab.consolidation.policies import ConsolidationPolicy, PrunePolicy
from openclaw_lab.consolidation.report import ConsolidationLog, ConsolidationReport, ScoreSummary
from openclaw_lab.model import MemoryItem, MemoryTier, as_utc
from openclaw_lab.stores.protocol import VectorStore

__all__ = ["consolidate", "consolidation_job", "promote", "semantic_id", "provenance", "SEMANTIC_PREFIX", "CONSOLIDATED_TAG"]

SEMANTIC_PREFIX = "sem_"
CONSOLIDATED_TAG = "consolidated"
FROM, ORIGINAL_TYPE, ACCESS_COUNT, AT = "consolidated_from", "original_type", "access_count", "consolidated_at"
SOURCE_COUNTS, INTO = "source_access_counts", "consolidated_into"

Embed = Callable[[Sequence[str]], np.ndarray]


def semantic_id(episodic_id: str) -> str:
    """The id of an episodic item's own semantic copy: ``sem_<id>``."""
    return SEMANTIC_PREFIX + episodic_id


def provenance(item: MemoryItem) -> dict[str, int | None]:
    """Episodic id -> access count last copied into ``item`` (None when only ``consolidated_from`` says so)."""
    if SOURCE_COUNTS in item.metadata:
        return dict(_source_counts(str(item.metadata[SOURCE_COUNTS])))
    joined = str(item.metadata.get(FROM, ""))
    return {source: None for source in joined.split(",") if source}


@lru_cache(maxsize=1 << 16)
def _source_counts(text: str) -> tuple[tuple[str, int], ...]:
    """``source_access_counts`` parsed (each run reads every semantic item's; most are unchanged since the last)."""
    return tuple((key, int(value)) for key, value in json.loads(text).items())


def _with_provenance(item: MemoryItem, counts: dict[str, int | None], summed_access: int) -> dict[str, Any]:
    known = {key: value for key, value in counts.items() if value is not None}
    return {
        **item.metadata, FROM: ",".join(counts), ACCESS_COUNT: summed_access,
        SOURCE_COUNTS: json.dumps(known, sort_keys=True),
    }


def promote(item: MemoryItem, now: datetime) -> MemoryItem:
    """A semantic copy of ``item``; it keeps the item's times (a copy is not an access)."""
    metadata = {key: value for key, value in item.metadata.items() if key not in (INTO, AT)}
    copy = item.replace(
        id=semantic_id(item.id), tier=MemoryTier.SEMANTIC, tags=_union(item.tags, (CONSOLIDATED_TAG,)),
        metadata={**metadata, ORIGINAL_TYPE: item.tier.value, AT: now.isoformat()},
    )
    return copy.replace(metadata=_with_provenance(copy, {item.id: item.access_count}, item.access_count))


def _merge(target: MemoryItem, item: MemoryItem) -> MemoryItem:
    """``target`` absorbing the near-duplicate ``item``: provenances united, access counts summed."""
    counts = {**provenance(target), item.id: item.access_count}
    merged = target.replace(
        importance=max(target.importance, item.importance),
        access_count=target.access_count + item.access_count,
        created_at=min(target.created_at, item.created_at),
        last_accessed=max(target.last_accessed, item.last_accessed),
        tags=_union(target.tags, item.tags, (CONSOLIDATED_TAG,)),
        source_ids=_union(target.source_ids, item.source_ids),
    )
    summed = int(target.metadata.get(ACCESS_COUNT, target.access_count)) + item.access_count
    return merged.replace(metadata=_with_provenance(merged, counts, summed))


def _refresh(home: MemoryItem, item: MemoryItem) -> MemoryItem | None:
    """``home`` with the accesses ``item`` received since they were last copied, or None if none."""
    counts = provenance(home)
    copied = counts.get(item.id)
    new_accesses = 0 if copied is None else max(item.access_count - copied, 0)
    newer = item.last_accessed > home.last_accessed or item.importance > home.importance
    if copied is not None and new_accesses == 0 and not newer:
        return None
    counts[item.id] = item.access_count if copied is None else max(copied, item.access_count)
    updated = home.replace(
        access_count=home.access_count + new_accesses,
        last_accessed=max(home.last_accessed, item.last_accessed),
        importance=max(home.importance, item.importance),
    )
    return updated.replace(metadata=_with_provenance(updated, counts, int(home.metadata.get(ACCESS_COUNT, 0))))


def _union(*groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value for group in groups for value in group))


def _home_of(item: MemoryItem, semantic_items: dict[str, MemoryItem], index: dict[str, str]) -> str | None:
    for candidate in (index.get(item.id), item.metadata.get(INTO), semantic_id(item.id)):
        if isinstance(candidate, str) and candidate in semantic_items:
            return candidate
    return None


def _settled(item: MemoryItem) -> bool:
    """Promoted before, home since pruned, and not accessed after that promotion."""
    if INTO not in item.metadata:
        return False
    try:
        promoted_at = as_utc(datetime.fromisoformat(str(item.metadata.get(AT))), AT)
    except ValueError as error:
        raise ValueError(f"{AT}: item {item.id!r} has {item.metadata.get(AT)!r}, not an ISO time") from error
    return item.last_accessed <= promoted_at


def _embedded(items: list[MemoryItem], embed: Embed | None) -> list[MemoryItem]:
    missing = [item for item in items if item.embedding is None]
    if not missing:
        return items
    if embed is None:
        raise ValueError(f"embed: {len(missing)} candidates have no embedding (first {missing[0].id!r}); "
                         "pass embed=embedder.encode")
    vectors = dict(zip((item.id for item in missing), np.asarray(embed([item.content for item in missing]))))
    return [item if item.embedding is not None else item.replace(embedding=vectors[item.id]) for item in items]


def _near_duplicate(semantic: VectorStore, item: MemoryItem, threshold: float | None) -> str | None:
    if threshold is None:
        return None
    hits = semantic.search(item.embedding, k=1)
    return hits[0].item.id if hits and hits[0].score > threshold else None


def _check_merge_threshold(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > 1:
        raise ValueError(f"merge_threshold: {value!r} must be a cosine similarity in [-1, 1], or None to never merge")


def consolidate(
    episodic: VectorStore,
    semantic: VectorStore,
    *,
    now: datetime,
    policy: ConsolidationPolicy | None = None,
    prune: PrunePolicy | None = None,
    prune_episodic: PrunePolicy | None = None,
    embed: Embed | None = None,
    merge_threshold: float | None = 0.95,
    log: ConsolidationLog | None = None,
) -> ConsolidationReport:
    """Promote, merge near-duplicates (cosine > ``merge_threshold``), then prune; decay evaluated at ``now``.

    Semantic items scoring below ``prune.threshold`` are deleted; episodic items only when
    ``prune_episodic`` is given. The report is appended to ``log`` when given. See the module doc.

    >>> from openclaw_lab.stores.exact import ExactStore
    >>> consolidate(ExactStore(), ExactStore(), now=datetime(2023, 5, 8)).counts["promoted"]
    0
    """
    now = as_utc(now, "now")
    policy = policy if policy is not None else ConsolidationPolicy()
    prune = prune if prune is not None else PrunePolicy()
    _check_merge_threshold(merge_threshold)
    episodes = list(episodic.items())
    semantic_items = {item.id: item for item in semantic.items()}
    counts_before = {"episodic_before": len(episodes), "semantic_before": len(semantic_items)}
    index = {source: home.id for home in semantic_items.values() for source in provenance(home)}

    candidates, refreshed = [], {}
    for item in episodes:
        home = _home_of(item, semantic_items, index)
        if home is not None:
            updated = _refresh(semantic_items[home], item)
            if updated is not None:
                semantic_items[home] = refreshed[home] = updated
        elif not _settled(item) and policy.should_consolidate(item, now):
            candidates.append(item)
    if refreshed:
        semantic.upsert(list(refreshed.values()))

    # Oldest first, one at a time, so that duplicates within one run merge into the oldest copy.
    candidates = _embedded(sorted(candidates, key=lambda item: (item.created_at, item.id)), embed)
    promoted, merged = [], {}
    for item in candidates:
        target = _near_duplicate(semantic, item, merge_threshold)
        if target is None:
            written = promote(item, now)
            promoted.append(item.id)
        else:
            written = _merge(semantic_items[target], item)
            merged[item.id] = target
        semantic.upsert([written])
        semantic_items[written.id] = written

    removed = [item.id for item in candidates] if policy.remove_after_promotion else []
    if removed:
        episodic.delete(removed)
    elif candidates:
        homes = {**{i: semantic_id(i) for i in promoted}, **merged}
        episodic.upsert([
            item.replace(metadata={**item.metadata, INTO: homes[item.id], AT: now.isoformat()})
            for item in candidates
        ])

    semantic_scores, semantic_pruned = prune.evaluate(semantic_items.values(), now)
    if semantic_pruned:
        semantic.delete(semantic_pruned)
    gone = set(removed)
    kept_episodes = [item for item in episodes if item.id not in gone]
    # Episodic scores are always reported; episodic items are deleted only under their own policy.
    episodic_scores, episodic_pruned = (prune_episodic or prune).evaluate(kept_episodes, now)
    if prune_episodic is None:
        episodic_pruned = []
    if episodic_pruned:
        episodic.delete(episodic_pruned)

    report = ConsolidationReport(
        at=now,
        promoted=tuple(promoted),
        merged=merged,
        refreshed=tuple(refreshed),
        removed=tuple(removed),
        pruned={MemoryTier.SEMANTIC.value: tuple(semantic_pruned), MemoryTier.EPISODIC.value: tuple(episodic_pruned)},
        counts={
            **counts_before, "candidates": len(candidates), "promoted": len(promoted), "merged": len(merged),
            "refreshed": len(refreshed), "removed": len(removed), "pruned_semantic": len(semantic_pruned),
            "pruned_episodic": len(episodic_pruned), "episodic_after": episodic.count(),
            "semantic_after": semantic.count(),
        },
        scores={MemoryTier.SEMANTIC.value: ScoreSummary.of(semantic_scores),
                MemoryTier.EPISODIC.value: ScoreSummary.of(episodic_scores)},
        config={"policy": repr(policy), "prune": repr(prune),
                "prune_episodic": repr(prune_episodic) if prune_episodic is not None else None,
                "merge_threshold": merge_threshold},
    )
    if log is not None:
        log.append_consolidation(now, report.to_dict())
    return report


def consolidation_job(
    episodic: VectorStore, semantic: VectorStore, **options: Any
) -> Callable[[datetime], ConsolidationReport]:
    """A ``run(now)`` for ``ConsolidationScheduler``: ``consolidate(episodic, semantic, now=now, **options)``.

    >>> from openclaw_lab.stores.exact import ExactStore
    >>> job = consolidation_job(ExactStore(), ExactStore(), merge_threshold=0.9)
    >>> job(datetime(2023, 5, 8)).counts["semantic_after"]
    0
    """
    return lambda now: consolidate(episodic, semantic, now=now, **options)
