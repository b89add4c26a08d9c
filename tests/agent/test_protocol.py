import pytest

from openclaw_lab.harness import registry
from openclaw_lab.agent.openai_compat import OpenAICompatAgent
from openclaw_lab.agent.protocol import NO_ANSWER, Agent, AgentError, ScriptedAgent, most_relevant_line

CONTEXT = """## Relevant memories
[2023-05-08 13:56] My sister Ana lives in Porto
[2023-05-09 10:00] We adopted a puppy named Max
## Recent turns
[2023-05-10 09:00] I had pasta for lunch"""


def test_scripted_replies_come_in_order_then_run_out():
    agent = ScriptedAgent(["first", "second"])
    assert [agent.respond("a", ""), agent.respond("b", "ctx")] == ["first", "second"]
    assert agent.calls == [("a", ""), ("b", "ctx")]
    with pytest.raises(AgentError, match="no reply left; it had 2"):
        agent.respond("c", "")


def test_echo_returns_the_most_relevant_context_line():
    agent = ScriptedAgent()
    assert agent.respond("What is the puppy called?", CONTEXT) == "[2023-05-09 10:00] We adopted a puppy named Max"
    assert agent.respond("Where does Ana live?", CONTEXT) == "[2023-05-08 13:56] My sister Ana lives in Porto"
    assert agent.respond("Any news about the weather?", CONTEXT) == NO_ANSWER


def test_echo_ignores_headers_and_stopwords():
    assert most_relevant_line("recent memories", CONTEXT) is None  # only header lines share these words
    assert most_relevant_line("what is it", "it is what it is") is None


def test_a_function_gets_message_and_context():
    agent = ScriptedAgent(lambda message, context: f"{message.upper()} ({len(context.splitlines())} lines)")
    assert agent.respond("hi", CONTEXT) == "HI (5 lines)"


def test_bad_scripts_are_refused():
    with pytest.raises(ValueError, match="^replies: .*string 'hello'"):
        ScriptedAgent("hello")
    with pytest.raises(ValueError, match="^replies: 3 is not a string"):
        ScriptedAgent(["ok", 3])


def test_both_agents_satisfy_the_protocol_and_are_registered():
    assert isinstance(ScriptedAgent(), Agent)
    assert isinstance(OpenAICompatAgent("http://127.0.0.1:1/v1", "m"), Agent)
    assert isinstance(registry.agents.create("scripted", replies=["x"]), ScriptedAgent)
    assert registry.agents.get("openai") is OpenAICompatAgent
