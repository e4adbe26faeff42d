"""The official clients of every API, recorded through the proxy and replayed from the recording: each
call's parsed answer (every field the client exposes, stream events included) is the same both times."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import boto3
import cohere
import httpx
import ollama
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types

from tests.record._support import WEATHER, recording_proxy, replay_server

KEY = "sk-client-key-0123456789"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]


def _openai(url: str) -> dict[str, Any]:
    with openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0) as client:
        ask = [{"role": "user", "content": "Tell me about tea"}]
        out: dict[str, Any] = {
            "chat": client.chat.completions.create(model="gpt-4o", messages=ask),  # type: ignore[arg-type]
            "chat-stream": list(client.chat.completions.create(model="gpt-4o", messages=ask, stream=True)),  # type: ignore[arg-type]
            "tools": client.chat.completions.create(
                model="gpt-4o",
                messages=ask,
                tools=TOOLS,  # type: ignore[arg-type]
                tool_choice="required",
            ),
            "responses": client.responses.create(model="gpt-4o", input="Tell me about tea"),
            "responses-stream": list(
                client.responses.create(model="gpt-4o", input="Tell me about tea", stream=True)
            ),
            "embeddings": client.embeddings.create(model="text-embedding-3-small", input=["tea", "coffee"]),
        }
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "rate limit me"}]
            )
        out["error"] = (limited.value.status_code, limited.value.body)
        return out


def _anthropic(url: str) -> dict[str, Any]:
    with anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0) as client:
        ask: Any = [{"role": "user", "content": "Tell me about tea"}]
        with client.messages.stream(model="claude-sonnet-4-5", max_tokens=400, messages=ask) as stream:
            pieces = list(stream.text_stream)
            final = stream.get_final_message()
        thinking = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=3000,
            messages=ask,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
        tools = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=400,
            messages=ask,
            tools=[{"name": "get_weather", "input_schema": WEATHER}],
            tool_choice={"type": "any"},
        )
        return {"stream": (pieces, final), "thinking": thinking, "tools": tools}


def _gemini(url: str) -> dict[str, Any]:
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    with genai.Client(api_key=KEY, http_options=options) as client:
        model = "gemini-2.5-flash"
        tool = types.Tool(
            function_declarations=[
                types.FunctionDeclaration(name="get_weather", parameters_json_schema=WEATHER)
            ]
        )
        no_afc = types.AutomaticFunctionCallingConfig(disable=True)
        return {
            "text": client.models.generate_content(model=model, contents="Tell me about tea"),
            "stream": list(client.models.generate_content_stream(model=model, contents="Tell me about tea")),
            "tools": client.models.generate_content(
                model=model,
                contents="weather?",
                config=types.GenerateContentConfig(tools=[tool], automatic_function_calling=no_afc),
            ),
            "embed": client.models.embed_content(
                model="gemini-embedding-001",
                contents=["tea"],
                config=types.EmbedContentConfig(output_dimensionality=8),
            ),
        }


def _ollama(url: str) -> dict[str, Any]:
    with ollama.Client(host=url) as client:
        ask = [{"role": "user", "content": "Tell me about tea"}]
        return {
            "chat": client.chat(model="llama3.2", messages=ask),
            "stream": list(client.chat(model="llama3.2", messages=ask, stream=True)),
            "think": client.chat(model="qwen3", messages=ask, think=True),
            "tools": client.chat(model="llama3.2", messages=ask, tools=TOOLS),
            "embed": client.embed(model="nomic-embed-text", input=["tea", "coffee"]),
        }


def _cohere(url: str) -> dict[str, Any]:
    with httpx.Client() as http:
        client = cohere.ClientV2(api_key=KEY, base_url=url, httpx_client=http)
        ask: Any = [{"role": "user", "content": "Tell me about tea"}]
        return {
            "chat": client.chat(model="command-a-03-2025", messages=ask),
            "stream": list(client.chat_stream(model="command-a-03-2025", messages=ask)),
            "tools": client.chat(
                model="command-a-03-2025", messages=ask, tools=TOOLS, tool_choice="REQUIRED"
            ),  # type: ignore[arg-type]
        }


def _bedrock(url: str) -> dict[str, Any]:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret-key-example",
        config=Config(retries={"total_max_attempts": 1}),
    )
    try:
        model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
        ask = [{"role": "user", "content": [{"text": "Tell me about tea"}]}]
        tool = {
            "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": WEATHER}}}],
            "toolChoice": {"any": {}},
        }
        said = client.converse(modelId=model, messages=ask)
        streamed = client.converse_stream(modelId=model, messages=ask)
        tools = client.converse(modelId=model, messages=ask, toolConfig=tool)
        return {
            "converse": {k: v for k, v in said.items() if k != "ResponseMetadata"},
            "stream": list(streamed["stream"]),
            "tools": {k: v for k, v in tools.items() if k != "ResponseMetadata"},
        }
    finally:
        client.close()


CLIENTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "google-genai": _gemini,
    "ollama": _ollama,
    "cohere": _cohere,
    "boto3": _bedrock,
}


def plain(value: Any) -> Any:
    """A client's answer as plain data: pydantic models dumped (their HTTP response objects left out)."""
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(mode="json", exclude={"sdk_http_response"}))
    if hasattr(value, "dict") and callable(value.dict) and not isinstance(value, dict):
        return plain(value.dict())
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@pytest.mark.parametrize("name", list(CLIENTS))
def test_a_recording_replays_identically_through_the_official_client(
    upstream: str, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "recorded.yaml"
    with recording_proxy(upstream, out) as (url, config):
        recorded = plain(CLIENTS[name](url))
    assert config.recorded, "nothing was recorded"
    with replay_server(out, strict=True) as url:  # strict: every answer comes from the recording
        replayed = plain(CLIENTS[name](url))
    assert replayed == recorded
    assert KEY not in out.read_text()
