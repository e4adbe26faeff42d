"""Property tests of the promise "bad input never yields a 500, a traceback or a hang", over HTTP.

Every API route is driven in process with hypothesis-made bodies: random JSON, valid requests with one
field replaced (wrong type, out of range, huge, deeply nested, NaN, lone surrogates, null) or removed,
bodies that are not JSON or not UTF-8, odd content types, streams. Whatever comes in, the answer is a
2xx, or a 4xx in the route's provider shape; streams end with their terminal frame; nothing is logged
as an unhandled error.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from synthgpt import MockGPT
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport
from tests.fuzz._support import encode, fuzz, json_values, nasty, texts, trapped

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
CHAT_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA},
}

CHAT = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "user", "content": "And tomorrow?"},
    ],
    "tools": [CHAT_TOOL],
    "tool_choice": "auto",
    "max_tokens": 40,
    "temperature": 0.5,
    "n": 1,
    "stop": ["\n\n"],
    "seed": 3,
}
CHAT_SCHEMA = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "A forecast please"}],
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "forecast", "schema": SCHEMA, "strict": True},
    },
}
RESPONSES = {
    "model": "gpt-4o",
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Oslo?"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ],
    "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
    "tool_choice": "auto",
    "max_output_tokens": 60,
    "reasoning": {"effort": "low"},
    "text": {"format": {"type": "json_schema", "name": "forecast", "schema": SCHEMA}},
}
MESSAGES = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 2048,
    "system": [{"type": "text", "text": "Be brief."}],
    "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "tu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo", "days": 1},
                }
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "sunny"}]},
    ],
    "tools": [{"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}],
    "tool_choice": {"type": "auto"},
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "stop_sequences": ["END"],
    "temperature": 0.2,
}
EMBEDDINGS = {
    "model": "text-embedding-3-small",
    "input": ["tides", "moon"],
    "dimensions": 8,
    "encoding_format": "float",
}

# (path, base body, provider of the error shape, its terminal stream frame)
ROUTES: list[tuple[str, dict[str, Any], str]] = [
    ("/v1/chat/completions", CHAT, "openai"),
    ("/v1/chat/completions", CHAT_SCHEMA, "openai"),
    ("/openai/deployments/dep-1/chat/completions?api-version=2024-10-21", CHAT, "openai"),
    ("/v1/responses", RESPONSES, "openai"),
    ("/openai/v1/responses", RESPONSES, "openai"),
    ("/openai/responses?api-version=2025-03-01-preview", RESPONSES, "openai"),
    ("/v1/messages", MESSAGES, "anthropic"),
    ("/v1/embeddings", EMBEDDINGS, "openai"),
    ("/openai/v1/embeddings", EMBEDDINGS, "openai"),
    ("/openai/deployments/emb/embeddings?api-version=2024-10-21", EMBEDDINGS, "openai"),
]
API_PATHS = {r[0] for r in ROUTES}
TERMINAL = {
    "chat": b"data: [DONE]\n\n",
    "responses": (b"event: response.completed\n", b"event: response.incomplete\n"),
    "messages": b"event: message_stop\n",
}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    app = create_app(MockGPT(seed=0))
    with httpx.Client(transport=InProcessTransport(app), base_url="http://synth", timeout=20) as c:
        yield c


def assert_error_shape(r: httpx.Response, provider: str) -> None:
    body = r.json()
    if provider == "anthropic":
        assert body["type"] == "error", body
        assert set(body["error"]) >= {"type", "message"}, body
        assert isinstance(body["error"]["type"], str) and isinstance(body["error"]["message"], str), body
    else:
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"message", "type", "param", "code"}, body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
        assert isinstance(body["error"]["type"], str), body
        assert body["error"]["param"] is None or isinstance(body["error"]["param"], str), body


def assert_sound(r: httpx.Response, path: str, provider: str, streamed: bool) -> None:
    assert r.status_code != 500 and r.status_code < 600, (r.status_code, r.text[:2000])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/json"), r.headers
        assert_error_shape(r, provider)
        return
    assert r.status_code == 200, r.text[:500]
    if r.headers["content-type"].startswith("text/event-stream"):
        api = "messages" if "messages" in path else "responses" if "responses" in path else "chat"
        ends = TERMINAL[api]
        assert any(e in r.content for e in (ends if isinstance(ends, tuple) else (ends,))), r.content[-300:]
        if api == "chat":
            assert r.content.endswith(b"data: [DONE]\n\n")
        return
    r.content.decode("utf-8")
    if r.headers["content-type"].startswith("application/x-ndjson"):
        for line in r.content.splitlines():
            json.loads(line, parse_constant=_no_constant)
        return
    json.loads(r.content, parse_constant=_no_constant)  # valid JSON: no NaN literals, no lone surrogates


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def post(
    client: httpx.Client,
    path: str,
    content: bytes,
    ctype: str = "application/json",
    provider: str = "openai",
    streamed: bool = False,
) -> None:
    headers = {"content-type": ctype}
    if provider == "anthropic":
        headers |= {"anthropic-version": "2023-06-01", "x-api-key": "k"}
    with trapped() as trap:
        r = client.post(path, content=content, headers=headers)
    assert not trap.records, trap.report()
    assert_sound(r, path, provider, streamed)


# ------------------------------------------------------------------------------------------- mutation


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside `value` (object keys and list indices)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*prefix, i))


def replace(body: Any, path: tuple[Any, ...], new: Any, delete: bool, *, shallow: bool = False) -> Any:
    """`body` with the value at `path` replaced (or deleted), in a copy: a deep one, which keeps what the
    base shares (decode_corpus.json was made so), or with `shallow` only the containers on the path (a
    deep copy of a body already holding a nasty 5,000-level value recurses)."""
    if not path:
        return new
    out = copy.copy(body) if shallow else copy.deepcopy(body)
    parent = out
    for step in path[:-1]:
        if shallow:
            parent[step] = copy.copy(parent[step])
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return out


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any, str, bool]:
    path, base, provider = draw(st.sampled_from(ROUTES))
    body = copy.deepcopy(base)
    if draw(st.booleans()):
        body["stream"] = True
        if path.endswith("chat/completions") or "chat/completions?" in path:
            body["stream_options"] = {"include_usage": True}
    for _ in range(draw(st.integers(1, 2))):
        spots = [p for p in paths(body) if p]
        if not spots:  # the first mutation deleted the body's only field
            break
        spot = draw(st.sampled_from(spots))
        body = replace(body, spot, draw(nasty), delete=draw(st.integers(0, 4)) == 0)
    if draw(st.integers(0, 5)) == 0:
        body[draw(texts)] = draw(json_values)  # an unknown top-level field
    return path, body, provider, body.get("stream") is True


@fuzz(350)
@given(case=mutated())
def test_mutated_requests(client: httpx.Client, case: tuple[str, Any, str, bool]) -> None:
    path, body, provider, streamed = case
    post(client, path, encode(body), provider=provider, streamed=streamed)


@fuzz(15)
@given(route=st.sampled_from(ROUTES))
def test_valid_base_requests_succeed(client: httpx.Client, route: tuple[str, dict[str, Any], str]) -> None:
    path, body, provider = route
    for stream in (False, True):
        r = client.post(
            path,
            json={**body, "stream": stream} if "embeddings" not in path else body,
            headers={"anthropic-version": "2023-06-01"} if provider == "anthropic" else {},
        )
        assert r.status_code == 200, r.text[:1000]
        assert_sound(r, path, provider, stream)


@fuzz(150)
@given(route=st.sampled_from(ROUTES), body=json_values)
def test_random_json_bodies(client: httpx.Client, route: tuple[str, dict[str, Any], str], body: Any) -> None:
    path, _, provider = route
    post(client, path, encode(body), provider=provider)


@fuzz(120)
@given(
    route=st.sampled_from(ROUTES),
    raw=st.one_of(
        st.binary(max_size=60),
        st.sampled_from(
            [
                b"",
                b"{",
                b"[",
                b"null",
                b"\xff\xfe{}",
                b'{"model": "\xff"}',
                b"\xef\xbb\xbf{}",
                b"[" * 5000 + b"]" * 5000,
                b'{"a":' * 3000 + b"1" + b"}" * 3000,
                b"NaN",
                b'{"model": "gpt-4o", "messages": [}',
                b'"\\ud800"',
                b"1e999999",
            ]
        ),
    ),
    ctype=st.sampled_from(
        [
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "",
            "application/json; charset=latin-1",
            "multipart/form-data; boundary=x",
        ]
    ),
)
def test_raw_bodies(
    client: httpx.Client, route: tuple[str, dict[str, Any], str], raw: bytes, ctype: str
) -> None:
    path, _, provider = route
    post(client, path, raw, ctype=ctype, provider=provider)


@fuzz(60)
@given(
    params=st.dictionaries(
        st.sampled_from(["rule", "api", "model", "offset", "limit", "format", "x"]),
        st.one_of(
            texts, st.integers(-(10**30), 10**30).map(str), st.sampled_from(["json", "jsonl", "", "1e3"])
        ),
        max_size=4,
    ),
    anthropic=st.booleans(),
)
def test_admin_and_models_query_params(client: httpx.Client, params: dict[str, str], anthropic: bool) -> None:
    client.post("/v1/chat/completions", json=CHAT)  # something in the journal
    clean = {k: v.encode("utf-8", "replace").decode() for k, v in params.items()}
    headers = {"anthropic-version": "2023-06-01"} if anthropic else {}
    with trapped() as trap:
        calls = client.get("/_synthgpt/calls", params=clean)
        models = client.get("/v1/models", params=clean, headers=headers)
        model = client.get("/v1/models/" + quote(clean.get("model") or "gpt-4o", safe=""), headers=headers)
    assert not trap.records, trap.report()
    assert_sound(calls, "/_synthgpt/calls", "openai", False)
    assert calls.status_code in (200, 400)
    if calls.status_code == 400:
        assert calls.json()["error"]["param"] in ("offset", "limit", "format")
    for r in (models, model):
        assert r.status_code in (200, 400, 404), r.text
        assert_sound(r, "/v1/models", "anthropic" if anthropic else "openai", False)


@fuzz(40)
@given(
    path=st.sampled_from([r[0] for r in ROUTES] + ["/v1/models", "/_synthgpt/calls", "/healthz", "/nope"]),
    method=st.sampled_from(["GET", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    anthropic=st.booleans(),
)
def test_wrong_methods(client: httpx.Client, path: str, method: str, anthropic: bool) -> None:
    headers = {"anthropic-version": "2023-06-01"} if anthropic else {}
    with trapped() as trap:
        r = client.request(method, path, headers=headers)
    assert not trap.records, trap.report()
    assert r.status_code in (200, 404, 405), r.text
    if r.status_code >= 400:
        # an API route answers in its own provider's shape; any other path in the client's
        if path in API_PATHS:
            provider = "anthropic" if path == "/v1/messages" else "openai"
        else:
            provider = "anthropic" if anthropic else "openai"
        assert_error_shape(r, provider)
