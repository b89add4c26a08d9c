"""The three memory tiers: working (in process), episodic (SQLite), semantic (a vector store)."""

from openclaw_lab.tiers.episodic import EpisodicMemory, SessionInfo
from openclaw_lab.tiers.semantic import SemanticMemory
from openclaw_lab.tiers.working import WorkingMemory, estimate_tokens, render_line

__all__ = ["EpisodicMemory", "SessionInfo", "SemanticMemory", "WorkingMemory", "estimate_tokens", "render_line"]
