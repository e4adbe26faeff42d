"""The official `cohere` client (`ClientV2`) against a real `synthgpt serve` process: `/v2/chat`.

Cohere's client types accept unknown fields, so the raw answers are also checked key by key against the
fields of the v2 chat reference (`strict`), and each stream event against its documented shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import cohere
import httpx
import pytest

MODEL = "command-a-03-2025"
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
EVENT_KEYS = {
    "message-start": {"type", "id", "delta"},
    "content-start": {"type", "index", "delta"},
    "content-delta": {"type", "index", "delta"},
    "content-end": {"type", "index"},
    "tool-plan-delta": {"type", "delta"},
    "tool-call-start": {"type", "index", "delta"},
    "tool-call-delta": {"type", "index", "delta"},
    "tool-call-end": {"type", "index"},
    "message-end": {"type", "delta"},
}


@pytest.fixture
def co(live_server: str) -> Iterator[cohere.ClientV2]:
    with httpx.Client() as http:
        yield cohere.ClientV2(api_key="k", base_url=live_server, httpx_client=http)


def strict(body: dict[str, Any]) -> None:
    assert set(body) == {"id", "message", "finish_reason", "usage"}
    assert set(body["message"]) <= {"role", "content", "tool_plan", "tool_calls", "citations"}
    assert set(body["usage"]) <= {"billed_units", "tokens", "cached_tokens"}


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def test_chat(co: cohere.ClientV2, live_server: str) -> None:
    r = co.chat(model=MODEL, messages=user("Tell me about tea"))
    assert r.finish_reason == "COMPLETE" and r.message.content
    text = r.message.content[0]
    assert text.type == "text" and "tea" in text.text.lower()  # type: ignore[union-attr]
    assert r.usage and r.usage.tokens and r.usage.tokens.input_tokens and r.usage.tokens.output_tokens
    raw = httpx.post(live_server + "/v2/chat", json={"model": MODEL, "messages": user("Tell me about tea")})
    strict(raw.json())
    assert raw.json()["id"] == r.id and len(r.id) == 36


def test_stream_folds_to_the_answer(co: cohere.ClientV2, live_server: str) -> None:
    events = list(co.chat_stream(model=MODEL, messages=user("Tell me about tea")))
    whole = co.chat(model=MODEL, messages=user("Tell me about tea"))
    assert [e.type for e in events[:2]] == ["message-start", "content-start"] and events[
        -1
    ].type == "message-end"
    text = "".join(e.delta.message.content.text or "" for e in events if e.type == "content-delta")  # type: ignore[union-attr]
    assert text == whole.message.content[0].text  # type: ignore[index, union-attr]
    raw = httpx.post(live_server + "/v2/chat", json={"model": MODEL, "stream": True, "messages": user("hi")})
    assert raw.headers["content-type"].startswith("text/event-stream")
    for block in raw.text.strip().split("\n\n"):
        name, data = block.split("\n")
        event = json.loads(data.removeprefix("data: "))
        assert name == "event: " + event["type"] and set(event) == EVENT_KEYS[event["type"]]


def test_tools_loop(co: cohere.ClientV2) -> None:
    first = co.chat(model=MODEL, messages=user("What is the weather in Paris?"), tools=TOOLS)
    assert first.finish_reason == "TOOL_CALL"
    (call,) = first.message.tool_calls or []
    assert call.function and call.function.name == "get_weather"
    assert json.loads(call.function.arguments or "") == {"city": "Paris"} and call.id.startswith(
        "get_weather_"
    )
    document = {"type": "document", "document": {"data": json.dumps({"sky": "sunny"})}}
    result = {"role": "tool", "tool_call_id": call.id, "content": [document]}
    second = co.chat(
        model=MODEL, messages=[*user("What is the weather in Paris?"), first.message, result], tools=TOOLS
    )
    assert second.finish_reason == "COMPLETE" and "sunny" in second.message.content[0].text  # type: ignore[index, union-attr]
    streamed = list(co.chat_stream(model=MODEL, messages=user("What is the weather in Paris?"), tools=TOOLS))
    args = "".join(
        e.delta.message.tool_calls.function.arguments or "" for e in streamed if e.type == "tool-call-delta"
    )  # type: ignore[union-attr]
    assert json.loads(args) == {"city": "Paris"}


def test_structured_output(co: cohere.ClientV2) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
              "required": ["name", "age"]}  # fmt: skip
    r = co.chat(
        model=MODEL, messages=user("A person"), response_format={"type": "json_object", "json_schema": schema}
    )
    doc = json.loads(r.message.content[0].text)  # type: ignore[index, union-attr]
    assert list(doc) == ["name", "age"] and isinstance(doc["age"], int)


def test_thinking(co: cohere.ClientV2) -> None:
    r = co.chat(model=MODEL, messages=user("Why is the sky blue?"), thinking={"type": "enabled"})
    assert [c.type for c in r.message.content or []] == ["thinking", "text"]


def test_errors(co: cohere.ClientV2, live_server: str) -> None:
    with pytest.raises(cohere.errors.ServiceUnavailableError) as caught:
        co.chat(model=MODEL, messages=user("!MOCK_ERROR:503! hi"), request_options={"max_retries": 0})
    assert (
        caught.value.status_code == 503
        and caught.value.body["message"] == "service unavailable (synthgpt trigger !MOCK_ERROR:503!)"
    )
    bad = httpx.post(live_server + "/v2/chat", json={"model": MODEL, "messages": []})
    assert (
        bad.status_code == 400
        and bad.json()["message"] == "invalid request: messages must be a non-empty array"
    )


def test_mid_stream_error_ends_the_message(co: cohere.ClientV2) -> None:
    events = list(co.chat_stream(model=MODEL, messages=user("!MOCK_STREAM_ERROR:3! Tell me about tea")))
    assert len(events) == 4 and events[-1].type == "message-end"
    assert events[-1].delta.finish_reason == "ERROR" and events[-1].delta.error  # type: ignore[union-attr]
