"""ChatClient's pace against a stub of /v1/chat/completions on 127.0.0.1 (real HTTP, the real openai client).

A stub, because the failures and server shapes here cannot be provoked at will from a real model: a server
with one slot or several, one that reports its slots (llama.cpp's /props) and one that does not, a request
that outlives its timeout, a reply cut at max_tokens. The real server is tested in
tests/harness/test_qa_real_server.py. No test asserts a duration.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from openclaw_lab.llm import MIN_TIMEOUT, CallCache, ChatClient, Endpoint, LLMError, Pace


class Stub(BaseHTTPRequestHandler):
    """Paths: ``/one-slot`` serves one request at a time; ``/hang-first`` holds a prompt's first request
    ``server.hang`` s; ``/hang`` holds every request; ``/length`` answers with finish_reason length. Every
    request takes ``server.work`` s."""

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/props" and self.server.slots:
            return self._send(200, {"total_slots": self.server.slots})
        self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        server = self.server
        with server.lock:
            server.bodies.append(body)
            retry = prompt in server.seen
            server.seen.add(prompt)
            server.active += 1
            server.most = max(server.most, server.active)
            server.retries_active += retry
            server.most_retries = max(server.most_retries, server.retries_active)
        try:
            if self.path.startswith("/hang") and (not retry or not self.path.startswith("/hang-first")):
                time.sleep(server.hang)
            with server.slot if self.path.startswith("/one-slot") else _nothing():
                time.sleep(server.work)
            finish = "length" if self.path.startswith("/length") else "stop"
            self._send(200, {"id": "x", "object": "chat.completion", "model": body["model"], "created": 0,
                             "choices": [{"index": 0, "finish_reason": finish,
                                          "message": {"role": "assistant", "content": f"re: {prompt}"}}],
                             "usage": {"prompt_tokens": 40 + len(prompt), "completion_tokens": 5,
                                       "total_tokens": 45 + len(prompt)}})  # fmt: skip
        except (BrokenPipeError, ConnectionResetError):  # the client gave up on it (a timeout)
            pass
        finally:
            with server.lock:
                server.active -= 1
                server.retries_active -= retry

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _nothing:  # noqa: N801 - a no-op context manager
    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    server.daemon_threads = True
    server.lock, server.slot = threading.Lock(), threading.Lock()
    server.bodies, server.seen = [], set()
    server.active = server.most = server.retries_active = server.most_retries = 0
    server.slots, server.work, server.hang = None, 0.2, 1.5
    host, port = server.server_address[:2]
    server.url = lambda prefix="": f"http://{host}:{port}{prefix}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def prompts(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"question {i} " + "word " * (i % 5)}] for i in range(n)]


def test_max_tokens_is_always_sent_and_the_defaults_run_on_a_one_slot_server(stub):
    stub.work = 0.5  # long beside a loaded machine's overheads, so that two at once read as twice the latency
    client = ChatClient(Endpoint(stub.url("/one-slot"), "m"))
    replies = client.replies(prompts(20))
    assert [r.text for r in replies] == [f"re: {p[0]['content']}" for p in prompts(20)]  # in order
    assert {body["max_tokens"] for body in stub.bodies} == {256}
    # The probe tried two at once, saw the latency double and went back to one.
    assert stub.most == 2 and client.stats.in_flight == 1 and client.stats.in_flight_from == "probe"
    assert client.stats.timeouts == 0 and client.stats.calls == 20


def test_a_server_with_several_slots_is_probed_upwards(stub):
    stub.work = 0.5  # long beside a loaded machine's overheads, so that two at once read as the same latency
    client = ChatClient(Endpoint(stub.url(), "m"))
    client.replies(prompts(40))
    # Two in flight cost no latency here, so two are kept (how far past two depends on the machine's load).
    assert client.stats.in_flight >= 2 and stub.most >= 3 and client.stats.in_flight_from == "probe"


def test_the_slots_a_server_reports_are_used_at_once(stub):
    stub.slots = 3
    client = ChatClient(Endpoint(stub.url(), "m"))
    client.replies(prompts(9))
    assert client.stats.in_flight_from == "the server's slots" and client.stats.in_flight == 3 and stub.most == 3


def test_max_in_flight_fixes_the_number(stub):
    stub.slots = 3
    client = ChatClient(Endpoint(stub.url(), "m", max_in_flight=2))
    client.replies(prompts(6))
    assert client.stats.in_flight_from == "max_in_flight" and stub.most == 2


def test_a_timed_out_request_is_retried_alone_with_a_longer_timeout(stub):
    stub.slots = 4  # four go at once; each first request outlives the 0.5 s timeout
    client = ChatClient(Endpoint(stub.url("/hang-first"), "m", timeout=0.5))
    replies = client.replies(prompts(4))
    assert [r.text for r in replies] == [f"re: {p[0]['content']}" for p in prompts(4)]
    assert client.stats.timeouts == 4 and client.stats.retries == 4
    assert stub.most_retries == 1 and client.stats.in_flight == 1  # never two retries in the queue at once


def test_a_request_that_never_answers_names_the_url_and_the_seconds(stub):
    stub.hang = 1.0
    client = ChatClient(Endpoint(stub.url("/hang"), "m", timeout=0.2, max_retries=1))
    with pytest.raises(LLMError, match=r"no reply from http://127\.0\.0\.1:\d+/hang/v1/chat/completions within "
                                       r"0\.4 s \(2 attempt\(s\), the last one alone\)"):  # fmt: skip
        client.complete(prompts(1)[0])


def test_a_reply_cut_at_max_tokens_is_marked_and_cached_as_such(stub, tmp_path):
    client = ChatClient(Endpoint(stub.url("/length"), "m", max_tokens=8), CallCache(tmp_path / "calls.sqlite"))
    first = client.reply(prompts(1)[0])
    assert first.truncated and not first.cached and client.stats.truncated == 1
    assert stub.bodies[0]["max_tokens"] == 8
    again = client.reply(prompts(1)[0])
    assert again.cached and again.truncated and again.text == first.text and len(stub.bodies) == 1
    assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)


def test_the_derived_timeout_grows_with_the_prompt_and_starts_generous(stub):
    client = ChatClient(Endpoint(stub.url(), "m", max_in_flight=1))
    assert client._timeout(client._predicted(1000, 256)) == 600.0  # nothing measured yet
    client.pace = Pace()
    for tokens, completion in [(1000, 10), (300, 80), (600, 40)]:  # 2 ms a prompt token, 50 ms a written one
        client.pace.observe(4 * tokens, tokens, completion, 0.002 * tokens + 0.05 * completion)
    short, long = client._timeout(client._predicted(400, 256)), client._timeout(client._predicted(40_000, 256))
    assert short == pytest.approx(3 * (0.002 * 100 + 0.05 * 256))  # 400 characters: 100 tokens
    assert long == pytest.approx(3 * (0.002 * 10_000 + 0.05 * 256)) and long > short >= MIN_TIMEOUT


@pytest.mark.parametrize(("field", "value"), [("max_tokens", 0), ("max_tokens", 2.5), ("timeout", 0),
                                              ("max_in_flight", 0), ("max_retries", -1)])  # fmt: skip
def test_bad_endpoint_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"^{field}: {value!r} must be"):
        Endpoint("http://127.0.0.1:8080/v1", "m", **{field: value})
