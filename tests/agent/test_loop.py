import json
import subprocess
import sys

import pytest

from openclaw_lab.agent.context import ContextAssembler
from openclaw_lab.agent.loop import MemoryAwareAgent
from openclaw_lab.agent.openai_compat import OpenAICompatAgent
from openclaw_lab.agent.protocol import AgentError, ScriptedAgent
from openclaw_lab.agent.remember import RuleBasedScorer, ScorerPolicy
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import Importance, MemoryQuery, MemoryTier
from openclaw_lab.stores.exact import ExactStore
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

PUPPY = "We adopted a puppy named Rex"


@pytest.fixture
def memory(tmp_path, embedder, clock):
    return MemoryManager.open(tmp_path / "memory", store=ExactStore(), embedder=embedder, clock=clock, user_id="ana")


def stored(memory):
    return memory.footprint(), [i.id for i in memory.episodic.items()], [i.id for i in memory.semantic.items()]


def test_each_turn_goes_to_working_memory_and_the_session_store(memory, clock):
    agent = ScriptedAgent(["Nice!", "It is Rex."])
    loop = MemoryAwareAgent(memory, agent)
    loop.start_session("s1")
    first = loop.process(PUPPY, source_ids=["D1:3"])
    assert first.item.content == f"User: {PUPPY} | Assistant: Nice!" and first.item.source_ids == ("D1:3",)
    assert first.item.embedding.shape == (384,) and first.item.metadata == {"user_id": "ana"}
    assert [i.id for i in memory.episodic.list_memories("s1")] == [first.item.id]
    assert [i.id for i in memory.working("s1").items()] == [first.item.id]
    clock.advance(60)
    second = loop.process("What is my puppy called?")
    assert agent.calls[1] == ("What is my puppy called?", second.context.text)
    assert f"[2023-05-08 13:56] User: {PUPPY} | Assistant: Nice!" in second.context.text
    assert second.context.text.count(PUPPY) == 1  # found in long-term search, the session and working memory
    assert first.item.id in second.context.item_ids
    assert [i.id for i in memory.working("s1").items()] == [first.item.id, second.item.id]


def test_the_remember_policy_decides_the_long_term_copy_and_its_importance(memory):
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Noted.", "Sure."]), remember_policy=ScorerPolicy(RuleBasedScorer()))
    loop.start_session("s1")
    kept = loop.process("Remember this: my locker code is 4411")
    assert kept.promoted.id == f"sem_{kept.item.id}" and kept.promoted.tier is MemoryTier.SEMANTIC
    assert kept.importance == kept.item.importance == kept.promoted.importance == Importance.CRITICAL
    assert memory.semantic.get([kept.promoted.id])[0].metadata["consolidated_from"] == kept.item.id
    dropped = loop.process("ok cool")
    assert dropped.promoted is None and dropped.importance == Importance.MINIMAL
    assert memory.footprint() == {"working": 2, "episodic": 2, "semantic": 1}


def test_only_the_long_term_hits_the_context_used_count_as_accessed(memory):
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Nice!", "Rex."]))
    loop.start_session("s1")
    first = loop.process(PUPPY)
    assert memory.episodic.get([first.item.id])[0].access_count == 0
    second = loop.process("What is my puppy called?")
    assert first.item.id in second.context.used_item_ids["long_term"]
    assert memory.episodic.get([first.item.id])[0].access_count == 1


def test_bad_turns_leave_the_stores_untouched(memory, chat_server):
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Nice!"]))
    loop.start_session("s1")
    first = loop.process(PUPPY)
    before = stored(memory)
    with pytest.raises(ValueError, match=r"^message: '  ' is empty"):
        loop.process("  ")
    for agent, error in [
        (ScriptedAgent(lambda message, context: 1 / 0), r"failed with ZeroDivisionError: division by zero"),
        (ScriptedAgent([""]), r"returned an empty reply ''; nothing was stored"),
        (OpenAICompatAgent(chat_server.url("/slow"), "m", timeout=0.3), r"no reply from .*/slow/v1/chat/completions within [0-9.]+ s"),
        (OpenAICompatAgent(chat_server.url("/fail"), "m", timeout=5), r"HTTP 500"),
    ]:
        loop.agent = agent
        with pytest.raises(AgentError, match=error):
            loop.process("What is my puppy called?")
    loop.agent = ScriptedAgent(["never asked"])
    with pytest.raises(ValueError, match="^source_ids: expected a list of strings"):
        loop.process("hello", source_ids="D1:3")
    with pytest.raises(ValueError, match=r"^metadata\['mood'\]: \['happy'\] is not a str"):
        loop.process("hello", metadata={"mood": ["happy"]})
    assert loop.agent.calls == []
    assert stored(memory) == before
    assert memory.episodic.get([first.item.id])[0].access_count == 0  # the failed turns' searches left no trace


def test_a_turn_larger_than_working_memory_is_refused_before_anything_is_stored(tmp_path, embedder, clock):
    memory = MemoryManager.open(tmp_path / "m", store=ExactStore(), embedder=embedder, clock=clock, working_max_tokens=30)
    agent = ScriptedAgent(["word " * 40])
    loop = MemoryAwareAgent(memory, agent, ContextAssembler(embedder.count_tokens, 100))
    loop.start_session("s1")
    with pytest.raises(ValueError, match=r"^message: the turn has 40 tokens, more than .* whole budget of 30"):
        loop.process("word " * 40)
    assert agent.calls == []  # refused before the agent was asked
    with pytest.raises(ValueError, match=r"^reply: the turn has \d+ tokens"):
        loop.process("hello")
    assert memory.footprint() == {"working": 0, "episodic": 0, "semantic": 0}


class BrokenStore(ExactStore):
    def upsert(self, items):
        raise OSError("disk full")


def test_a_failed_long_term_write_undoes_the_session_write(tmp_path, embedder, clock):
    episodic = EpisodicMemory(tmp_path / "e.sqlite")
    memory = MemoryManager(embedder=embedder, episodic=episodic, semantic=SemanticMemory(BrokenStore()), clock=clock)
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Noted."]), remember_policy=ScorerPolicy(RuleBasedScorer()))
    loop.start_session("s1")
    with pytest.raises(OSError, match="disk full"):
        loop.process("Remember this: my locker code is 4411")
    assert memory.footprint() == {"working": 0, "episodic": 0, "semantic": 0}


def test_a_session_must_be_open_and_belong_to_the_user(memory):
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Nice!"]))
    with pytest.raises(RuntimeError, match="^session_id: no session is open"):
        loop.process("hello")
    loop.start_session("s1")
    loop.process(PUPPY)
    ben = MemoryAwareAgent(memory, ScriptedAgent(), user_id="ben")
    with pytest.raises(ValueError, match="^session_id: 's1' belongs to user 'ana', not 'ben'"):
        ben.start_session("s1")
    ben.start_session("b1")
    assert ben.process("What is my puppy called?").context.item_ids == ()  # Ana's memories stay hers
    assert ben.previous_sessions() == []


def test_any_retriever_search_can_serve_long_term_memory(memory):
    calls = []

    def search(query, k, scope):  # a stand-in for any Retriever's bound search
        calls.append((query, k, scope))
        return memory.search(MemoryQuery(query, filter=scope, limit=k), record_access=False)

    loop = MemoryAwareAgent(memory, ScriptedAgent(["Hi.", "Hi again."]), long_term_k=3, long_term_search=search)
    loop.start_session("s1")
    loop.process("hello there")
    second = loop.process("hello again")
    first_id = second.context.used_item_ids["long_term"][0]
    assert memory.episodic.get([first_id])[0].access_count == 0  # access records are the search's business
    (query, k, scope), _ = calls
    assert (query, k, scope.session_ids) == ("hello there", 3, ("s1",))
    assert scope.tiers == {MemoryTier.EPISODIC, MemoryTier.SEMANTIC}


CHILD = """
import json, sys
from datetime import datetime
from openclaw_lab.agent import MemoryAwareAgent, ScriptedAgent
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.embedding import Embedder, EmbeddingCache
from openclaw_lab.manager import MemoryManager
path, cache, now = sys.argv[1:]
clock = SimulatedClock(datetime.fromisoformat(now))
embedder = Embedder(cache=EmbeddingCache(cache))
memory = MemoryManager.open(path, embedder=embedder, clock=clock, user_id="ana")
loop = MemoryAwareAgent(memory, ScriptedAgent())
loop.start_session("s2")
turn = loop.process("What is my puppy called?")
print(json.dumps({"previous": [s.id for s in loop.previous_sessions()], "reply": turn.reply,
                  "used": turn.context.used_item_ids}))
"""


def test_a_new_process_for_the_same_user_sees_the_earlier_session(tmp_path, embedder, clock):
    path = tmp_path / "memory"
    memory = MemoryManager.open(path, embedder=embedder, clock=clock, user_id="ana")
    loop = MemoryAwareAgent(memory, ScriptedAgent(["Noted."]), remember_policy=ScorerPolicy(RuleBasedScorer(), 0.1))
    loop.start_session("s1")
    first = loop.process(PUPPY)
    assert first.promoted is not None  # a long-term copy in chroma as well as the session's SQLite row
    loop.end_session()
    memory.close()
    clock.advance(86400)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), embedder.cache.path, clock.now().isoformat()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["previous"] == ["s1"]
    assert seen["reply"] == f"[2023-05-08 13:56] User: {PUPPY} | Assistant: Noted."
    assert seen["used"]["long_term"][0] in (first.item.id, first.promoted.id)
    assert len(seen["used"]["long_term"]) == 1  # the episode and its semantic copy count once
