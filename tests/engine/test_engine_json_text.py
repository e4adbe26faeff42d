"""JSON text written one way everywhere: tool-call history hashes the same through every API, and an answer
that is not JSON is a clear rule error, in the API's error shape, not a bare 500."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.errors import DrawError
from synthgpt.jsonutil import dumps
from synthgpt.model import ModelRequest, ToolCall
from synthgpt.server.app import create_app

ANTHROPIC = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
WEATHER_PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}}
ARGS = '{"city":"Zürich"}'

CHAT = {
    "model": "m", "max_tokens": 64,
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_PARAMS}}],
    "messages": [
        {"role": "user", "content": "Weather in Zürich?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ],
}  # fmt: skip
MESSAGES = {
    "model": "m", "max_tokens": 64,
    "tools": [{"name": "get_weather", "input_schema": WEATHER_PARAMS}],
    "messages": [
        {"role": "user", "content": "Weather in Zürich?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Zürich"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}]},
    ],
}  # fmt: skip
RESPONSES = {
    "model": "m", "max_output_tokens": 64,
    "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER_PARAMS}],
    "input": [
        {"role": "user", "content": "Weather in Zürich?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ARGS},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ],
}  # fmt: skip


def client_for(mock: MockGPT) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(mock)), base_url="http://synth")


def test_dumps_keeps_utf8_and_refuses_nan() -> None:
    assert dumps({"city": "Zürich", "n": [1, 2.5]}) == '{"city":"Zürich","n":[1,2.5]}'
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps(float("nan"))  # not JSON: refused by default since issue 11
    assert dumps(float("nan"), allow_nan=True) == "NaN"  # text never sent (a sort key)


def test_tool_call_arguments_given_as_a_dict_are_written_as_the_wire_writes_them() -> None:
    call = ToolCall.model_validate({"id": "c", "name": "f", "arguments": {"city": "Zürich"}})
    assert call.arguments == ARGS


async def test_non_ascii_tool_arguments_give_the_same_answer_through_every_api() -> None:
    mock = MockGPT(RuleSet([Rule("after-tool", m.always(), g.sentence())]), seed=7)
    async with client_for(mock) as client:
        chat = (await client.post("/v1/chat/completions", json=CHAT)).json()
        messages = (await client.post("/v1/messages", json=MESSAGES, headers=ANTHROPIC)).json()
        responses = (await client.post("/v1/responses", json=RESPONSES)).json()
    texts = [
        chat["choices"][0]["message"]["content"],
        messages["content"][0]["text"],
        responses["output"][0]["content"][0]["text"],
    ]
    assert texts[0] == texts[1] == texts[2]
    history = [r.request for r in mock.records]
    assert [h.messages[1].tool_calls[0].arguments for h in history] == [ARGS, ARGS, ARGS]
    assert len({h.fingerprint() for h in history}) == 1


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({1, 2}, "a value of type set"),
        (float("nan"), "NaN or an infinity"),
        ({"temp": float("inf")}, "NaN or an infinity"),
    ],
)
def test_an_answer_that_is_not_json_is_a_draw_error_naming_the_rule(value: Any, found: str) -> None:
    mock = MockGPT(RuleSet([Rule("bad", m.always(), g.just(value))]), seed=0)
    with pytest.raises(DrawError) as info:
        mock.generate(
            ModelRequest.from_dict({"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]})
        )
    assert str(info.value) == (
        f"rule 'bad': the answer cannot be written as JSON ({found} found); answers are made of strings, "
        "numbers, booleans, null, lists and dicts"
    )


def test_tool_arguments_that_are_not_json_name_the_tool_and_the_rule() -> None:
    mock = MockGPT(RuleSet([Rule("bad", m.always(), g.tool_call("f", {"at": g.just({1})}))]), seed=0)
    with pytest.raises(DrawError) as info:
        mock.generate(
            ModelRequest.from_dict({"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]})
        )
    assert str(info.value) == (
        "rule 'bad': the arguments of tool 'f' cannot be written as JSON (a value of type set found); "
        "answers are made of strings, numbers, booleans, null, lists and dicts"
    )


async def test_the_server_answers_a_non_json_draw_with_an_openai_shaped_rule_error() -> None:
    mock = MockGPT(RuleSet([Rule("bad", m.always(), g.just(float("nan")))]), seed=0)
    async with client_for(mock) as client:
        resp = await client.post(
            "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
    assert resp.status_code == 500
    assert resp.json() == {"error": {
        "message": "rule 'bad': the answer cannot be written as JSON (NaN or an infinity found); answers are "
                   "made of strings, numbers, booleans, null, lists and dicts",
        "type": "server_error", "param": None, "code": "rule_error",
    }}  # fmt: skip
    assert "Traceback" not in resp.text and json.loads(resp.text)["error"]["code"] == "rule_error"
