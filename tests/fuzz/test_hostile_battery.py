"""The hostile battery (issue 11, "Done when"): hundreds of hostile requests over every route against a
real `synthgpt serve`, while a poller asks `/healthz` all along. Asserted: no 5xx, `/healthz` answered
within 100 ms throughout (nothing blocks the server), and no credential in any form of the journal (the
JSON view, the JSONL export, the SQLite file).

Cases that only the draw budgets bound (huge schemas, huge embeddings) are kept apart: they must be
refused early (4xx) without holding the server.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import StartServer
from tests.fuzz.test_http_fuzz import ROUTES

pytestmark = [pytest.mark.slow, pytest.mark.timing]

SECRET = "sk-hostile-SECRET-7f3a9c"
TOKEN = "admin-token-4b1d"
CREDENTIALS = {
    "authorization": f"Bearer {SECRET}",
    "x-api-key": SECRET,
    "api-key": SECRET,
    "cookie": f"session={SECRET}",
    "proxy-authorization": f"Basic {SECRET}",
    "x-custom-api-key": SECRET,
}
ADMIN = {"authorization": f"Bearer {TOKEN}"}
HEALTH_BOUND_S = 0.100
"""On an idle machine. On a busy one (a parallel test run, other jobs) the server gets a fraction of a core
and every answer takes longer, blocked or not: the bound grows with the run queue per core
(`health_bound`). A real hang (a draw without a budget) takes seconds and is caught either way."""
MAX_BODY = 256 * 1024

# what replaces a field, one at a time: wrong types, out of range, huge, deep, empty
FIELD_VALUES: list[Any] = [None, -1, 1e308, "", [], {}, True, "x" * 20_000, [[[[[[[[[[[]]]]]]]]]]]]
RAW_BODIES: list[bytes] = [
    b"", b"{", b"null", b"[]", b'"text"', b"\xff\xfe\x00", b'{"model": "\\ud800"}', b"[" * 300 + b"]" * 300,
    b'{"model": "gpt-4o", "temperature": NaN}', b'{"n": 1e999}', b'{"a": Infinity}', b"\x00" * 64,
]  # fmt: skip


_POLLER = r"""
import http.client, json, sys, time, select
host, port = sys.argv[1], int(sys.argv[2])
conn = http.client.HTTPConnection(host, port, timeout=5)
slowest, polls, failures = 0.0, 0, []
while not select.select([sys.stdin], [], [], 0.02)[0]:
    start = time.perf_counter()
    try:
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            failures.append(f"status {r.status}")
    except Exception as exc:
        failures.append(repr(exc))
        conn = http.client.HTTPConnection(host, port, timeout=5)
    slowest = max(slowest, time.perf_counter() - start)
    polls += 1
print(json.dumps({"slowest": slowest, "polls": polls, "failures": failures}))
"""


class Health:
    """Polls /healthz every 20 ms on its own connection, from its own process (a thread here would wait
    for this process's GIL and measure that); keeps the slowest answer and any failure."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.args = [parts.hostname or "127.0.0.1", str(parts.port)]
        self.slowest = 0.0
        self.failures: list[str] = []
        self.polls = 0

    def __enter__(self) -> Health:
        self._proc = subprocess.Popen([sys.executable, "-c", _POLLER, *self.args], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        out, _ = self._proc.communicate("stop\n", timeout=20)
        result = json.loads(out)
        self.slowest, self.polls, self.failures = result["slowest"], result["polls"], result["failures"]


HI = '"messages":[{"role":"user","content":"hi"}]'
SAMPLING = [
    ("/v1/responses", '{"model":"gpt-4o","input":"hi","%s":%s}'),
    ("/v1/messages", '{"model":"claude-sonnet-4-5","max_tokens":5,' + HI + ',"%s":%s}'),
    ("/v1/chat/completions", '{"model":"gpt-4o",' + HI + ',"%s":%s}'),
]
ODD_PATHS = [
    "/v1/models", "/v1/models/" + "m" * 4000, "/v1/models/%00", "/openai/models", "/v1/../_synthgpt/calls",
    "/%2e%2e/_synthgpt/calls", "//v1//chat//completions", "/" + "a" * 8000,
    "/v1/chat/completions?" + "q=1&" * 2000, "/nope", "/_synthgpt", "/_synthgpt/calls/../calls",
]  # fmt: skip


def health_bound() -> float:
    busy = os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, "getloadavg") else 1.0
    return HEALTH_BOUND_S * max(1.0, busy)


def _hostile_requests() -> Iterator[tuple[str, str, dict[str, str], bytes | None]]:
    """(method, path, headers, body) of every hostile request."""
    json_headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", **CREDENTIALS}
    for path, body, _ in ROUTES:
        encoded = httpx.Request("POST", "http://x", json=body).content
        yield "POST", path, json_headers, encoded  # a valid request, credentials in every header
        if "embeddings" not in path:
            yield (
                "POST",
                path,
                json_headers,
                httpx.Request("POST", "http://x", json={**body, "stream": True}).content,
            )
        for raw in RAW_BODIES:
            yield "POST", path, json_headers, raw
        for key in body:
            for value in FIELD_VALUES:
                mutated = copy.deepcopy(body)
                mutated[key] = value
                yield "POST", path, json_headers, httpx.Request("POST", "http://x", json=mutated).content
        for ctype in ("text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded"):
            yield "POST", path, {**json_headers, "content-type": ctype}, encoded
        yield "POST", path, json_headers, b'{"model": "' + b"a" * (MAX_BODY + 10) + b'"}'  # 413
        yield "GET", path, CREDENTIALS, None  # 405
        yield "POST", path, {**json_headers, "host": "rebound.attacker.example"}, encoded  # 400
    for sampling in ("temperature", "top_p"):
        for value in ("-1", "3", "1e999", "NaN", "-Infinity", '"hot"'):
            for path, template in SAMPLING:
                yield "POST", path, json_headers, (template % (sampling, value)).encode()
    for path in ODD_PATHS:
        yield "GET", path, CREDENTIALS, None
    for params in (
        "",
        "?format=jsonl",
        "?limit=-1",
        "?offset=abc",
        "?format=xml",
        "?rule=[",
        "?limit=99999999",
    ):
        yield "GET", "/_synthgpt/calls" + params, {}, None  # 401: no token
        yield "GET", "/_synthgpt/calls" + params, {"authorization": "Bearer wrong"}, None
        yield "GET", "/_synthgpt/calls" + params, ADMIN, None
    yield "DELETE", "/_synthgpt/calls", {"authorization": f"Bearer {TOKEN[:-1]}"}, None
    many = {f"x-h{i}": "v" * 50 for i in range(200)}
    yield "POST", "/v1/chat/completions", {**json_headers, **many}, b"{}"
    yield "POST", "/v1/chat/completions", {**json_headers, "x-big": "v" * 30_000}, b"{}"


def _slow_connections(url: str, count: int) -> list[socket.socket]:
    parts = urlsplit(url)
    out = []
    for _ in range(count):
        s = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80))
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-le")
        out.append(s)
    return out


def _journal_forms(url: str, db: Path) -> list[str]:
    as_json = httpx.get(url + "/_synthgpt/calls", headers=ADMIN, timeout=30)
    as_jsonl = httpx.get(url + "/_synthgpt/calls?format=jsonl", headers=ADMIN, timeout=30)
    assert as_json.status_code == as_jsonl.status_code == 200
    with sqlite3.connect(db) as conn:
        rows = "\n".join(r[0] for r in conn.execute("select record from calls"))
    files = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*")).decode("latin-1")
    return [as_json.text, as_jsonl.text, rows, files]


def test_hostile_battery(start_server: StartServer, tmp_path: Path) -> None:
    db = tmp_path / "calls.sqlite"
    args = ("--admin-token", TOKEN, "--journal", str(db), "--max-body-bytes", str(MAX_BODY),
            "--header-timeout", "2")  # fmt: skip
    requests = list(_hostile_requests())
    assert len(requests) >= 300
    statuses: dict[int, int] = {}
    with start_server(*args) as url, httpx.Client(base_url=url, timeout=30) as client:
        _warm_up(client)
        with Health(url) as health:
            _battery(client, url, requests, statuses)
        forms = _journal_forms(url, db)
    assert health.failures == [] and health.polls > 20
    bound = health_bound()
    assert health.slowest < bound, (
        f"/healthz took {health.slowest * 1000:.0f} ms (bound {bound * 1000:.0f} ms)"
    )
    assert {200, 400, 401, 404, 405, 413} <= set(statuses), statuses
    assert statuses[200] >= 20  # the valid requests were answered, and journaled
    assert '"index"' in forms[0]
    for form in forms:
        assert SECRET not in form and TOKEN not in form


def _warm_up(client: httpx.Client) -> None:
    """One valid request per route first: a fresh process imports and compiles what answering needs on
    its first request (a few hundred ms, once), which is start-up, not a hostile request's doing."""
    for path, body, _ in ROUTES:
        assert client.post(path, json=body, headers={"anthropic-version": "2023-06-01"}).status_code == 200
    assert client.get("/_synthgpt/calls?format=jsonl", headers=ADMIN).status_code == 200


def _battery(client: httpx.Client, url: str, requests: list[Any], statuses: dict[int, int]) -> None:
    slow = _slow_connections(url, 100)  # held open all along: they must not slow anyone down
    try:
        for method, path, headers, body in requests:
            r = client.request(method, path, headers=headers, content=body)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            assert r.status_code < 500, (method, path[:80], (body or b"")[:80], r.status_code, r.text[:300])
    finally:
        for s in slow:
            s.close()


@pytest.fixture
def budget_server(start_server: StartServer) -> Iterator[str]:
    """A server of its own for each body: one shared by all of them kept each earlier body's schemas and
    records alive, and its collector's full passes over them (100-130 ms by the twelfth body) were what
    `/healthz` waited for, whichever body was being answered."""
    with start_server("--max-body-bytes", str(64 * 1024 * 1024)) as url:
        yield url


HUGE_SCHEMA = {"type": "array", "minItems": 200_000, "items": {"type": "string", "minLength": 2_000}}
WIDE_SCHEMA = {
    "type": "object",
    "properties": {f"p{i}": {"type": "string", "minLength": 5_000} for i in range(3_000)},
    "required": [f"p{i}" for i in range(3_000)],
}
CHAT_HUGE = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "x"}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "h", "schema": HUGE_SCHEMA}},
}
RESPONSES_WIDE = {
    "model": "gpt-4o",
    "input": "x",
    "text": {"format": {"type": "json_schema", "name": "w", "schema": WIDE_SCHEMA}},
}
EMBEDDINGS_HUGE = {"model": "text-embedding-3-large", "input": ["x" * 8_000] * 2_048, "dimensions": 3_072}
# an agent's turn of 20,000 tool calls and their results (3 MB): each result's tool was looked up by a walk
# back through the turn's calls, 9 s of drawing for 5,000 of them and 16x that for these
TOOL_TRACE = {
    "model": "gpt-4o",
    "messages": [
        {"role": "user", "content": "run the checks"},
        {"role": "assistant", "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": f"check_{i % 7}", "arguments": "{}"}}
            for i in range(20_000)
        ]},
        *({"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"} for i in range(20_000)),
    ],
}  # fmt: skip
ANTHROPIC_VERSION = {"anthropic-version": "2023-06-01"}  # the other APIs ignore it
# 20,000 tools and a trigger calling each (2 MB): each trigger's tool was looked for through all the tools,
# 9.5 s in process (1.3 s now)
TOOL_CALL_TRIGGERS = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "tools": [{"name": f"tool_{i}", "input_schema": {"type": "object"}} for i in range(20_000)],
    "messages": [
        {"role": "user", "content": " ".join(f"!MOCK_TOOL_CALL:tool_{i}:{{}}!" for i in range(20_000))},
    ],
}
# 16,000 stop sequences and an answer quoting a 1 MB tool result: each stop was looked for through the whole
# answer, 8.8 s in process (0.6 s now)
STOPS_OVER_LONG_ANSWER = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "stop_sequences": [f"never {i}" for i in range(16_000)],
    "tools": [{"name": "fetch", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "fetch the page"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "page text " * 100_000},
        ]},
    ],
}  # fmt: skip
# 15 messages (3 MB) that name "properties" and hold 490 JSON objects never closed: the search for a schema
# pasted into the prompt read from each `{` to the end of its message, 10 s in all (0.4 s now)
UNCLOSED_OBJECTS = {
    "model": "gpt-4o",
    "messages": [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f'Message {i}: answer in JSON. "properties" ' + ('{"a":[' + "0," * 200) * 490,
        }
        for i in range(15)
    ],
}
# 100,000 stop sequences (1.4 MB), each checked against those before it: 0.3 s for 8,000, ~30 s for these
MANY_STOPS = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "stop_sequences": [f"stop {i}" for i in range(100_000)],
    "messages": [{"role": "user", "content": "hi"}],
}


# a replayed Responses turn of 40,000 function_call items (3.6 MB): each call rebuilt the turn's assistant
# message with all the calls before it, 9.9 s in process (0.3 s now)
RESPONSES_CALLS = {
    "model": "gpt-4o",
    "input": [
        {"role": "user", "content": "run the checks"},
        *({"type": "function_call", "call_id": f"call_{i}", "name": f"check_{i % 7}", "arguments": "{}"}
          for i in range(40_000)),
    ],
}  # fmt: skip
# 16,000 tools, all listed by an allowed_tools tool_choice (1.9 MB): each listed name was looked for through
# the tools, and each tool through the names, 8.8 s in process (0.6 s now)
RESPONSES_ALLOWED = {
    "model": "gpt-4o",
    "input": "hi",
    "tools": [{"type": "function", "name": f"tool_{i}", "parameters": {"type": "object"}}
              for i in range(16_000)],
    "tool_choice": {"type": "allowed_tools", "mode": "auto",
                    "tools": [{"type": "function", "name": f"tool_{i}"} for i in range(16_000)]},
}  # fmt: skip
# a Gemini responseSchema of 4,000 properties whose propertyOrdering names 300,000 (3.3 MB), the properties
# last: each property was looked for through the ordering, 9.9 s in process (0.3 s now)
GEMINI_ORDERING = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "generationConfig": {"responseMimeType": "application/json", "responseSchema": {
        "type": "OBJECT",
        "properties": {f"p{i}": {"type": "STRING"} for i in range(4_000)},
        "propertyOrdering": [f"q{i}" for i in range(296_000)] + [f"p{i}" for i in range(4_000)],
    }},
}  # fmt: skip

# 18,000 tools, each called once in the turn, one result (2.3 MB): the next tool was picked by testing every
# tool against the list of calls, 7 s in process (0.6 s now)
_CALLED = [f"t{i:05d}" for i in range(18_000)]
TOOLS_ALL_CALLED = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "tools": [{"name": name, "input_schema": {"type": "object"}} for name in _CALLED],
    "tool_choice": {"type": "any"},
    "messages": [
        {"role": "user", "content": "run them all"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"tu_{i}", "name": name, "input": {}} for i, name in enumerate(_CALLED)
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_0", "content": "ok"}]},
    ],
}  # fmt: skip


def _object(names: list[str], kind: str = "null", required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": kind} for name in names},
            "required": names if required is None else required}  # fmt: skip


def _structured(schema: dict[str, Any], text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": text}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}},
        **extra,
    }


# two optional objects of 4,000 properties, `required` naming one 90,000 times (1.1 MB; seed 5 draws both):
# each property was tested against the list when compiled, drawn ($ref) and filled, 8.5 s each in process
# (0.3 s now)
_NAMES = [f"p{i:05d}" for i in range(4_000)]
_REPEATED = _object(_NAMES, required=["p00000"] * 90_000 + _NAMES)
REQUIRED_REPEATED = _structured(
    {"type": "object", "properties": {"x": _REPEATED, "y": {"$ref": "#/properties/x"}}},
    "the weather in Lisbon",
    seed=5,
)
# 908 objects of 10 required strings, a message of 2,700 quoted strings (8 KB): each field listed every quoted
# string that fit it before taking the first, 11 s in process (0.1 s now)
_FIELDS = {
    "type": "array",
    "minItems": 908,
    "maxItems": 908,
    "items": _object([f"f{i}" for i in range(10)], "string"),
}
QUOTED_FIELDS = _structured(
    {"type": "object", "properties": {"list": _FIELDS}, "required": ["list"]},
    "weather in Lisbon " + '"a"' * 2_700,
)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/v1/chat/completions", CHAT_HUGE, id="huge-array-schema"),
        pytest.param("/v1/responses", RESPONSES_WIDE, id="wide-object-schema"),
        pytest.param("/v1/embeddings", EMBEDDINGS_HUGE, id="huge-embeddings"),
        pytest.param("/v1/chat/completions", TOOL_TRACE, id="long-tool-trace"),
        pytest.param("/v1/messages", MANY_STOPS, id="many-stop-sequences"),
        pytest.param("/v1/chat/completions", UNCLOSED_OBJECTS, id="unclosed-objects-in-prompts"),
        pytest.param("/v1/messages", TOOL_CALL_TRIGGERS, id="many-tool-call-triggers"),
        pytest.param("/v1/messages", STOPS_OVER_LONG_ANSWER, id="many-stops-long-answer"),
        pytest.param("/v1/responses", RESPONSES_CALLS, id="many-responses-function-calls"),
        pytest.param("/v1/responses", RESPONSES_ALLOWED, id="many-allowed-tools"),
        pytest.param("/v1beta/models/gemini-2.0-flash:generateContent", GEMINI_ORDERING,
                     id="long-gemini-property-ordering"),
        pytest.param("/v1/messages", TOOLS_ALL_CALLED, id="all-tools-called-after-results"),
        pytest.param("/v1/chat/completions", REQUIRED_REPEATED, id="long-required-lists"),
        pytest.param("/v1/chat/completions", QUOTED_FIELDS, id="quoted-values-many-fields"),
    ],
)  # fmt: skip
def test_budget_bound_requests(budget_server: str, path: str, body: dict[str, Any]) -> None:
    with Health(budget_server) as health:
        try:
            r = httpx.post(budget_server + path, json=body, headers=ANTHROPIC_VERSION, timeout=5)
        except httpx.TimeoutException:
            pytest.fail("no answer within 5 s")
        assert r.status_code < 500
    bound = health_bound()
    assert health.slowest < bound, (
        f"/healthz took {health.slowest * 1000:.0f} ms (bound {bound * 1000:.0f} ms)"
    )


# Bodies up to the default --max-body-bytes (10 MiB) whose handling used to hold the GIL for long: the
# stdlib parser's path (for a refusal's wording, or to read a wide integer exactly) scanned the whole text
# with a regex for overflowing numbers (250 ms and more for 10 MB); a long message was read whole by the
# prose generator, on the event loop (1.7 s).
_FILLER = "word " * ((10 * 1024 * 1024 - 1024) // 5)
_LONG_CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": _FILLER}]}
NEAR_LIMIT = {
    "invalid-json": (
        b'{"model":"gpt-4o","messages":[{"role":"user","content":"' + _FILLER.encode() + b'"}]'
    ),
    "long-message": json.dumps(_LONG_CHAT).encode(),
    "wide-integer": json.dumps({**_LONG_CHAT, "seed": 12345678901234567890123}).encode(),
    # 100,000 short messages: the request's fingerprint was one pydantic dump and one JSON encoding of all
    # of them, 0.55 s holding the GIL (/healthz: 280 ms)
    "many-messages": json.dumps({**_LONG_CHAT, "messages": [{"role": "user", "content": "hi"}] * 10**5})
    .encode(),
}


@pytest.fixture(scope="module")
def default_server(start_server: StartServer) -> Iterator[str]:
    with start_server("--seed", "0") as url:
        yield url


@pytest.mark.parametrize("name", NEAR_LIMIT)
def test_bodies_near_the_default_size_limit(default_server: str, name: str) -> None:
    raw = NEAR_LIMIT[name]
    assert len(raw) < 10 * 1024 * 1024
    with Health(default_server) as health:
        r = httpx.post(default_server + "/v1/chat/completions", content=raw, timeout=10,
                       headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code < 500, r.text[:300]
    assert r.status_code == (400 if name == "invalid-json" else 200), r.text[:300]
    bound = health_bound()
    assert health.slowest < bound, (
        f"/healthz took {health.slowest * 1000:.0f} ms (bound {bound * 1000:.0f} ms)"
    )
