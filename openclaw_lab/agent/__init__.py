"""The memory-aware agent: the agent protocol, context assembly, remember policies and the loop."""

from openclaw_lab.agent.context import (
    AssembledContext,
    ContextAssembler,
    answer_in_context,
    identity_keys,
    render_spelled_date,
)
from openclaw_lab.agent.loop import AgentTurn, MemoryAwareAgent, turn_text
from openclaw_lab.agent.openai_compat import OpenAICompatAgent
from openclaw_lab.agent.protocol import NO_ANSWER, Agent, AgentError, ScriptedAgent
from openclaw_lab.agent.remember import (
    ImportanceScorer,
    RememberDecision,
    RememberPolicy,
    RuleBasedScorer,
    ScorerPolicy,
    SeedRememberPolicy,
    importance_from_score,
    remember_metrics,
)
from openclaw_lab.agent.remember_learned import LearnedRememberPolicy

__all__ = [
    "Agent",
    "AgentError",
    "ScriptedAgent",
    "NO_ANSWER",
    "OpenAICompatAgent",
    "AssembledContext",
    "ContextAssembler",
    "identity_keys",
    "render_spelled_date",
    "answer_in_context",
    "RememberDecision",
    "ImportanceScorer",
    "RememberPolicy",
    "SeedRememberPolicy",
    "RuleBasedScorer",
    "ScorerPolicy",
    "LearnedRememberPolicy",
    "importance_from_score",
    "remember_metrics",
    "AgentTurn",
    "MemoryAwareAgent",
    "turn_text",
]
