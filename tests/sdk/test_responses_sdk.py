"""The official `openai` SDK against a real `synthgpt serve` process: the Responses API (and Azure's path).

Every client validates every body and event against the SDK's own types (`_strict_response_validation`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from pydantic import BaseModel

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


def client(base: str, **kwargs: object) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base + "/v1", api_key="sk-test", _strict_response_validation=True, max_retries=0, **kwargs
    )


@pytest.fixture
def oai(live_server: str) -> Iterator[openai.OpenAI]:
    with client(live_server) as c:
        yield c


class Forecast(BaseModel):
    city: str
    celsius: int
    sunny: bool


def test_create_text(oai: openai.OpenAI) -> None:
    r = oai.responses.create(model="gpt-4o", input="Tell me about trains", instructions="Be brief.")
    assert r.status == "completed" and r.object == "response"
    assert r.id.startswith("resp_") and len(r.id) == 53
    assert r.instructions == "Be brief."
    assert [o.type for o in r.output] == ["message"]
    assert r.output_text and r.output_text == r.output[0].content[0].text  # type: ignore[union-attr]
    assert r.usage is not None and r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    assert r._request_id is not None and r._request_id.startswith("req_")


def test_same_request_same_answer_and_stream_flag_changes_nothing(oai: openai.OpenAI) -> None:
    c = oai
    first = c.responses.create(model="gpt-4o", input="Describe budgets")
    again = c.responses.create(model="gpt-4o", input="Describe budgets")
    assert again.model_dump() == first.model_dump()
    events = list(c.responses.create(model="gpt-4o", input="Describe budgets", stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert events[-1].response.model_dump() == first.model_dump()  # type: ignore[union-attr]


def test_stream_helper_final_response(oai: openai.OpenAI) -> None:
    c = oai
    with c.responses.stream(model="gpt-4o", input="Tell me about rivers") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text
    plain = c.responses.create(model="gpt-4o", input="Tell me about rivers")
    assert (final.id, final.output_text, final.usage) == (plain.id, plain.output_text, plain.usage)


def test_tool_loop_by_replaying_history(oai: openai.OpenAI) -> None:
    c = oai
    first = c.responses.create(model="gpt-4o", input="Weather in Paris?", tools=[WEATHER_TOOL])  # type: ignore[list-item]
    (call,) = first.output
    assert call.type == "function_call" and call.name == "get_weather"
    assert call.id.startswith("fc_") and call.call_id.startswith("call_")  # type: ignore[union-attr]
    assert isinstance(json.loads(call.arguments)["city"], str)  # type: ignore[union-attr]
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "18C and sunny"},
    ]
    second = c.responses.create(model="gpt-4o", input=history, tools=[WEATHER_TOOL])  # type: ignore[arg-type,list-item]
    assert "get_weather returned: 18C and sunny" in second.output_text


def test_stream_helper_with_a_tool_call(oai: openai.OpenAI) -> None:
    c = oai
    with c.responses.stream(model="gpt-4o", input="Weather in Oslo?", tools=[WEATHER_TOOL]) as stream:  # type: ignore[list-item]
        args = "".join(e.delta for e in stream if e.type == "response.function_call_arguments.delta")
        final = stream.get_final_response()
    assert final.output[0].type == "function_call" and final.output[0].arguments == args  # type: ignore[union-attr]


def test_previous_response_id_chain(oai: openai.OpenAI) -> None:
    c = oai
    first = c.responses.create(model="gpt-4o", input="Weather in Rome?", tools=[WEATHER_TOOL])  # type: ignore[list-item]
    call = first.output[0]
    second = c.responses.create(
        model="gpt-4o",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "25C"}],  # type: ignore[union-attr]
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
    )
    assert second.previous_response_id == first.id
    assert "get_weather returned: 25C" in second.output_text
    with pytest.raises(openai.NotFoundError) as info:
        c.responses.create(model="gpt-4o", input="x", previous_response_id="resp_unknown")
    assert (info.value.status_code, info.value.param, info.value.code) == (
        404,
        "previous_response_id",
        "previous_response_not_found",
    )


def test_parse_with_a_pydantic_model(oai: openai.OpenAI) -> None:
    parsed = oai.responses.parse(model="gpt-4o", input="Forecast for Lyon", text_format=Forecast)
    assert isinstance(parsed.output_parsed, Forecast)
    assert parsed.output_parsed == Forecast.model_validate_json(parsed.output_text)
    assert parsed.text is not None and parsed.text.format.type == "json_schema"  # type: ignore[union-attr]


def test_reasoning_and_token_limit(oai: openai.OpenAI) -> None:
    c = oai
    r = c.responses.create(
        model="o4-mini", input="Think about chess", reasoning={"effort": "low", "summary": "auto"}
    )
    assert [o.type for o in r.output] == ["reasoning", "message"]
    assert r.output[0].summary[0].text  # type: ignore[union-attr]
    assert r.usage is not None and r.usage.output_tokens_details.reasoning_tokens > 0
    cut = c.responses.create(model="gpt-4o", input="Tell me a long story", max_output_tokens=16)
    assert (cut.status, cut.incomplete_details and cut.incomplete_details.reason) == (
        "incomplete",
        "max_output_tokens",
    )
    assert cut.usage is not None and cut.usage.output_tokens == 16


def test_async_client_stream(live_server: str, oai: openai.OpenAI) -> None:
    import asyncio

    async def go() -> str:
        c = openai.AsyncOpenAI(base_url=live_server + "/v1", api_key="k", _strict_response_validation=True)
        async with c.responses.stream(model="gpt-4o", input="async hello") as stream:
            final = await stream.get_final_response()
        await c.close()
        return final.output_text

    assert asyncio.run(go()) == oai.responses.create(model="gpt-4o", input="async hello").output_text


def test_azure_v1_path_with_api_key_header(live_server: str) -> None:
    with openai.AzureOpenAI(
        base_url=live_server + "/openai/v1",
        api_key="azure-key",
        api_version="preview",
        _strict_response_validation=True,
        max_retries=0,
    ) as azure:
        r = azure.responses.create(model="gpt-4o", input="Hello from Azure")
    assert r.status == "completed" and r.output_text
    raw = httpx.post(
        live_server + "/openai/v1/responses?api-version=preview",
        headers={"api-key": "azure-key"},
        json={"model": "gpt-4o", "input": "Hello from Azure"},
    )
    assert raw.status_code == 200 and raw.json() == r.model_dump(mode="json", exclude_unset=True)


def test_bad_requests_are_400_in_openai_shape(live_server: str, oai: openai.OpenAI) -> None:
    r = httpx.post(live_server + "/v1/responses", json={"model": "gpt-4o", "input": 5})
    assert r.status_code == 400
    assert r.json() == {
        "error": {
            "message": "Invalid type for 'input': expected a string or an array of input items, "
            "but got an integer instead.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "invalid_type",
        }
    }
    with pytest.raises(openai.BadRequestError) as info:
        oai.responses.create(model="gpt-4o", input=[{"type": "bogus"}])  # type: ignore[list-item]
    assert info.value.param == "input[0].type"
