"""Consolidation and decay: promote episodic items to semantic memory, merge, prune, on a clock.

>>> from datetime import datetime
>>> from openclaw_lab.stores.exact import ExactStore
>>> report = consolidate(ExactStore(), ExactStore(), now=datetime(2023, 5, 8), prune=PrunePolicy(SeedDecay()))
>>> report.counts["promoted"], report.scores["semantic"].count
(0, 0)
"""

from openclaw_lab.consolidation.consolidate import (
    CONSOLIDATED_TAG,
    SEMANTIC_PREFIX,
    consolidate,
    consolidation_job,
    promote,
    provenance,
    semantic_id,
)
from openclaw_lab.consolidation.decay import (
    DecayLaw,
    EbbinghausDecay,
    ExponentialDecay,
    NoDecay,
    PowerLawDecay,
    SeedDecay,
    days_since_access,
    decay_inputs,
    decay_scores,
)
from openclaw_lab.consolidation.policies import ConsolidationPolicy, PrunePolicy
from openclaw_lab.consolidation.report import (
    DEFAULT_EDGES,
    ConsolidationLog,
    ConsolidationReport,
    MemoryLog,
    ScoreSummary,
)
from openclaw_lab.consolidation.scheduler import ConsolidationScheduler
from openclaw_lab.consolidation.expiry import Expiry
from openclaw_lab.consolidation.summaries import SUMMARY_OF, SessionSummaries
from openclaw_lab.consolidation.supersession import SUPERSEDED_BY, VALID_UNTIL, Supersession, SupersessionRule

__all__ = [
    "DecayLaw",
    "SeedDecay",
    "ExponentialDecay",
    "EbbinghausDecay",
    "PowerLawDecay",
    "NoDecay",
    "decay_scores",
    "decay_inputs",
    "days_since_access",
    "ConsolidationPolicy",
    "PrunePolicy",
    "consolidate",
    "consolidation_job",
    "promote",
    "semantic_id",
    "provenance",
    "SEMANTIC_PREFIX",
    "CONSOLIDATED_TAG",
    "ConsolidationReport",
    "ScoreSummary",
    "ConsolidationLog",
    "MemoryLog",
    "DEFAULT_EDGES",
    "ConsolidationScheduler",
    "Supersession",
    "SupersessionRule",
    "Expiry",
    "SessionSummaries",
    "SUMMARY_OF",
    "SUPERSEDED_BY",
    "VALID_UNTIL",
]
