"""The playground's routes: `POST /_synthgpt/explain` (the answer is the real call's, byte for byte, and
nothing is used up), `GET /_synthgpt/rules`, `GET /_synthgpt/calls/{index}` (frames and timing), the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.journal import SQLiteJournal
from synthgpt.rules.loader import load_text
from synthgpt.testing import InProcessTransport2

RULES = """\
seed: 5
rules:
  - name: refund
    match: {last_user: {contains: refund}}
    output: {text: Refunds take 5 days.}
    times: 1
  - name: slow
    match: {last_user: {contains: slow}}
    output: {text: "One word at a time, please."}
    stream: {interval_ms: 2, jitter_ms: 3, chunk_chars: 6}
  - name: default
    match: always
    generate: {summary: {max_chars: 90}}
"""


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def client_for(mock: MockGPT) -> httpx2.Client:
    return httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")


@pytest.fixture
def mock() -> MockGPT:
    return load_text(RULES, "rules.yaml").mock()


@pytest.fixture
def client(mock: MockGPT) -> httpx2.Client:
    return client_for(mock)


def explain(client: httpx2.Client, request: Any, api: str = "chat", **extra: Any) -> dict[str, Any]:
    r = client.post("/_synthgpt/explain", json={"api": api, "request": request, **extra})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_the_trace_names_each_rules_first_failing_predicate_and_source(client: httpx2.Client) -> None:
    got = explain(client, chat("go slow"))
    assert got["rule"] == "slow" and got["seed"] == 5 and got["error"] is None
    assert got["trace"] == [
        {
            "rule": "refund",
            "source": "rules.yaml:3:5",
            "matched": False,
            "failed": "last_user(contains='refund')",
            "used_up": False,
            "error": None,
            "reason": "last_user(contains='refund') is false",
        },
        {"rule": "slow", "source": "rules.yaml:7:5", "matched": True, "captures": {}, "call_index": 0},
    ]
    assert got["request"]["summary"] == "request(api=chat, model='gpt-4o', last_user='go slow')"


@pytest.mark.parametrize(
    ("api", "path", "body"),
    [
        ("chat", "/v1/chat/completions", chat("tell me about tide pools")),
        ("chat", "/v1/chat/completions", chat("go slow", stream=True)),
        ("responses", "/v1/responses", {"model": "gpt-4o", "input": "go slow", "stream": True}),
        ("responses", "/v1/responses", {"model": "gpt-4o", "input": "hello"}),
        (
            "messages",
            "/v1/messages",
            {
                "model": "claude-x",
                "max_tokens": 50,
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            },
        ),
        ("embeddings", "/v1/embeddings", {"model": "e", "input": ["a", "b"], "dimensions": 3}),
    ],
)
@pytest.mark.parametrize("rules", ["file", "builtin"])
def test_the_answer_is_the_real_calls_bytes(rules: str, api: str, path: str, body: Any) -> None:
    client = client_for(load_text(RULES, "rules.yaml").mock() if rules == "file" else MockGPT(seed=3))
    if rules == "file" and api == "embeddings":  # the file's summary cannot answer: the route's 500
        got, real = explain(client, body, api), client.post(path, json=body)
        assert (got["answer"]["status"], got["answer"]["body"]) == (real.status_code, real.json())
        assert real.json()["error"]["code"] == "rule_error"
        return
    got = explain(client, body, api)
    real = client.post(path, json=body)
    assert got["answer"]["status"] == real.status_code == 200
    if body.get("stream"):
        assert got["answer"]["stream"] is True
        assert got["answer"]["sse"] == real.text
        frames = [f["data"] for f in got["answer"]["frames"]]
        assert [line[6:] for line in real.text.split("\n") if line.startswith("data: ")] == frames
    else:
        assert got["answer"]["body"] == real.json()


def test_explaining_uses_up_nothing_and_journals_nothing(client: httpx2.Client, mock: MockGPT) -> None:
    for _ in range(3):
        assert explain(client, chat("a refund"))["rule"] == "refund"
    assert mock.records == [] and mock.rules["refund"].call_count == 0
    assert (
        client.post("/v1/chat/completions", json=chat("a refund")).json()["choices"][0]["message"]["content"]
        == "Refunds take 5 days."
    )
    again = explain(client, chat("a refund"))
    assert again["rule"] == "default"
    assert again["trace"][0]["reason"] == "matched, but its `times` are used up"
    assert len(mock.records) == 1


def test_another_seed_is_an_engine_with_that_seed_and_the_servers_stays(client: httpx2.Client) -> None:
    body = chat("tell me about tide pools")
    other = explain(client, body, seed=77)
    assert other["seed"] == 77
    reseeded = load_text(RULES.replace("seed: 5", "seed: 77"), "rules.yaml").mock()
    assert other["answer"]["body"] == client_for(reseeded).post("/v1/chat/completions", json=body).json()
    assert other["answer"]["body"] != explain(client, body)["answer"]["body"]
    assert client.get("/_synthgpt/rules").json()["seed"] == 5


def test_a_responses_continuation_reads_the_store_and_explaining_adds_nothing(client: httpx2.Client) -> None:
    first = client.post("/v1/responses", json={"model": "gpt-4o", "input": "hello"}).json()
    follow = {"model": "gpt-4o", "input": "go slow", "previous_response_id": first["id"]}
    got = explain(client, follow, "responses")
    assert got["request"]["neutral"]["messages"][0] == {"role": "user", "content": "hello"}
    assert got["answer"]["body"] == client.post("/v1/responses", json=follow).json()
    shown = explain(client, {"model": "gpt-4o", "input": "x"}, "responses")["answer"]["body"]["id"]
    unknown = explain(client, {"model": "gpt-4o", "input": "x", "previous_response_id": shown}, "responses")
    assert unknown["answer"]["status"] == 404  # the explained answer was not stored
    assert unknown["error"] == f"Previous response with id '{shown}' not found."


def test_answers_the_route_gives_instead_of_a_rule_are_shown_as_it_gives_them() -> None:
    mock = MockGPT(
        [
            Rule("only", m.model("gpt-4o"), "x"),
            Rule("boom", m.always(), g.integer(1, 2).filter(lambda n: n > 5)),
        ]
    )
    client = client_for(mock)
    for request, status in [({"model": "gpt-4o"}, 400), (chat("hi", model="other"), 500)]:
        got = explain(client, request)
        real = client.post("/v1/chat/completions", json=request)
        assert (
            (got["answer"]["status"], got["answer"]["body"])
            == (real.status_code, real.json())
            == (status, real.json())
        )
    nothing = MockGPT([Rule("only", m.model("gpt-4o"), "x")])
    got = explain(client_for(nothing), chat("hi", model="o"))
    real = client_for(nothing).post("/v1/chat/completions", json=chat("hi", model="o"))
    assert got["rule"] is None and got["error"] == "no rule answers this request"
    assert got["trace"][0]["failed"] == "model('gpt-4o')"
    assert (got["answer"]["status"], got["answer"]["body"]) == (400, real.json())
    assert real.json()["error"]["code"] == "no_rule_matched"


def test_a_neutral_request_is_explained_in_its_own_api(client: httpx2.Client) -> None:
    real = client.post(
        "/v1/messages", json={"model": "c", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    )
    detail = client.get("/_synthgpt/calls/0").json()
    got = explain(client, detail["neutral"], "neutral")
    assert got["request"]["api"] == "messages" and got["answer"]["body"] == real.json()


@pytest.mark.parametrize(
    ("payload", "param", "message"),
    [
        (
            {"api": "soap", "request": {}},
            "api",
            "Invalid 'api': expected one of 'chat', 'responses', "
            "'messages', 'embeddings', 'neutral', got 'soap'.",
        ),
        ({"api": "chat"}, "request", "Missing required parameter: 'request' (the request body to explain)."),
        ({"request": {}, "seed": True}, "seed", "Invalid 'seed': expected a whole number >= 0, got True."),
        ({"request": {}, "seed": -1}, "seed", "Invalid 'seed': expected a whole number >= 0, got -1."),
        ([1], None, 'The body must be a JSON object: {"api": …, "request": {…}, "seed": …}.'),
    ],
)
def test_bad_explain_input_is_a_400_naming_the_field(
    client: httpx2.Client, payload: Any, param: str | None, message: str
) -> None:
    r = client.post("/_synthgpt/explain", json=payload)
    assert r.status_code == 400
    assert r.json() == {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    }
    assert client.post("/_synthgpt/explain", content=b"{nope").status_code == 400


def test_rules_list_their_source_and_calls(client: httpx2.Client) -> None:
    client.post("/v1/chat/completions", json=chat("refund"))
    body = client.get("/_synthgpt/rules").json()
    assert body["seed"] == 5 and body["clock"] == "FixedClock(1767225600)"
    assert [(r["name"], r["source"], r["match"], r["times"], r["calls"]) for r in body["rules"]] == [
        ("refund", "rules.yaml:3:5", "last_user(contains='refund')", 1, 1),
        ("slow", "rules.yaml:7:5", "last_user(contains='slow')", None, 0),
        ("default", "rules.yaml:11:5", "always()", None, 0),
    ]
    assert body["rules"][1]["stream"] == {"interval_ms": 2.0, "jitter_ms": 3.0, "chunk_chars": 6}


def test_a_journaled_stream_shows_its_frames_with_their_timing(client: httpx2.Client, mock: MockGPT) -> None:
    sent = client.post("/v1/chat/completions", json=chat("slow", stream=True)).text
    for i in range(20):  # the first call gets packed in the journal; its detail is the same
        client.post("/v1/chat/completions", json=chat(f"call {i}"))
    detail = client.get("/_synthgpt/calls/0").json()
    assert (detail["index"], detail["rule"], detail["api"]) == (0, "slow", "chat")
    answer = detail["answer"]
    assert answer["stream"] is True and answer["sse"] == sent
    frames = answer["frames"]
    assert json.loads(frames[1]["data"])["choices"][0]["delta"] == {"content": "One wo"}
    assert frames[-1]["data"] == "[DONE]"
    assert frames[0]["delay_ms"] == 0 and all(2 <= f["delay_ms"] <= 5 for f in frames[1:])
    assert frames[-1]["at_ms"] == pytest.approx(sum(f["delay_ms"] for f in frames), abs=0.01)
    assert detail["neutral"]["messages"] == [{"role": "user", "content": "slow"}]
    assert client.get("/_synthgpt/calls/20").json()["request"]["last_user"] == "call 19"
    missing = client.get("/_synthgpt/calls/999")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "No call 999 in the journal (it keeps the newest 1000)."


GEMINI = {"contents": [{"role": "user", "parts": [{"text": "tell me about tides"}]}]}
OLLAMA = {"model": "llama3.2", "messages": [{"role": "user", "content": "tell me about tides"}]}
CALLS = [  # the other APIs' chat routes, each answered whole and streamed
    ("/v1beta/models/gemini-2.5-flash:generateContent", GEMINI),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", GEMINI),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", GEMINI),
    ("/api/chat", {**OLLAMA, "stream": False}),
    ("/api/chat", OLLAMA),
    ("/api/generate", {"model": "llama3.2", "prompt": "tell me about tides", "stream": False}),
    ("/v2/chat", {"model": "command-r", "messages": OLLAMA["messages"]}),
    ("/v2/chat", {"model": "command-r", "messages": OLLAMA["messages"], "stream": True}),
    ("/model/anthropic.claude-sonnet-4-5-v1:0/converse",
     {"messages": [{"role": "user", "content": [{"text": "tell me about tides"}]}]}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body"), CALLS, ids=[f"{p} {b.get('stream')}" for p, b in CALLS])
def test_a_journaled_call_of_another_api_shows_the_answer_its_client_got(
    client: httpx2.Client, path: str, body: Any
) -> None:
    # the view re-encoded every API but OpenAI's and Anthropic's as a Chat completion
    sent = client.post(path, json=body)
    assert sent.status_code == 200
    answer = client.get("/_synthgpt/calls/0").json()["answer"]
    if answer["stream"]:
        assert answer["sse"] == sent.text
    else:
        assert answer["body"] == sent.json()


def test_the_page_and_its_assets_come_from_the_package(client: httpx2.Client) -> None:
    page = client.get("/_synthgpt/")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert '<script src="static/playground.js" defer></script>' in page.text
    for name, kind in [("playground.js", "text/javascript"), ("playground.css", "text/css")]:
        r = client.get(f"/_synthgpt/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind) and len(r.content) > 1000
    assert client.get("/_synthgpt/static/..%2Fapp.py").status_code == 404
    bare = client.get("/_synthgpt", follow_redirects=False)
    assert bare.status_code == 308 and bare.headers["location"] == "/_synthgpt/"


def test_the_journal_state_counts_calls_cheaply(client: httpx2.Client) -> None:
    assert client.get("/_synthgpt/journal").json() == {"total": 0, "kept": 0, "maxlen": 1000}
    client.post("/v1/chat/completions", json=chat("hi"))
    client.post("/v1/chat/completions", json=chat("hi"))  # answered again from the memo: journaled too
    assert client.get("/_synthgpt/journal").json() == {"total": 2, "kept": 2, "maxlen": 1000}
    client.delete("/_synthgpt/calls")
    assert client.get("/_synthgpt/journal").json() == {"total": 2, "kept": 0, "maxlen": 1000}


def test_call_details_come_from_a_sqlite_journal_too(tmp_path: Path) -> None:
    mock = load_text(RULES, "rules.yaml").mock()
    mock.journal = SQLiteJournal(tmp_path / "j.sqlite", maxlen=3)
    client = client_for(mock)
    sent = [client.post("/v1/chat/completions", json=chat(f"slow {i}", stream=True)).text for i in range(5)]
    assert client.get("/_synthgpt/journal").json() == {"total": 5, "kept": 3, "maxlen": 3}
    assert [client.get(f"/_synthgpt/calls/{i}").json()["answer"]["sse"] for i in (2, 3, 4)] == sent[2:]
    assert client.get("/_synthgpt/calls/1").status_code == 404


def test_the_admin_token_guards_the_data_and_lets_the_page_load() -> None:
    from synthgpt.server import create_app

    guarded = httpx2.Client(
        transport=InProcessTransport2(create_app(MockGPT(), admin_token="t")), base_url="http://t"
    )
    assert guarded.get("/_synthgpt/").status_code == 200
    assert guarded.get("/_synthgpt/static/playground.js").status_code == 200
    for method, path in [
        ("GET", "/_synthgpt/rules"),
        ("GET", "/_synthgpt/journal"),
        ("GET", "/_synthgpt/calls/0"),
        ("POST", "/_synthgpt/explain"),
        ("POST", "/_synthgpt/"),
    ]:
        assert guarded.request(method, path).status_code == 401, path
    bearer = {"authorization": "Bearer t"}
    assert guarded.post("/_synthgpt/explain", json={"request": chat("hi")}, headers=bearer).status_code == 200
    closed = httpx2.Client(
        transport=InProcessTransport2(create_app(MockGPT(), admin=False)), base_url="http://t"
    )
    for path in ["/_synthgpt/", "/_synthgpt/rules", "/_synthgpt/static/playground.js"]:
        assert closed.get(path).status_code == 404, path


class _SlowJournal(SQLiteJournal):
    """A journal whose reads take a while (as gathering every worker's calls can): reading it must not
    hold up the event loop."""

    def __len__(self) -> int:
        import time

        time.sleep(1.0)
        return super().__len__()


@pytest.mark.timing
@pytest.mark.parametrize("path", ["/_synthgpt/journal", "/_synthgpt/calls/0"])
async def test_reading_the_journal_does_not_hold_up_other_requests(tmp_path: Path, path: str) -> None:
    import asyncio
    import time

    import httpx

    from synthgpt.server import create_app

    mock = MockGPT(seed=1)
    mock.journal = _SlowJournal(tmp_path / "calls.sqlite")
    mock.generate(chat("hello"), api="chat")
    app = create_app(mock)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        started = time.monotonic()
        read = asyncio.ensure_future(c.get(path))
        await asyncio.sleep(0.05)  # the read is under way
        assert (await c.get("/healthz")).status_code == 200
        healthz = time.monotonic() - started
        assert (await read).status_code == 200
    assert healthz < 0.6  # the loop answered while the journal was read (1 s on the loop before)
