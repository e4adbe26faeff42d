"""A corpus of request bodies for every API, and what decoding each gives: the request, or the refusal.

`python -m tests.codec.decode_corpus` writes `decode_corpus.json` from the decoder of the checkout it runs
in. It was written before the decoders stopped validating through pydantic (issue 13), so
`test_decode_equivalence.py` proves the fast construction gives the requests and refusals the validated
one gave, body for body. Regenerate it only for a change that means to alter what a body decodes to.

The bodies: each route's base request from the HTTP fuzz tests and the bench cases, each of their values
replaced by each hostile value (wrong types, out of range, empty, huge, deep) or deleted, all of their
top-level values replaced at once (which refusal comes first), and raw bodies that are not JSON objects.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synthgpt import MockGPT
from synthgpt.codec import (
    BedrockCodec,
    ChatCodec,
    CohereCodec,
    EmbeddingsCodec,
    GeminiCodec,
    GeminiEmbedCodec,
    MessagesCodec,
    OllamaCodec,
    OllamaEmbedCodec,
    ResponsesCodec,
)
from synthgpt.codec.base import WireCodec
from synthgpt.model import ModelRequest
from synthgpt.pipeline import Answered, accept
from tests.fuzz import test_http_fuzz as openai_routes
from tests.fuzz import test_http_fuzz_gemini_ollama_bedrock_cohere as other_routes
from tests.fuzz.test_http_fuzz import replace

EXPECTED = Path(__file__).with_name("decode_corpus.json")

HEADERS = {
    "content-type": "application/json",
    "Authorization": "Bearer sk-corpus-secret",
    "x-api-key": "sk-corpus-secret",
    "X-Stainless-Lang": "python",
    "anthropic-version": "2023-06-01",
}
HOSTILE: list[Any] = [None, -1, 0, 2.5, 1e308, "", "x" * 300, [], {}, True, [[[[[[[[[[[]]]]]]]]]]]]
RAW: list[bytes] = [
    b"", b"{", b"null", b"[]", b'"text"', b"\xff\xfe\x00", b'{"model": "\\ud800"}', b"[" * 300 + b"]" * 300,
    b'{"model": "gpt-4o", "temperature": NaN}', b'{"n": 1e999}', b'{"a": Infinity}', b"\x00" * 64,
    b'{"model": "gpt-4o", "n": 123456789012345678901234567890, "messages": []}',
    b'\xef\xbb\xbf{"model": "gpt-4o", "messages": [{"role": "user", "content": "bom"}]}',
    b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "\\ud83d\\ude00 pair"}]}',
    b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "a"}], "max_tokens": 1e2}',
    b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "dup"}], "n": 1, "n": 2}',
]  # fmt: skip


def _codecs() -> dict[str, tuple[WireCodec, dict[str, str]]]:
    gemini = {"model": "gemini-2.5-flash"}
    return {
        "/v1/chat/completions": (ChatCodec(), {}),
        "/openai/deployments/dep-1/chat/completions": (ChatCodec(), {"deployment": "dep-1"}),
        "/v1/responses": (ResponsesCodec(), {}),
        "/v1/messages": (MessagesCodec(), {}),
        "/v1/embeddings": (EmbeddingsCodec(), {}),
        "/openai/deployments/emb/embeddings": (EmbeddingsCodec(), {"deployment": "emb"}),
        "gemini:generateContent": (GeminiCodec(), gemini),
        "gemini:streamGenerateContent": (GeminiCodec(stream=True), {**gemini, "alt": "sse"}),
        "gemini:batchEmbedContents": (GeminiEmbedCodec(batch=True), {"model": "gemini-embedding-001"}),
        "/api/chat": (OllamaCodec(), {}),
        "/api/generate": (OllamaCodec(generate=True), {}),
        "/api/embed": (OllamaEmbedCodec(), {}),
        "/v2/chat": (CohereCodec(), {}),
        "/model/converse": (BedrockCodec(), {"model_id": "anthropic.claude-sonnet-4-5-v1:0"}),
    }


_CORPUS_CASES = {"chat", "chat_stream", "responses_stream", "messages_stream", "faker_template", "schema"}
"""The bench cases the corpus was written with (a later one, `responses`, asks what `responses_stream`
asks)."""


def _bench_bodies() -> Iterator[tuple[str, Any]]:
    from bench.cases import CASES, PROMPT

    route = {"/v1/chat/completions": "/v1/chat/completions", "/v1/responses": "/v1/responses",
             "/v1/messages": "/v1/messages"}  # fmt: skip
    for case in CASES:
        if case.path in route and case.name in _CORPUS_CASES:
            for stream in (False, True):
                yield route[case.path], case.make_body(f"{PROMPT} #1", 40 if stream else None, stream)


CHAT_ALL = {
    "model": "gpt-4o", "messages": [{"role": "developer", "content": "d"}, {"role": "user", "content": "u"}],
    "temperature": 1.5, "top_p": 0.5, "presence_penalty": -1, "frequency_penalty": 1.5, "logprobs": True,
    "top_logprobs": 3, "seed": 7, "store": False, "user": "u-1", "stop": "END", "metadata": {"k": "v"},
    "service_tier": "auto", "stream": True, "stream_options": {"include_usage": True}, "n": 2,
    "max_completion_tokens": 30, "reasoning_effort": "low", "parallel_tool_calls": False,
}
RESPONSES_ALL = {
    "model": "gpt-4o", "input": "hi", "temperature": 0.7, "top_p": 0.9, "top_logprobs": 2, "include": ["x"],
    "parallel_tool_calls": False, "stream": True, "store": True, "metadata": {"k": "v"}, "user": "u",
    "instructions": "be brief", "max_output_tokens": 5, "tool_choice": "none", "truncation": "auto",
}
MESSAGES_ALL = {
    "model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
    "temperature": 0.5, "top_p": 0.9, "top_k": 5, "metadata": {"user_id": "u"}, "stream": True,
    "system": "sys", "tool_choice": {"type": "any"}, "stop_sequences": ["a", "b"],
    "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object"}, "strict": True}],
    "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
}


def bases() -> list[tuple[str, Any]]:
    """Each API's base bodies: the fuzz tests' valid requests and the bench cases."""
    o, n = openai_routes, other_routes
    return [
        ("/v1/chat/completions", o.CHAT),
        ("/v1/chat/completions", o.CHAT_SCHEMA),
        ("/openai/deployments/dep-1/chat/completions", {k: v for k, v in o.CHAT.items() if k != "model"}),
        ("/v1/responses", o.RESPONSES),
        ("/v1/messages", o.MESSAGES),
        ("/v1/chat/completions", CHAT_ALL),
        ("/v1/responses", RESPONSES_ALL),
        ("/v1/messages", MESSAGES_ALL),
        ("/v1/embeddings", o.EMBEDDINGS),
        ("/openai/deployments/emb/embeddings", {"input": "one text"}),
        ("gemini:generateContent", n.GEMINI),
        ("gemini:streamGenerateContent", n.GEMINI),
        ("gemini:batchEmbedContents", n.GEMINI_EMBED),
        ("/api/chat", n.OLLAMA),
        ("/api/generate", n.OLLAMA_GENERATE),
        ("/api/embed", n.OLLAMA_EMBED),
        ("/v2/chat", n.COHERE),
        ("/model/converse", n.BEDROCK),
        *_bench_bodies(),
    ]


def _spots(value: Any, prefix: tuple[Any, ...] = (), depth: int = 4) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if depth == 0:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        yield from _spots(v, (*prefix, k), depth - 1)


def corpus() -> Iterator[tuple[str, bytes]]:
    """(route key, raw body) pairs, in a fixed order."""
    for route, base in bases():
        yield route, json.dumps(base).encode()
        for spot in _spots(base):
            yield route, json.dumps(replace(base, spot, None, True)).encode()
            for new in HOSTILE:
                yield route, json.dumps(replace(base, spot, new, False)).encode()
        if isinstance(base, dict):  # every field but the first wrong at once: which one is named first
            for new in HOSTILE:
                keep = next(iter(base))
                yield route, json.dumps({k: v if k == keep else new for k, v in base.items()}).encode()
                yield route, json.dumps({k: new for k in reversed(base)}).encode()
    for route in _codecs():
        for raw in RAW:
            yield route, raw


def request_digest(req: ModelRequest) -> str:
    """What identifies a decoded request: every field (by alias, as JSON) and which fields were set."""
    dumped = req.model_dump(mode="json", by_alias=True)
    text = json.dumps([dumped, sorted(req.model_fields_set)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def outcome(mock: MockGPT, codecs: dict[str, tuple[WireCodec, dict[str, str]]], route: str,
            raw: bytes) -> tuple[list[Any], ModelRequest | None]:  # fmt: skip
    """[status, error body] of a refusal, or [200, request digest] and the request."""
    codec, params = codecs[route]
    got = accept(mock, codec, raw, HEADERS, params, path=route)
    if isinstance(got, Answered):
        return [got.status, got.body.decode()], None
    return [200, request_digest(got.request)], got.request


def run() -> list[list[Any]]:
    mock, codecs = MockGPT(seed=0), _codecs()
    return [[route, hashlib.sha256(raw).hexdigest()[:16], *outcome(mock, codecs, route, raw)[0]]
            for route, raw in corpus()]  # fmt: skip


if __name__ == "__main__":
    rows = run()
    EXPECTED.write_text("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]\n")
    print(f"{len(rows)} bodies -> {EXPECTED}", file=sys.stderr)
