"""Whole-answer snapshots of Gemini, Ollama, Bedrock and Cohere: the same requests (a tool, thinking, a
question) answered by the built-in rules at seed 0, as JSON bodies and as exact stream bytes. A change to
any byte shows here.

The Bedrock stream is binary: its snapshot lists each decoded message (headers, payload) and pins the bytes
with their SHA-256."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from syrupy.extensions.json import JSONSnapshotExtension

from synthgpt import MockGPT
from synthgpt.codec.bedrock.encode import BedrockCodec
from synthgpt.codec.cohere.encode import CohereCodec
from synthgpt.codec.gemini.encode import GeminiCodec
from synthgpt.codec.ollama.encode import OllamaCodec
from synthgpt.codec.sse import plan_wire

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ASK = "What is the weather in Lisbon?"
CASES: dict[str, tuple[Any, dict[str, Any], dict[str, str]]] = {
    "gemini": (GeminiCodec(stream=True), {
        "contents": [{"role": "user", "parts": [{"text": ASK}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": SCHEMA}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
    }, {"model": "gemini-2.5-flash", "alt": "sse"}),
    "ollama": (OllamaCodec(), {
        "model": "llama3.2", "messages": [{"role": "user", "content": ASK}], "think": True,
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
    }, {}),
    "cohere": (CohereCodec(), {
        "model": "command-a-03-2025", "messages": [{"role": "user", "content": ASK}], "stream": True,
        "thinking": {"type": "enabled"},
    }, {}),
    "bedrock": (BedrockCodec(stream=True), {
        "messages": [{"role": "user", "content": [{"text": ASK}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }, {"model_id": "anthropic.claude-sonnet-4-5-20250929-v1:0"}),
}  # fmt: skip


def _readable(api: str, data: bytes) -> str:
    if api != "bedrock":
        return data.decode()
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    lines = [f"{m.headers[':message-type']} {m.headers[':event-type']}: {m.payload.decode()}" for m in buffer]
    return "\n".join([f"sha256 {hashlib.sha256(data).hexdigest()}", *lines]) + "\n"


@pytest.mark.parametrize("api", list(CASES))
def test_answers(api: str, snapshot: Any, sse_snapshot: Any) -> None:
    codec, body, params = CASES[api]
    req = codec.decode(body, {}, params)
    out = MockGPT(seed=0).generate(req)
    out = out.model_copy(update={"stream": out.stream.model_copy(update={"chunk_chars": 24})})
    assert codec.body(out, req) == snapshot.use_extension(JSONSnapshotExtension)
    assert _readable(api, plan_wire(codec.frames(out, req), out.stream, codec, out, req).data) == sse_snapshot
