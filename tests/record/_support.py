"""What the record tests share: the upstream (synthgpt itself, on its own loopback port), the recording
proxy in front of it, a replay server built the way `synthgpt serve` builds one, and the requests of every
API that a recording must replay byte for byte."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synthgpt.record import ProxyConfig, RecordingFile, create_proxy_app
from synthgpt.rules.loader import load_text
from synthgpt.server.run import ServeConfig, build_mock
from synthgpt.testing import LiveServer
from tests.conftest import synthgpt_process

REPO = Path(__file__).resolve().parents[2]

# The upstream: the built-in rules, plus Responses answers with a pinned id. Responses output items have
# ids derived from the answer's seed, which a recording cannot see; a pinned response id pins them too
# (docs/record.md), so these replay byte for byte. The other APIs need no pins: their ids are recorded.
UPSTREAM_RULES = """
seed: 3
clock: fixed:1700000000
include: builtin
rules:
  - name: responses-tools
    match: {api: responses, has_tools: true}
    generate: {tool_call: [get_weather]}
    stream: {id: resp_pinned_tools}
  - name: responses-text
    match: {api: responses}
    generate: {summary: {max_chars: 160, count: 2}}
    stream: {id: resp_pinned_text}
  - name: paced
    match: {last_user: {contains: "pace me"}}
    output: {text: "One two three four five six seven eight nine ten eleven twelve."}
    stream: {first_delay_ms: 120, interval_ms: 40, chunk_chars: 10}
  - name: rate-limited
    match: {last_user: {contains: "rate limit me"}}
    error:
      {status: 429, message: Slow down., retry_after_ms: 1500, headers: {x-ratelimit-remaining-requests: "0"}}
"""

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
    "additionalProperties": False,
}
USER = {"role": "user", "content": "Tell me about tea"}
GEMINI_USER = {"contents": [{"role": "user", "parts": [{"text": "Tell me about tea"}]}]}
BEDROCK_USER = {"messages": [{"role": "user", "content": [{"text": "Tell me about tea"}]}]}
GEMINI = "/v1beta/models/gemini-2.5-flash"

# (id, path, body): every route synthgpt serves, JSON and streamed, with tools, schemas and reasoning
WIRE_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("chat", "/v1/chat/completions", {"model": "gpt-4o", "messages": [USER]}),
    (
        "chat-stream",
        "/v1/chat/completions",
        {"model": "gpt-4o", "messages": [USER], "stream": True, "stream_options": {"include_usage": True}},
    ),
    (
        "chat-tools",
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
            "tool_choice": "required",
        },
    ),
    (
        "chat-tools-stream",
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "weather in Paris?"}],
            "stream": True,
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
            "tool_choice": "required",
        },
    ),
    (
        "chat-schema",
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "a city"}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "city", "schema": CITY_SCHEMA},
            },
        },
    ),
    (
        "azure-chat",
        "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        {"messages": [USER]},
    ),
    ("responses", "/v1/responses", {"model": "gpt-4o", "input": "Tell me about tea"}),
    ("responses-stream", "/v1/responses", {"model": "gpt-4o", "input": "Tell me about tea", "stream": True}),
    (
        "responses-tools",
        "/v1/responses",
        {
            "model": "gpt-4o",
            "input": "weather?",
            "stream": True,
            "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER}],
        },
    ),
    ("responses-reasoning", "/v1/responses",
     {"model": "gpt-4o", "input": "Tell me about tea", "reasoning": {"effort": "low"}}),
    ("responses-summary", "/v1/responses",
     {"model": "gpt-4o", "input": "Tell me about tea", "reasoning": {"effort": "low", "summary": "auto"}}),
    ("messages", "/v1/messages", {"model": "claude-sonnet-4-5", "max_tokens": 300, "messages": [USER]}),
    (
        "messages-stream",
        "/v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 300, "messages": [USER], "stream": True},
    ),
    (
        "messages-thinking",
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 3000,
            "messages": [USER],
            "stream": True,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
        },
    ),
    (
        "messages-tools",
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 300,
            "messages": [{"role": "user", "content": "weather?"}],
            "tools": [{"name": "get_weather", "input_schema": WEATHER}],
            "tool_choice": {"type": "any"},
        },
    ),
    ("embeddings", "/v1/embeddings", {"model": "text-embedding-3-small", "input": ["tea", "coffee"]}),
    (
        "embeddings-float",
        "/v1/embeddings",
        {"model": "text-embedding-3-small", "input": "tea", "encoding_format": "float", "dimensions": 16},
    ),
    ("gemini", GEMINI + ":generateContent", GEMINI_USER),
    ("gemini-sse", GEMINI + ":streamGenerateContent?alt=sse", GEMINI_USER),
    ("gemini-array", GEMINI + ":streamGenerateContent", GEMINI_USER),
    (
        "gemini-tools",
        GEMINI + ":generateContent",
        {
            **GEMINI_USER,
            "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": WEATHER}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        },
    ),
    (
        "gemini-embed",
        "/v1beta/models/gemini-embedding-001:batchEmbedContents",
        {
            "requests": [
                {
                    "model": "models/gemini-embedding-001",
                    "content": {"parts": [{"text": "tea"}]},
                    "outputDimensionality": 8,
                }
            ]
        },
    ),
    ("ollama-stream", "/api/chat", {"model": "llama3.2", "messages": [USER]}),
    ("ollama", "/api/chat", {"model": "llama3.2", "messages": [USER], "stream": False}),
    ("ollama-think", "/api/chat", {"model": "qwen3", "messages": [USER], "think": True}),
    (
        "ollama-tools",
        "/api/chat",
        {
            "model": "llama3.2",
            "messages": [{"role": "user", "content": "weather?"}],
            "stream": False,
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
        },
    ),
    ("ollama-embed", "/api/embed", {"model": "nomic-embed-text", "input": ["tea", "coffee"]}),
    ("cohere", "/v2/chat", {"model": "command-a-03-2025", "messages": [USER]}),
    ("cohere-stream", "/v2/chat", {"model": "command-a-03-2025", "messages": [USER], "stream": True}),
    ("bedrock", "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse", BEDROCK_USER),
    ("bedrock-stream", "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream", BEDROCK_USER),
    (
        "error-429",
        "/v1/chat/completions",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "please rate limit me"}]},
    ),
]


def upstream_server() -> LiveServer:
    return LiveServer(load_text(UPSTREAM_RULES).mock()).start()


@contextlib.contextmanager
def recording_proxy(upstream: str, out: Path, **options: Any) -> Iterator[tuple[str, ProxyConfig]]:
    """The recording proxy in front of `upstream`, appending to `out` (timing off unless asked: replayed
    bytes are compared, and timing shapes none of them, but it keeps the tests fast)."""
    options.setdefault("timing", False)
    config = ProxyConfig(upstream=upstream, recording=RecordingFile(out), **options)
    server = LiveServer(create_proxy_app(config)).start()
    try:
        yield server.url, config
    finally:
        server.stop()


@contextlib.contextmanager
def replay_server(*files: Path, strict: bool = False) -> Iterator[str]:
    """A server for the recording, built as `synthgpt serve FILES [--strict]` builds its engine."""
    mock = build_mock(ServeConfig(rule_files=tuple(map(str, files)), strict=strict))
    server = LiveServer(mock).start()
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def record_process(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`python -m synthgpt record --port 0 ARGS` as a process; yields its URL once it listens."""
    with synthgpt_process("record", *args, env=env, healthz=False) as url:
        yield url
