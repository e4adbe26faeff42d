"""The deprecated Chat `functions` / `function_call` request fields, as old clients and the `openai` SDK still
send them: the functions are the tools the model may call, `function_call` the choice among them, and a call
comes back as `message.function_call` with finish `function_call` (never `tool_calls`); streamed, as
`function_call` deltas (the name with empty arguments, then argument fragments). In the history, an
assistant `function_call` and a `role: "function"` result read as a tool call and its result, so rules on
tool results and turns apply. Both `functions` and `tools` is the API's 400.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import openai
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.model import Message, ToolCall
from synthgpt.server.app import create_app
from synthgpt.testing import openai_client
from synthgpt.tokens import count_tokens

WEATHER: Any = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CLOCK: Any = {"name": "get_time", "parameters": {"type": "object", "properties": {}}}
PARIS = {"city": "Paris"}
ARGS = '{"city":"Paris"}'
ASK: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
# a finished first turn: the call, its result, the answer; as an old client replays it
CALLED: Any = [
    *ASK,
    {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": ARGS}},
    {"role": "function", "name": "get_weather", "content": "sunny, 21C"},
]
USAGE_OF_CALL = count_tokens("get_weather") + count_tokens(ARGS)


def legacy_mock() -> MockGPT:
    """Fixed answers, so every value on the wire is exact: a call of get_weather while no result is back,
    an answer quoting the result once it is, plain text otherwise."""
    both = g.reply(
        text="Checking.", tool_calls=[g.tool_call("get_time", {}), g.tool_call("get_weather", PARIS)]
    )
    sunny = m.tool_result("get_weather", contains="sunny")
    return MockGPT(
        [
            Rule("text_and_calls", m.last_user(contains="time and weather"), both),
            Rule("second_turn", m.turn(2) & sunny, "Still sunny."),
            Rule("answer", m.turn(1) & sunny, "Paris is sunny, 21C."),
            Rule(
                "call",
                m.tool_named("get_weather") & ~m.tool_choice("none"),
                g.tool_call("get_weather", PARIS),
            ),
            Rule("text", m.always(), "No call needed."),
        ],
        seed=0,
    )


@pytest.fixture
def mock() -> MockGPT:
    return legacy_mock()


@pytest.fixture
def oai(mock: MockGPT) -> Iterator[openai.OpenAI]:
    with openai_client(mock, _strict_response_validation=True) as c:
        yield c


@pytest.fixture
async def raw(mock: MockGPT) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(mock))
    async with httpx.AsyncClient(transport=transport, base_url="http://synth") as c:
        yield c


def chat(messages: list[dict[str, Any]] = ASK, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": messages, **extra}


def sse_events(text: str) -> list[Any]:
    out: list[Any] = []
    for frame in text.split("\n\n"):
        if frame.startswith("data: "):
            data = frame[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def bad_request(message: str, param: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


# ----------------------------------------------------------------------------------------- the wire, exact


async def test_a_call_is_message_function_call_with_finish_function_call(
    raw: httpx.AsyncClient, openai_spec: Any
) -> None:
    r = await raw.post("/v1/chat/completions", json=chat(functions=[WEATHER], function_call="auto"))
    assert r.status_code == 200
    body = r.json()
    openai_spec("CreateChatCompletionResponse", body)
    assert body["choices"] == [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "function_call": {"name": "get_weather", "arguments": ARGS},
            },
            "logprobs": None,
            "finish_reason": "function_call",
        }
    ]
    assert body["usage"]["completion_tokens"] == USAGE_OF_CALL


async def test_the_stream_sends_function_call_deltas(raw: httpx.AsyncClient, openai_spec: Any) -> None:
    r = await raw.post(
        "/v1/chat/completions",
        json=chat(functions=[WEATHER], stream=True, stream_options={"include_usage": True}),
    )
    assert r.status_code == 200
    events = sse_events(r.text)
    assert events[-1] == "[DONE]"
    for ev in events[:-1]:
        openai_spec("CreateChatCompletionStreamResponse", ev)
    choices = [ev["choices"] for ev in events[:-2]]
    assert [(c[0]["delta"], c[0]["finish_reason"]) for c in choices] == [
        (
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": ""},
                "refusal": None,
            },
            None,
        ),
        # four characters a delta: the default stream plan
        ({"function_call": {"arguments": '{"ci'}}, None),
        ({"function_call": {"arguments": 'ty":'}}, None),
        ({"function_call": {"arguments": '"Par'}}, None),
        ({"function_call": {"arguments": 'is"}'}}, None),
        ({}, "function_call"),
    ]
    assert events[-2]["choices"] == []
    assert events[-2]["usage"]["completion_tokens"] == USAGE_OF_CALL


async def test_text_then_one_call_keeps_the_first_call_only(raw: httpx.AsyncClient) -> None:
    # The deprecated shape holds one call: a rule drawing two answers with the first, as a legacy model
    # never made parallel calls.
    ask = [{"role": "user", "content": "time and weather please"}]
    body = (await raw.post("/v1/chat/completions", json=chat(ask, functions=[CLOCK, WEATHER]))).json()
    [choice] = body["choices"]
    assert choice["message"]["content"] == "Checking."
    assert choice["message"]["function_call"] == {"name": "get_time", "arguments": "{}"}
    assert "tool_calls" not in choice["message"]
    assert choice["finish_reason"] == "function_call"

    r = await raw.post("/v1/chat/completions", json=chat(ask, functions=[CLOCK, WEATHER], stream=True))
    deltas = [ev["choices"][0]["delta"] for ev in sse_events(r.text)[:-1]]
    assert deltas == [
        {"role": "assistant", "content": "", "refusal": None},
        {"content": "Chec"},
        {"content": "king"},
        {"content": "."},
        {"function_call": {"name": "get_time", "arguments": ""}},
        {"function_call": {"arguments": "{}"}},
        {},
    ]


# -------------------------------------------------------------------------------------------- via the SDK


def test_sdk_create_stream_and_helper_agree(oai: openai.OpenAI) -> None:
    done = oai.chat.completions.create(
        model="gpt-4o",
        messages=ASK,
        functions=[WEATHER],
    )
    [choice] = done.choices
    assert choice.finish_reason == "function_call"
    assert choice.message.function_call is not None
    assert (choice.message.function_call.name, choice.message.function_call.arguments) == (
        "get_weather",
        ARGS,
    )
    assert (choice.message.content, choice.message.tool_calls) == (None, None)

    chunks = list(
        oai.chat.completions.create(
            model="gpt-4o",
            messages=ASK,
            functions=[WEATHER],
            stream=True,
        )
    )
    named = [c.choices[0].delta.function_call.name for c in chunks if c.choices[0].delta.function_call]
    assert named == ["get_weather", None, None, None, None]
    arguments = "".join(
        c.choices[0].delta.function_call.arguments or "" for c in chunks if c.choices[0].delta.function_call
    )
    assert arguments == ARGS
    assert all(c.choices[0].delta.tool_calls is None for c in chunks)
    assert [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason] == ["function_call"]

    with oai.chat.completions.stream(
        model="gpt-4o",
        messages=ASK,
        functions=[WEATHER],
    ) as s:
        final = s.get_final_completion()
    assert final.choices[0].finish_reason == "function_call"
    assert final.choices[0].message.function_call is not None
    assert final.choices[0].message.function_call.model_dump() == {"name": "get_weather", "arguments": ARGS}
    assert final.choices[0].message.tool_calls is None
    assert final.id == done.id


def test_sdk_function_call_none_answers_with_text(oai: openai.OpenAI) -> None:
    done = oai.chat.completions.create(
        model="gpt-4o",
        messages=ASK,
        functions=[WEATHER],
        function_call="none",
    )
    [choice] = done.choices
    assert (choice.message.content, choice.finish_reason, choice.message.function_call) == (
        "No call needed.",
        "stop",
        None,
    )


def test_sdk_named_function_call_is_a_forced_tool_choice(oai: openai.OpenAI, mock: MockGPT) -> None:
    done = oai.chat.completions.create(
        model="gpt-4o",
        messages=ASK,
        functions=[CLOCK, WEATHER],
        function_call={"name": "get_weather"},
    )
    assert done.choices[0].finish_reason == "function_call"
    [record] = mock.records
    req = record.request
    assert (req.tool_choice.mode, req.tool_choice.name) == ("named", "get_weather")
    assert [(t.name, t.description, t.parameters) for t in req.tools] == [
        ("get_time", "", CLOCK["parameters"]),
        ("get_weather", WEATHER["description"], WEATHER["parameters"]),
    ]
    assert req.parallel_tool_calls is False  # a legacy answer holds one call


def test_builtin_rules_call_the_function_and_stay_deterministic() -> None:
    with openai_client(MockGPT(seed=0), _strict_response_validation=True) as c:
        answers = [
            c.chat.completions.create(
                model="gpt-4o",
                messages=ASK,
                functions=[WEATHER],
                function_call={"name": "get_weather"},
            )
            for _ in range(2)
        ]
    assert answers[0].model_dump() == answers[1].model_dump()
    call = answers[0].choices[0].message.function_call
    assert call is not None and call.name == "get_weather"
    args = json.loads(call.arguments)
    assert list(args) == ["city"] and isinstance(args["city"], str)
    assert answers[0].choices[0].finish_reason == "function_call"


# ------------------------------------------------------------------------------------------ the history


def test_function_result_in_the_history_is_a_tool_result(oai: openai.OpenAI, mock: MockGPT) -> None:
    done = oai.chat.completions.create(
        model="gpt-4o",
        messages=CALLED,
        functions=[WEATHER],
    )
    assert (done.choices[0].message.content, done.choices[0].finish_reason) == (
        "Paris is sunny, 21C.",
        "stop",
    )
    [record] = mock.records
    assert record.rule == "answer"
    req = record.request
    # the call carries no id on the wire: the function's name links it to its result
    assert req.messages[1:] == (
        Message(
            role="assistant", tool_calls=(ToolCall(id="get_weather", name="get_weather", arguments=ARGS),)
        ),
        Message(role="tool", content="sunny, 21C", tool_call_id="get_weather", name="get_weather"),
    )
    assert [req.tool_result_name(t) for t in req.tool_results] == ["get_weather"]
    assert req.turn == 1


def test_a_second_turn_counts_the_turns_and_reads_the_first_turns_call(
    oai: openai.OpenAI, mock: MockGPT
) -> None:
    history = [
        *CALLED,
        {"role": "assistant", "content": "Paris is sunny, 21C."},
        {"role": "user", "content": "And now?"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": ARGS}},
        {"role": "function", "name": "get_weather", "content": "sunny still"},
    ]
    done = oai.chat.completions.create(
        model="gpt-4o",
        messages=history,
        functions=[WEATHER],
    )
    assert done.choices[0].message.content == "Still sunny."
    [record] = mock.records
    assert (record.rule, record.request.turn, len(record.request.tool_results)) == ("second_turn", 2, 1)


# ---------------------------------------------------------------------------------------------- refusals

BOTH = bad_request(
    "Invalid request: 'functions' and 'tools' cannot both be provided. 'functions' are deprecated; use the "
    "'tools' parameter instead.",
    None,
)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"functions": [WEATHER], "tools": [{"type": "function", "function": WEATHER}]}, BOTH),
        (
            {"function_call": "auto"},
            bad_request(
                "Invalid value for 'function_call': 'function_call' is only allowed when 'functions' are "
                "specified.",
                "function_call",
            ),
        ),
        (
            {"functions": [WEATHER], "function_call": "required"},
            bad_request(
                "Invalid value: 'required'. Supported values are: 'none', and 'auto'.", "function_call"
            ),
        ),
        (
            {"functions": [WEATHER], "function_call": {"name": "get_time"}},
            bad_request(
                "Invalid value for 'function_call': no function named 'get_time' is declared in 'functions'.",
                "function_call",
            ),
        ),
        (
            {"functions": [WEATHER], "function_call": {}},
            bad_request("Missing required parameter: 'function_call.name'.", "function_call.name"),
        ),
        (
            {"functions": [WEATHER], "function_call": 3},
            bad_request(
                "Invalid type for 'function_call': expected one of a string or object, but got an integer "
                "instead.",
                "function_call",
            ),
        ),
        (
            {"functions": []},
            bad_request(
                "Invalid 'functions': empty array. Expected an array with minimum length 1, but got an empty "
                "array instead.",
                "functions",
            ),
        ),
        (
            {"functions": {"name": "get_weather"}},
            bad_request(
                "Invalid type for 'functions': expected an array of objects, but got an object instead.",
                "functions",
            ),
        ),
        (
            {"functions": [{"description": "no name"}]},
            bad_request("Missing required parameter: 'functions[0].name'.", "functions[0].name"),
        ),
        (
            {"functions": [{"name": "get weather"}]},
            bad_request(
                "Invalid 'functions[0].name': string does not match pattern. Expected a string that matches "
                "the pattern '^[a-zA-Z0-9_-]{1,64}$'.",
                "functions[0].name",
            ),
        ),
        (
            {"functions": [WEATHER], "tool_choice": "auto"},
            bad_request(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                "tool_choice",
            ),
        ),
    ],
)
async def test_bad_legacy_fields_are_the_apis_400(
    raw: httpx.AsyncClient, extra: dict[str, Any], expected: dict[str, Any]
) -> None:
    r = await raw.post("/v1/chat/completions", json=chat(**extra))
    assert (r.status_code, r.json()) == (400, expected)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}}
                ],
            },
            bad_request(
                "Invalid parameter: 'tool_calls' cannot be used when 'functions' are present. Please use "
                "'tools' instead of 'functions'.",
                "messages.[1].tool_calls",
            ),
        ),
        (
            {"role": "assistant", "function_call": {"name": "get_weather"}},
            bad_request(
                "Missing required parameter: 'messages[1].function_call.arguments'.",
                "messages[1].function_call.arguments",
            ),
        ),
        (
            {"role": "assistant", "function_call": "get_weather"},
            bad_request(
                "Invalid type for 'messages[1].function_call': expected an object, but got a string instead.",
                "messages[1].function_call",
            ),
        ),
        (
            {"role": "function", "content": "sunny"},
            bad_request("Missing required parameter: 'messages[1].name'.", "messages[1].name"),
        ),
    ],
)
async def test_bad_legacy_history_is_the_apis_400(
    raw: httpx.AsyncClient, message: dict[str, Any], expected: dict[str, Any]
) -> None:
    r = await raw.post("/v1/chat/completions", json=chat([*ASK, message], functions=[WEATHER]))
    assert (r.status_code, r.json()) == (400, expected)


def test_sdk_sees_the_refusal_of_functions_with_tools(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(
            model="gpt-4o",
            messages=ASK,
            functions=[WEATHER],
            tools=[{"type": "function", "function": WEATHER}],
        )
    assert info.value.status_code == 400
    assert info.value.body == BOTH["error"]
