"""OpenAICompatAgent against a real HTTP server on 127.0.0.1 (tests/agent/conftest.py), no monkeypatching."""

import pytest

from openclaw_lab.agent.openai_compat import DEFAULT_SYSTEM_PROMPT, OpenAICompatAgent
from openclaw_lab.agent.protocol import AgentError

CONTEXT = "## Relevant memories\n[2023-05-08 13:56] My sister Ana lives in Porto"


def test_reply_comes_from_the_server_and_carries_the_context(chat_server):
    agent = OpenAICompatAgent(chat_server.url(), "llama3.2", timeout=5)
    reply = agent.respond("Where does Ana live?", CONTEXT)
    assert reply == "You asked: Where does Ana live?. I recall: [2023-05-08 13:56] My sister Ana lives in Porto"
    request = chat_server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "llama3.2" and request["body"]["temperature"] == 0.0
    assert request["body"]["messages"] == [
        {"role": "system", "content": f"{DEFAULT_SYSTEM_PROMPT}\n\n{CONTEXT}"},
        {"role": "user", "content": "Where does Ana live?"},
    ]
    assert request["headers"]["authorization"] == "Bearer not-needed"  # a local server needs no key


def test_an_api_key_is_sent_as_a_bearer_token_and_never_shown(chat_server):
    agent = OpenAICompatAgent(chat_server.url() + "/", "m", api_key="sk-secret", timeout=5, max_tokens=64)
    agent.respond("hi", "")
    request = chat_server.requests[0]
    assert request["headers"]["authorization"] == "Bearer sk-secret"
    assert request["body"]["max_tokens"] == 64
    assert request["body"]["messages"][0]["content"] == DEFAULT_SYSTEM_PROMPT  # no empty context appended
    assert "sk-secret" not in repr(agent)


def test_an_http_error_names_the_status_and_quotes_the_body(chat_server):
    agent = OpenAICompatAgent(chat_server.url("/fail"), "m", timeout=5, max_retries=0)
    with pytest.raises(AgentError, match=r"returned HTTP 500: .*model exploded"):
        agent.respond("hi", CONTEXT)


def test_a_server_slower_than_the_timeout_is_an_agent_error(chat_server):
    agent = OpenAICompatAgent(chat_server.url("/slow"), "m", timeout=0.3, max_retries=0)
    url = r"http://127\.0\.0\.1:\d+/slow/v1/chat/completions"
    with pytest.raises(AgentError, match=rf"no reply from {url} within 0\.3 s"):
        agent.respond("hi", CONTEXT)


@pytest.mark.parametrize(
    ("prefix", "message"),
    [("/garbage", r"did not return JSON: '<html>not json</html>'"), ("/empty", r"no choices\[0\]\.message\.content")],
)
def test_malformed_replies_are_agent_errors(chat_server, prefix, message):
    with pytest.raises(AgentError, match=message):
        OpenAICompatAgent(chat_server.url(prefix), "m", timeout=5).respond("hi", "")


def test_a_closed_port_is_an_agent_error(chat_server):
    host, port = chat_server.server_address[:2]
    chat_server.shutdown()
    chat_server.server_close()  # nothing listens on the port any more
    with pytest.raises(AgentError, match="cannot reach"):
        OpenAICompatAgent(f"http://{host}:{port}/v1", "m", timeout=5).respond("hi", "")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, "base_url"),
        ({"base_url": "ftp://127.0.0.1/v1"}, "base_url"),
        ({"model": ""}, "model"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_settings_are_refused(kwargs, field):
    settings = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=f"^{field}: "):
        OpenAICompatAgent(**settings)
