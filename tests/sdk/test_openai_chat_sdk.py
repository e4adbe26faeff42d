"""The official `openai` SDK against a real `synthgpt serve` process, with strict response validation."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pydantic
import pytest

pytestmark = pytest.mark.slow

WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
CLOCK: Any = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
}


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def client(live_server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=live_server + "/v1", api_key="sk-test", _strict_response_validation=True, max_retries=2
    ) as c:
        yield c


def triples(calls: Any) -> list[tuple[str, str, str]]:
    return [(t.id, t.function.name, t.function.arguments) for t in calls or []]


def calls_for(base: str, marker: str) -> list[dict[str, Any]]:
    """Journal records of the calls whose last user message contains `marker`."""
    return [c for c in httpx.get(base + "/_synthgpt/calls").json() if marker in c["request"]["last_user"]]


def unique(text: str) -> str:
    return f"{text} [{uuid.uuid4().hex[:8]}]"  # keeps journal lookups apart across reruns and workers


def test_create(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=user("Tell me about tides")
    )
    completion = raw.parse()
    assert raw.headers["x-request-id"] == completion._request_id
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.choices[0].finish_reason == "stop"
    assert "tides" in (completion.choices[0].message.content or "")
    assert completion.usage is not None and completion.usage.total_tokens > 0


def test_stream_carries_the_same_answer(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=user("Tell me about tides"))
    chunks = list(
        client.chat.completions.create(model="gpt-4o", messages=user("Tell me about tides"), stream=True)
    )
    assert all(c.id == plain.id for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == plain.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)


def test_include_usage_gives_a_final_usage_chunk(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=user("Tell me about tides"))
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o",
            messages=user("Tell me about tides"),
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices == []
    assert chunks[-1].usage == plain.usage


def test_stream_helper_final_completion_equals_create(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=user("Explain rainbows"), tools=[WEATHER])
    with client.chat.completions.stream(
        model="gpt-4o", messages=user("Explain rainbows"), tools=[WEATHER]
    ) as s:
        events = [e.type for e in s]
        final = s.get_final_completion()
    assert "tool_calls.function.arguments.done" in events
    got, want = final.choices[0].message, plain.choices[0].message
    assert got.tool_calls is not None and want.tool_calls is not None
    assert triples(got.tool_calls) == triples(want.tool_calls)
    assert final.id == plain.id


def test_two_round_tool_loop(client: openai.OpenAI) -> None:
    messages: list[Any] = user("What's the weather in Paris?")
    first = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[WEATHER])
    assert first.choices[0].finish_reason == "tool_calls"
    [call] = first.choices[0].message.tool_calls or []
    args = json.loads(call.function.arguments)  # type: ignore[union-attr]
    assert isinstance(args["city"], str)
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp_c": 21, "sky": "clear"}'},
    ]
    second = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[WEATHER])
    assert second.choices[0].finish_reason == "stop"
    assert 'get_weather returned: {"temp_c": 21, "sky": "clear"}' in (second.choices[0].message.content or "")


class Person(pydantic.BaseModel):
    name: str
    age: int
    hobbies: list[str]


def test_parse_with_a_pydantic_model(client: openai.OpenAI) -> None:
    completion = client.chat.completions.parse(
        model="gpt-4o", messages=user("Invent a person"), response_format=Person
    )
    person = completion.choices[0].message.parsed
    assert isinstance(person, Person)
    assert Person.model_validate_json(completion.choices[0].message.content or "") == person


def test_n_choices(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-4o", messages=user("Name a color"), n=2)
    assert [c.index for c in completion.choices] == [0, 1]
    assert completion.choices[0].message.content != completion.choices[1].message.content
    with client.chat.completions.stream(model="gpt-4o", messages=user("Name a color"), n=2) as s:
        final = s.get_final_completion()
    assert [c.message.content for c in final.choices] == [c.message.content for c in completion.choices]


def test_token_limit(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-4o", messages=user("Tell me a story"), max_tokens=5
    )
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage is not None and completion.usage.completion_tokens == 5
    with pytest.raises(openai.LengthFinishReasonError):
        client.chat.completions.parse(
            model="gpt-4o", messages=user("Invent a person"), response_format=Person, max_completion_tokens=3
        )


def test_reasoning_tokens(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="o3", messages=user("Solve it"), reasoning_effort="high"
    )
    details = completion.usage.completion_tokens_details  # type: ignore[union-attr]
    assert details is not None and details.reasoning_tokens and details.reasoning_tokens > 0


def test_bad_request_names_the_param(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="gpt-4o", messages=[])
    assert (info.value.status_code, info.value.param, info.value.type) == (
        400,
        "messages",
        "invalid_request_error",
    )
    assert info.value.request_id is not None and info.value.request_id.startswith("req_")


def test_models(client: openai.OpenAI) -> None:
    ids = [m.id for m in client.models.list()]
    assert "gpt-4o" in ids
    assert client.models.retrieve("gpt-4o").owned_by == "synthgpt"
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("nope")
    assert info.value.code == "model_not_found"


# ------------------------------------------------------------------------------------------------ triggers


def test_429_is_retried_as_the_headers_say_then_raised(client: openai.OpenAI, live_server: str) -> None:
    text = unique("hi !MOCK_ERROR:429!")
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="gpt-4o", messages=user(text))
    assert info.value.code == "rate_limit_exceeded"
    assert info.value.response.headers["retry-after-ms"] == "10"
    assert [c["request"]["retry_count"] for c in calls_for(live_server, text)] == ["0", "1", "2"]


def test_500_is_retried_then_raised(client: openai.OpenAI, live_server: str) -> None:
    text = unique("hi !MOCK_ERROR:500!")
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-4o", messages=user(text))
    assert len(calls_for(live_server, text)) == 3


def test_400_is_not_retried(client: openai.OpenAI, live_server: str) -> None:
    text = unique("hi !MOCK_ERROR:400!")
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-4o", messages=user(text))
    assert len(calls_for(live_server, text)) == 1


def test_incomplete(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-4o", messages=user("story !MOCK_INCOMPLETE!"))
    assert completion.choices[0].finish_reason == "length"


def test_truncate_ends_the_stream_quietly(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(model="gpt-4o", messages=user("story !MOCK_TRUNCATE:3!"), stream=True)
    )
    assert len(chunks) == 3
    assert chunks[-1].choices[0].finish_reason is None


def test_disconnect_is_a_connection_error(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="gpt-4o", messages=user("story !MOCK_DISCONNECT:2!"), stream=True
    )
    got = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            got.append(chunk)
    assert len(got) == 2


def test_stream_error_raises_api_error(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="gpt-4o", messages=user("story !MOCK_STREAM_ERROR!"), stream=True
    )
    with pytest.raises(openai.APIError) as info:
        list(stream)
    assert "The server had an error while processing your request." in info.value.message


def test_malformed_frame_fails_json_parsing(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="gpt-4o", messages=user("story !MOCK_MALFORMED:1!"), stream=True
    )
    with pytest.raises(json.JSONDecodeError):
        list(stream)


def test_delay_and_slow_still_answer_in_full(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=user("hi !MOCK_DELAY:30!"))
    assert plain.choices[0].finish_reason == "stop"
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o", messages=user("hi !MOCK_DELAY:30! !MOCK_SLOW:2!"), stream=True
        )
    )
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_tool_call_trigger_for_an_undeclared_tool_is_a_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="gpt-4o", messages=user("book it !MOCK_TOOL_CALL:book!"))
    assert info.value.status_code == 400
    assert info.value.body == {
        "message": "!MOCK_TOOL_CALL:book! calls a tool the request does not declare (declared: none). "
        "Declare it in `tools`, or send the header `x-synthgpt-allow-undeclared-tools: 1` to allow it.",
        "type": "invalid_request_error",
        "param": "tools",
        "code": None,
    }


def test_tool_call_trigger(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-4o", messages=user('book it !MOCK_TOOL_CALL:book:{"seats": 2}! !MOCK_SLOW:1!'),
        extra_headers={"x-synthgpt-allow-undeclared-tools": "1"},
    )
    [call] = completion.choices[0].message.tool_calls or []
    assert (call.function.name, call.function.arguments) == ("book", '{"seats":2}')  # type: ignore[union-attr]


def test_parallel_tool_calls_trigger(client: openai.OpenAI) -> None:
    both = client.chat.completions.create(
        model="gpt-4o", messages=user("all !MOCK_PARALLEL_TOOL_CALLS!"), tools=[WEATHER, CLOCK]
    )
    names = [t.function.name for t in both.choices[0].message.tool_calls or []]  # type: ignore[union-attr]
    assert names == ["get_weather", "get_time"]
    one = client.chat.completions.create(
        model="gpt-4o",
        messages=user("all !MOCK_PARALLEL_TOOL_CALLS!"),
        tools=[WEATHER, CLOCK],
        parallel_tool_calls=False,
    )
    assert len(one.choices[0].message.tool_calls or []) == 1
    with client.chat.completions.stream(
        model="gpt-4o", messages=user("all !MOCK_PARALLEL_TOOL_CALLS!"), tools=[WEATHER, CLOCK]
    ) as s:
        final = s.get_final_completion()

    assert triples(final.choices[0].message.tool_calls) == triples(both.choices[0].message.tool_calls)


def test_unknown_item_does_not_disturb_chat(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(model="gpt-4o", messages=user("x !MOCK_UNKNOWN_ITEM!"), stream=True)
    )
    assert chunks[-1].choices[0].finish_reason == "stop"


# ---------------------------------------------------------------------------------------------- other clients


def test_azure_client(live_server: str) -> None:
    with openai.AzureOpenAI(
        azure_endpoint=live_server,
        api_key="azure-key",
        api_version="2024-10-21",
        _strict_response_validation=True,
    ) as azure:
        completion = azure.chat.completions.create(
            model="my-deployment", messages=user("Tell me about tides")
        )
        assert completion.model == "my-deployment"
        chunks = list(
            azure.chat.completions.create(
                model="my-deployment", messages=user("Tell me about tides"), stream=True
            )
        )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == completion.choices[0].message.content


async def test_async_client_stream(live_server: str) -> None:
    async with openai.AsyncOpenAI(
        base_url=live_server + "/v1", api_key="k", _strict_response_validation=True
    ) as c:
        stream = await c.chat.completions.create(
            model="gpt-4o", messages=user("Tell me about tides"), stream=True
        )
        text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream])
        plain = await c.chat.completions.create(model="gpt-4o", messages=user("Tell me about tides"))
    assert text == plain.choices[0].message.content
