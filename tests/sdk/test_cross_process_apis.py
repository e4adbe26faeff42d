"""Same seed => byte-identical answers from two `synthgpt serve` processes, for every API, in any order."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

ANTHROPIC = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
TOOL = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

REQUESTS: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    ("/v1/responses", {"model": "gpt-4o", "input": "Tell me about trains", "instructions": "Be brief."}, {}),
    (
        "/v1/responses",
        {
            "model": "o4-mini",
            "input": "Weather in Paris?",
            "stream": True,
            "reasoning": {"effort": "low", "summary": "auto"},
            "tools": [{"type": "function", "name": "get_weather", "parameters": TOOL, "strict": True}],
        },
        {},
    ),
    ("/v1/responses", {"model": "gpt-4o", "input": "Story time !MOCK_INCOMPLETE!", "stream": True}, {}),
    ("/openai/v1/responses", {"model": "gpt-4o", "input": "Azure hello"}, {"api-key": "k"}),
    (
        "/v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 300, "messages": [{"role": "user", "content": "Hi"}]},
        ANTHROPIC,
    ),
    (
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 4000,
            "stream": True,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": "get_weather", "input_schema": TOOL}],
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
        },
        ANTHROPIC,
    ),
    (
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 9,
            "messages": [{"role": "user", "content": "!MOCK_ERROR:529!"}],
        },
        ANTHROPIC,
    ),
    (
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 300,
            "stream": True,
            "messages": [{"role": "user", "content": "Hi !MOCK_STREAM_ERROR!"}],
        },
        ANTHROPIC,
    ),
    ("/v1/embeddings", {"model": "text-embedding-3-small", "input": ["alpha", "beta gamma"]}, {}),
    (
        "/v1/embeddings",
        {"model": "text-embedding-3-large", "input": [[1, 2, 3]], "encoding_format": "base64"},
        {},
    ),
    ("/v1/embeddings", {"model": "text-embedding-3-small", "input": "short", "dimensions": 64}, {}),
    (
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        {"contents": [{"parts": [{"text": "Weather in Paris?"}]}],
         "tools": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": TOOL}]}],
         "generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
        {"x-goog-api-key": "k"},
    ),
    ("/v1/models/gemini-2.5-flash:generateContent",
     {"contents": [{"parts": [{"text": "!MOCK_ERROR:429!"}]}]}, {}),
    ("/v1/models/gemini-embedding-001:batchEmbedContents",
     {"requests": [{"content": {"parts": [{"text": "alpha"}]}, "outputDimensionality": 16}]}, {}),
    ("/api/chat", {"model": "llama3.2", "think": True, "messages": [{"role": "user", "content": "Hi"}]}, {}),
    ("/api/embed", {"model": "nomic-embed-text", "input": ["alpha", "beta"]}, {}),
    ("/v2/chat",
     {"model": "command-a-03-2025", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}, {}),
    ("/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream",
     {"messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
      "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": TOOL}}}]}}, {}),
]  # fmt: skip

HEADERS = ("content-type", "x-request-id", "request-id", "openai-processing-ms", "retry-after-ms",
           "x-amzn-requestid", "server-timing")  # fmt: skip


def answer(base: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[Any, ...]:
    r = httpx.post(base + path, json=body, headers=headers, timeout=30)
    return (r.status_code, r.content, tuple(r.headers.get(h) for h in HEADERS))


def chain(base: str) -> list[tuple[Any, ...]]:
    """A `previous_response_id` conversation: its ids must line up across processes too."""
    first = httpx.post(base + "/v1/responses", json={"model": "gpt-4o", "input": "Remember the word kiwi"})
    second = httpx.post(
        base + "/v1/responses",
        json={"model": "gpt-4o", "input": "What was the word?", "previous_response_id": first.json()["id"]},
    )
    return [(first.status_code, first.content), (second.status_code, second.content)]


def test_two_processes_answer_byte_for_byte_alike(start_server: Any) -> None:
    with contextlib.ExitStack() as stack:
        servers = [start_server("--seed", "123") for _ in range(2)]
        with ThreadPoolExecutor(2) as pool:  # both start at once: start-up is most of this test's time
            a, b = pool.map(stack.enter_context, servers)
        forward = [answer(a, *req) for req in REQUESTS] + chain(a)
        backward = [answer(b, *req) for req in reversed(REQUESTS)][::-1] + chain(b)
        models = [httpx.get(url + "/v1/models", headers=ANTHROPIC).content for url in (a, b)]
    assert [s for s, *_ in forward] == [200, 200, 200, 200, 200, 200, 529, 200, 200, 200, 200,
                                        200, 429, 200, 200, 200, 200, 200, 200, 200]  # fmt: skip
    assert forward == backward
    assert [h[0] for _, _, h in forward[:11]] == [
        "application/json",
        *["text/event-stream; charset=utf-8"] * 2,
        "application/json",
        "application/json",
        "text/event-stream; charset=utf-8",
        "application/json",
        "text/event-stream; charset=utf-8",
        *["application/json"] * 3,
    ]
    assert [h[0] for _, _, h in forward[11:18]] == [
        "text/event-stream; charset=utf-8", "application/json", "application/json", "application/x-ndjson",
        "application/json", "text/event-stream; charset=utf-8", "application/vnd.amazon.eventstream",
    ]  # fmt: skip
    assert models[0] == models[1]
    assert b'"type":"error","error":{"type":"overloaded_error"' in forward[7][1]  # the mid-stream error


def test_another_seed_answers_differently(start_server: Any, live_server: str) -> None:
    with start_server("--seed", "124") as other:
        bodies = [answer(url, *REQUESTS[0])[1] for url in (live_server, other)]
        vectors = [answer(url, *REQUESTS[8])[1] for url in (live_server, other)]
    assert bodies[0] != bodies[1] and vectors[0] != vectors[1]
