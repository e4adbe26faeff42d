"""The official `anthropic` SDK against a real `synthgpt serve` process: Messages and the models list."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import anthropic
import httpx
import pytest

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
MODEL = "claude-sonnet-4-5"


def client(base: str, **kwargs: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base, api_key="sk-ant-test", _strict_response_validation=True, max_retries=0, **kwargs
    )


@pytest.fixture
def ant(live_server: str) -> Iterator[anthropic.Anthropic]:
    with client(live_server) as c:
        yield c


def test_create_text(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model=MODEL,
        max_tokens=512,
        system="Be brief.",
        messages=[{"role": "user", "content": "Tell me about tea"}],
    )
    assert (msg.type, msg.role, msg.model, msg.stop_reason, msg.stop_sequence) == (
        "message",
        "assistant",
        MODEL,
        "end_turn",
        None,
    )
    assert msg.id.startswith("msg_01") and len(msg.id) == 28
    assert [b.type for b in msg.content] == ["text"] and msg.content[0].text  # type: ignore[union-attr]
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0
    assert msg._request_id is not None and msg._request_id.startswith("req_")


def test_both_auth_headers_and_any_version_are_accepted(live_server: str) -> None:
    body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    answers = [
        httpx.post(live_server + "/v1/messages", json=body, headers=h)
        for h in (
            {"x-api-key": "k", "anthropic-version": "2023-06-01"},
            {"authorization": "Bearer k", "anthropic-version": "2026-10-21"},
        )
    ]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].content == answers[1].content
    assert answers[0].headers["request-id"].startswith("req_")


def test_tool_use_loop(ant: anthropic.Anthropic) -> None:
    c = ant
    question = {"role": "user", "content": "Weather in Paris?"}
    first = c.messages.create(model=MODEL, max_tokens=512, tools=[WEATHER_TOOL], messages=[question])  # type: ignore[list-item]
    assert first.stop_reason == "tool_use"
    (tool_use,) = first.content
    assert tool_use.type == "tool_use" and tool_use.name == "get_weather"
    assert tool_use.id.startswith("toolu_01") and isinstance(tool_use.input["city"], str)  # type: ignore[index]
    second = c.messages.create(
        model=MODEL,
        max_tokens=512,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        messages=[
            question,  # type: ignore[list-item]
            {"role": "assistant", "content": first.content},  # type: ignore[dict-item]
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "18C"}],
            },
        ],
    )
    assert second.stop_reason == "end_turn"
    assert "get_weather returned: 18C" in second.content[0].text  # type: ignore[union-attr]


def test_tool_choice_none_answers_in_text(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model=MODEL,
        max_tokens=512,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice={"type": "none"},
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    )
    assert [b.type for b in msg.content] == ["text"] and msg.stop_reason == "end_turn"


def test_stream_helper_matches_the_message(ant: anthropic.Anthropic) -> None:
    c = ant
    kwargs: dict[str, object] = {
        "model": MODEL,
        "max_tokens": 4096,
        "tools": [WEATHER_TOOL],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    with c.messages.stream(**kwargs) as stream:  # type: ignore[arg-type]
        kinds = [e.type for e in stream]
        final = stream.get_final_message()
        assert stream.request_id is not None
    plain = c.messages.create(**kwargs)  # type: ignore[call-overload]
    assert final.model_dump() == plain.model_dump()
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    assert final.content[0].signature  # type: ignore[union-attr]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"thinking", "signature", "input_json"} <= set(kinds)


def test_max_tokens_stop_reason(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "Tell me a long story"}]
    )
    assert (msg.stop_reason, msg.usage.output_tokens) == ("max_tokens", 5)


def test_async_stream(live_server: str, ant: anthropic.Anthropic) -> None:
    async def go() -> str:
        c = anthropic.AsyncAnthropic(base_url=live_server, api_key="k", _strict_response_validation=True)
        async with c.messages.stream(
            model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "async hi"}]
        ) as stream:
            text = await stream.get_final_text()
        await c.close()
        return text

    plain = ant.messages.create(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "async hi"}]
    )
    assert asyncio.run(go()) == plain.content[0].text  # type: ignore[union-attr]


def test_missing_max_tokens_is_a_400_in_anthropic_shape(live_server: str, ant: anthropic.Anthropic) -> None:
    r = httpx.post(
        live_server + "/v1/messages",
        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
    )
    assert r.status_code == 400
    assert r.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
        "request_id": r.headers["request-id"],
    }
    with pytest.raises(anthropic.BadRequestError) as info:
        ant.messages.create(model=MODEL, max_tokens=0, messages=[{"role": "user", "content": "x"}])
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "max_tokens: Input should be greater than or equal to 1",
        },
        "request_id": info.value.request_id,
    }


def test_models_list_in_anthropic_shape(live_server: str, ant: anthropic.Anthropic) -> None:
    models = ant.models.list()
    assert [m.id for m in models.data] == ["claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"]
    assert models.data[1].display_name == "Claude Sonnet 4.5" and models.data[1].type == "model"
    assert models.has_more is False and models.first_id == "claude-opus-4-5"
    openai_shape = httpx.get(live_server + "/v1/models").json()
    assert openai_shape["object"] == "list"  # without anthropic-version the OpenAI list answers
    one = ant.models.retrieve("claude-sonnet-4-5")
    assert one.id == "claude-sonnet-4-5" and one.lifecycle == "active"


def test_unknown_path_is_a_404_in_anthropic_shape(live_server: str) -> None:
    r = httpx.post(live_server + "/v1/nope", headers={"anthropic-version": "2023-06-01"}, json={})
    assert r.status_code == 404
    assert r.json()["type"] == "error" and r.json()["error"]["type"] == "not_found_error"
