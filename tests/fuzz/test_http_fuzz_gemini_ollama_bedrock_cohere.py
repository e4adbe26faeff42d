"""The "bad input never yields a 500, a traceback or a hang" property on the Gemini, Ollama, Cohere and
Bedrock routes: valid requests with one or two fields replaced by nasty values or removed, random JSON and raw
bytes. Every answer is a 2xx whose stream parses in its own framing (SSE, JSON array, NDJSON, the binary
AWS event stream), or a 4xx in the route's provider shape."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from synthgpt import MockGPT
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport
from tests.fuzz._support import encode, fuzz, json_values, nasty, texts, trapped
from tests.fuzz.test_http_fuzz import SCHEMA, paths, replace

GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Oslo?"}]},
        {"role": "model",
         "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo", "days": 1}}}]},
        {"role": "user",
         "parts": [{"functionResponse": {"name": "get_weather", "response": {"sky": "sunny"}}}]},
    ],
    "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "tools": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": SCHEMA}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    "generationConfig": {"maxOutputTokens": 60, "stopSequences": ["END"],
                         "responseMimeType": "application/json",
                         "responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
                         "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 64}},
}  # fmt: skip
GEMINI_EMBED = {"requests": [{"content": {"parts": [{"text": "tides"}]}, "outputDimensionality": 8}]}
OLLAMA = {
    "model": "llama3.2",
    "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {}}}],
        },
        {"role": "tool", "tool_name": "get_weather", "content": "sunny"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
    "format": SCHEMA,
    "think": True,
    "options": {"num_predict": 60, "stop": ["END"]},
    "stream": False,
}
OLLAMA_GENERATE = {"model": "llama3.2", "prompt": "Why?", "system": "Be brief.", "stream": True}
OLLAMA_EMBED = {"model": "nomic-embed-text", "input": ["tides", "moon"], "dimensions": 8}
COHERE = {
    "model": "command-a-03-2025",
    "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "tool_plan": "Look.",
         "tool_calls": [{"id": "w_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "w_1",
         "content": [{"type": "document", "document": {"data": "sunny"}}]},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
    "response_format": {"type": "json_object", "json_schema": SCHEMA},
    "max_tokens": 60,
    "stream": True,
}  # fmt: skip
BEDROCK = {
    "messages": [
        {"role": "user", "content": [{"text": "Weather in Oslo?"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}]},
    ],
    "system": [{"text": "Be brief."}],
    "inferenceConfig": {"maxTokens": 60, "stopSequences": ["END"]},
    "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]},
    "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
}
GEMINI_EMBED_ONE = {"content": {"parts": [{"text": "tides"}]}, "outputDimensionality": 8}
ROUTES: list[tuple[str, dict[str, Any], str]] = [
    ("/v1beta/models/gemini-2.5-flash:generateContent", GEMINI, "google"),
    ("/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", GEMINI, "google"),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", GEMINI, "google"),
    ("/v1beta/models/gemini-embedding-001:batchEmbedContents", GEMINI_EMBED, "google"),
    ("/v1beta/models/gemini-2.5-flash:countTokens", {"contents": GEMINI["contents"]}, "google"),
    ("/v1beta/models/gemini-embedding-001:embedContent", GEMINI_EMBED_ONE, "google"),
    ("/api/chat", OLLAMA, "ollama"),
    ("/api/generate", OLLAMA_GENERATE, "ollama"),
    ("/api/embed", OLLAMA_EMBED, "ollama"),
    ("/api/embeddings", {"model": "nomic-embed-text", "prompt": "tides"}, "ollama"),
    ("/api/show", {"model": "llama3.2"}, "ollama"),
    ("/v2/chat", COHERE, "cohere"),
    ("/model/anthropic.claude-sonnet-4-5-v1:0/converse", BEDROCK, "bedrock"),
    ("/model/anthropic.claude-sonnet-4-5-v1:0/converse-stream", BEDROCK, "bedrock"),
]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(
        transport=InProcessTransport(create_app(MockGPT(seed=0))), base_url="http://s", timeout=20
    ) as c:
        yield c


def assert_error_shape(r: httpx.Response, provider: str) -> None:
    body = r.json()
    if provider == "google":
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "status"}, body
        assert body["error"]["code"] == r.status_code and isinstance(body["error"]["status"], str), body
    elif provider == "ollama":
        assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"], body
    elif provider == "cohere":
        assert set(body) == {"id", "message"} and isinstance(body["message"], str), body
    else:
        assert set(body) == {"message"} and r.headers["x-amzn-errortype"].endswith("/"), (body, r.headers)


def assert_sound(r: httpx.Response, provider: str) -> None:
    assert r.status_code != 500 and r.status_code < 600, (r.status_code, r.text[:2000])
    ctype = r.headers["content-type"]
    if r.status_code >= 400:
        assert ctype.startswith("application/json"), r.headers
        assert_error_shape(r, provider)
        return
    assert r.status_code == 200, r.text[:500]
    if ctype.startswith("application/vnd.amazon.eventstream"):
        buffer = EventStreamBuffer()
        buffer.add_data(r.content)  # the CRCs are checked as the messages are read
        messages = list(buffer)
        assert messages[-1].headers[":event-type"] == "metadata"
        for m in messages:
            json.loads(m.payload)
    elif ctype.startswith("text/event-stream"):
        for event in r.content.decode().strip().split("\n\n"):
            json.loads(event.split("data: ", 1)[1])
    elif ctype.startswith("application/x-ndjson"):
        lines = [json.loads(line) for line in r.content.decode().splitlines()]
        assert lines[-1]["done"] is True
    else:
        json.loads(r.content)


def post(
    client: httpx.Client, path: str, content: bytes, provider: str, ctype: str = "application/json"
) -> None:
    with trapped() as trap:
        r = client.post(path, content=content, headers={"content-type": ctype})
    assert not trap.records, trap.report()
    assert_sound(r, provider)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any, str]:
    path, base, provider = draw(st.sampled_from(ROUTES))
    body = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 2))):
        spots = [p for p in paths(body) if p]
        if not spots:  # the first mutation deleted the body's only field
            break
        spot = draw(st.sampled_from(spots))
        body = replace(body, spot, draw(nasty), delete=draw(st.integers(0, 4)) == 0)
    if draw(st.integers(0, 5)) == 0:
        body[draw(texts)] = draw(json_values)
    return path, body, provider


@pytest.mark.parametrize(("path", "body", "provider"), ROUTES, ids=[r[0] for r in ROUTES])
def test_valid_base_requests_succeed(
    client: httpx.Client, path: str, body: dict[str, Any], provider: str
) -> None:
    r = client.post(path, json=body)
    assert r.status_code == 200, r.text[:1000]
    assert_sound(r, provider)


@fuzz(300)
@given(case=mutated())
def test_mutated_requests(client: httpx.Client, case: tuple[str, Any, str]) -> None:
    path, body, provider = case
    post(client, path, encode(body), provider)


@fuzz(100)
@given(route=st.sampled_from(ROUTES), body=json_values)
def test_random_json_bodies(client: httpx.Client, route: tuple[str, dict[str, Any], str], body: Any) -> None:
    post(client, route[0], encode(body), route[2])


@fuzz(60)
@given(
    route=st.sampled_from(ROUTES),
    raw=st.one_of(
        st.binary(max_size=60), st.sampled_from([b"", b"{", b"null", b"\xff\xfe{}", b"NaN", b"[" * 5000])
    ),
)
def test_raw_bodies(client: httpx.Client, route: tuple[str, dict[str, Any], str], raw: bytes) -> None:
    post(client, route[0], raw, route[2])
