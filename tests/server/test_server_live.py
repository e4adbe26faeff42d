"""The server as a real process: determinism across processes, concurrency, faults on a real socket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT
from synthgpt.codec.openai_chat.encode import ChatCodec

pytestmark = pytest.mark.slow

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "k": {"type": "integer"}},
                "required": ["q"],
            },
        },
    }
]
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    (
        "/v1/chat/completions",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]},
    ),
    (
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "Tell me about tides"}],
        },
    ),
    (
        "/v1/chat/completions",
        {
            "model": "o3",
            "n": 2,
            "max_tokens": 20,
            "reasoning_effort": "high",
            "messages": [{"role": "user", "content": "Plan a trip"}],
        },
    ),
    (
        "/v1/chat/completions",
        {"model": "gpt-4o", "tools": TOOLS, "messages": [{"role": "user", "content": "find"}]},
    ),
    (
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "x"}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "p",
                    "schema": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
            },
        },
    ),
    (
        "/openai/deployments/dep/chat/completions?api-version=2024-10-21",
        {"stream": True, "messages": [{"role": "user", "content": "hi !MOCK_TRUNCATE:4!"}]},
    ),
    (
        "/v1/chat/completions",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "!MOCK_ERROR:429!"}]},
    ),
    ("/v1/chat/completions", {"model": "gpt-4o", "messages": []}),
]


def fetch_all(base: str) -> list[tuple[int, dict[str, str], bytes]]:
    out = []
    with httpx.Client(base_url=base, timeout=10) as c:
        for path, body in REQUESTS:
            r = c.post(path, json=body)
            headers = {k: v for k, v in r.headers.items() if k not in ("content-length", "connection")}
            out.append((r.status_code, headers, r.content))
    return out


def test_two_processes_with_the_same_seed_answer_byte_identically(
    live_server: str, start_server: Any
) -> None:
    with start_server("--seed", "0") as other:
        a, b = fetch_all(live_server), fetch_all(other)
    assert a == b
    assert [s for s, _, _ in a] == [200, 200, 200, 200, 200, 200, 429, 400]


def test_a_different_seed_gives_different_answers(live_server: str, start_server: Any) -> None:
    with start_server("--seed", "1") as other:
        a, b = fetch_all(live_server)[0], fetch_all(other)[0]
    assert a[2] != b[2]
    assert a[1]["x-request-id"] != b[1]["x-request-id"]


def _fold(text: str) -> tuple[str, str | None]:
    content, finish = "", None
    events = [e for e in text.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    for event in events[:-1]:
        chunk = json.loads(event.removeprefix("data: "))
        for c in chunk["choices"]:
            content += c["delta"].get("content") or ""
            finish = c["finish_reason"] or finish
    return content, finish


async def test_200_concurrent_streams_all_complete(live_server: str) -> None:
    def body(i: int) -> dict[str, Any]:
        return {"model": "gpt-4o", "messages": [{"role": "user", "content": f"Tell me about topic{i}"}]}

    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(base_url=live_server, limits=limits, timeout=60) as c:
        replies = await asyncio.gather(
            *(c.post("/v1/chat/completions", json={**body(i), "stream": True}) for i in range(200))
        )
    mock, codec = MockGPT(seed=0), ChatCodec()  # the same engine in this process must agree
    for i, reply in enumerate(replies):
        assert reply.status_code == 200
        content, finish = _fold(reply.text)
        assert finish == "stop"
        assert f"topic{i}" in content
        expected = mock.generate(codec.decode(body(i), {}, {}))
        assert content == expected.text


async def test_slow_streams_do_not_block_each_other(live_server: str) -> None:
    async with httpx.AsyncClient(base_url=live_server, timeout=30) as c:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi !MOCK_SLOW:10!"}]}
        results = await asyncio.gather(*(c.post("/v1/chat/completions", json=body) for _ in range(20)))
    assert len({r.content for r in results}) == 1
    assert results[0].text.endswith("data: [DONE]\n\n")


def test_disconnect_cuts_the_chunked_body(live_server: str) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi !MOCK_DISCONNECT:2!"}]}
    received = b""
    with httpx.Client(base_url=live_server, timeout=10) as c, pytest.raises(httpx.RemoteProtocolError):  # noqa: SIM117
        with c.stream("POST", "/v1/chat/completions", json=body) as r:
            for chunk in r.iter_raw():
                received += chunk
    assert received.count(b"data: ") == 2
    assert httpx.get(live_server + "/healthz").status_code == 200  # the server itself is fine


def test_truncate_closes_cleanly_without_done(live_server: str) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi !MOCK_TRUNCATE:3!"}]}
    r = httpx.post(live_server + "/v1/chat/completions", json=body)
    assert r.status_code == 200
    assert r.text.count("data: ") == 3
    assert "[DONE]" not in r.text


def test_malformed_frame_arrives_as_invalid_json(live_server: str) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi !MOCK_MALFORMED:1!"}]}
    events = [
        e.removeprefix("data: ")
        for e in httpx.post(live_server + "/v1/chat/completions", json=body).text.split("\n\n")
        if e
    ]
    json.loads(events[0])
    with pytest.raises(json.JSONDecodeError):
        json.loads(events[1])
    assert events[-1] == "[DONE]"
