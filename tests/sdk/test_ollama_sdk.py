"""The official `ollama` client against a real `synthgpt serve` process: chat, generate, embed, tags, show.

Ollama's client types accept unknown fields, so every answer is also checked key by key against the
fields the Ollama API reference documents (`strict`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pytest
from pydantic import BaseModel

MODEL = "llama3.2"
TIMING = {"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
          "eval_duration"}  # fmt: skip
CHAT_KEYS = {"model", "created_at", "message", "done", "done_reason", *TIMING}
GENERATE_KEYS = {"model", "created_at", "response", "thinking", "done", "done_reason", "context", *TIMING}
MESSAGE_KEYS = {"role", "content", "thinking", "tool_calls"}


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
      city: the city
    """
    return f"sunny in {city}"


class City(BaseModel):
    name: str
    population: int


@pytest.fixture
def client(live_server: str) -> Iterator[ollama.Client]:
    with ollama.Client(host=live_server) as c:
        yield c


def strict(line: dict[str, Any], keys: set[str]) -> None:
    assert set(line) <= keys, set(line) - keys
    if "message" in line:
        assert set(line["message"]) <= MESSAGE_KEYS and line["message"]["role"] == "assistant"


def raw_lines(base: str, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    r = httpx.post(base + path, json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert r.text.endswith("}\n")
    return [json.loads(line) for line in r.text.splitlines()]


def test_chat(client: ollama.Client, live_server: str) -> None:
    r = client.chat(model=MODEL, messages=[{"role": "user", "content": "Tell me about tea"}])
    assert r.done and r.done_reason == "stop" and r.model == MODEL
    assert "tea" in (r.message.content or "").lower()
    assert r.prompt_eval_count and r.eval_count and r.total_duration and r.created_at
    raw = httpx.post(live_server + "/api/chat",
                     json={"model": MODEL, "stream": False,
                           "messages": [{"role": "user", "content": "Tell me about tea"}]})  # fmt: skip
    strict(raw.json(), CHAT_KEYS)
    assert raw.json()["message"]["content"] == r.message.content


def test_stream_is_ndjson_and_folds_to_the_answer(client: ollama.Client, live_server: str) -> None:
    ask = [{"role": "user", "content": "Why is the sky blue?"}]
    parts = list(client.chat(model=MODEL, messages=ask, stream=True, think=True))
    whole = client.chat(model=MODEL, messages=ask, think=True)
    assert len(parts) > 3 and [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert "".join(p.message.content or "" for p in parts) == whole.message.content
    assert (
        "".join(p.message.thinking or "" for p in parts) == whole.message.thinking and whole.message.thinking
    )
    assert parts[-1].eval_count == whole.eval_count
    for line in raw_lines(live_server, "/api/chat", {"model": MODEL, "messages": ask}):  # streams by default
        strict(line, CHAT_KEYS)


def test_tools(client: ollama.Client) -> None:
    ask: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat(model=MODEL, messages=ask, tools=[get_weather])
    (call,) = first.message.tool_calls or []
    assert call.function.name == "get_weather" and call.function.arguments == {"city": "Paris"}
    ask += [first.message, {"role": "tool", "tool_name": "get_weather", "content": "sunny"}]
    second = client.chat(model=MODEL, messages=ask, tools=[get_weather])
    assert not second.message.tool_calls and "sunny" in (second.message.content or "")


def test_structured_output(client: ollama.Client) -> None:
    r = client.chat(
        model=MODEL, messages=[{"role": "user", "content": "A city"}], format=City.model_json_schema()
    )
    assert list(json.loads(r.message.content or "")) == ["name", "population"]  # the schema's order
    City.model_validate_json(r.message.content or "")
    loose = client.chat(model=MODEL, messages=[{"role": "user", "content": "A city"}], format="json")
    assert isinstance(json.loads(loose.message.content or ""), dict)


def test_generate(client: ollama.Client, live_server: str) -> None:
    r = client.generate(model=MODEL, prompt="Tell me about tea", system="Be brief.")
    assert r.done and "tea" in (r.response or "").lower() and r.context
    streamed = list(client.generate(model=MODEL, prompt="Tell me about tea", system="Be brief.", stream=True))
    assert "".join(p.response or "" for p in streamed) == r.response
    for line in raw_lines(live_server, "/api/generate", {"model": MODEL, "prompt": "hi"}):
        strict(line, GENERATE_KEYS)


def test_embed(client: ollama.Client) -> None:
    r = client.embed(model="nomic-embed-text", input=["red apple", "green apple"])
    assert [len(v) for v in r.embeddings] == [768, 768]
    one = client.embed(model="nomic-embed-text", input="green apple", dimensions=8)
    assert len(one.embeddings[0]) == 8
    legacy = client.embeddings(model="nomic-embed-text", prompt="green apple")
    assert list(legacy.embedding) == list(r.embeddings[1])


def test_tags_and_show(client: ollama.Client) -> None:
    names = [m.model for m in client.list().models]
    assert names[:2] == ["llama3.2:latest", "qwen3:latest"] and "nomic-embed-text:latest" in names
    shown = client.show(MODEL)
    assert (
        shown.capabilities
        and "tools" in shown.capabilities
        and shown.details
        and shown.details.family == "llama"
    )


def test_errors(client: ollama.Client, live_server: str) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        client.chat(model=MODEL, messages=[{"role": "user", "content": "!MOCK_ERROR:503! hi"}])
    assert caught.value.status_code == 503 and "server busy" in caught.value.error
    bad = httpx.post(live_server + "/api/chat", json={"messages": []})
    assert (bad.status_code, bad.json()) == (400, {"error": "model is required"})


def test_stream_faults(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        list(client.chat(model=MODEL, messages=[{"role": "user", "content": "!MOCK_STREAM_ERROR:2! tea"}],
                         stream=True))  # fmt: skip
    assert caught.value.error == "an error was encountered while running the model"
    cut = list(
        client.chat(model=MODEL, messages=[{"role": "user", "content": "!MOCK_TRUNCATE:3! tea"}], stream=True)
    )
    assert len(cut) == 3 and not any(p.done for p in cut)
    with pytest.raises(json.JSONDecodeError):
        list(
            client.chat(
                model=MODEL, messages=[{"role": "user", "content": "!MOCK_MALFORMED:1! tea"}], stream=True
            )
        )
