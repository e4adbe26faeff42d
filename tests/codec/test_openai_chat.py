"""The Chat Completions wire format (WIRE.md §2), in process: decode, body, chunk stream, errors."""

from __future__ import annotations

import json
from typing import Any

import openai.types.chat as oa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import MockGPT
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import (
    Choice,
    ErrorSpec,
    Fault,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
)

CODEC = ChatCodec()
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def decode(body: dict[str, Any], params: dict[str, str] | None = None) -> ModelRequest:
    # the cases' `!MOCK_TOOL_CALL!` triggers call tools they do not declare: allowed by the opt-in header
    headers = {"x-stainless-retry-count": "0", "x-synthgpt-allow-undeclared-tools": "1"}
    return CODEC.decode(body, headers, params or {})


def answer(body: dict[str, Any]) -> tuple[ModelRequest, ModelOutput]:
    req = decode(body)
    return req, MockGPT(seed=0).generate(req)


def chunks(req: ModelRequest, out: ModelOutput) -> list[Any]:
    return [json.loads(f.data) if f.data != "[DONE]" else "[DONE]" for f in CODEC.frames(out, req)]


def fold(events: list[Any]) -> dict[str, Any]:
    """Assemble a chat.completion from chunks the way the SDK helpers do, checking the stream rules."""
    assert events[-1] == "[DONE]"
    first = events[0]
    choices: dict[int, dict[str, Any]] = {}
    usage = None
    for ev in events[:-1]:
        assert usage is None, "the usage chunk must be the last one"
        assert ev["object"] == "chat.completion.chunk"
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            assert ev[key] == first[key]
        if not ev["choices"]:
            usage = ev["usage"]
            continue
        [c] = ev["choices"]
        delta = c["delta"]
        state = choices.setdefault(c["index"], {"role": None, "content": None, "calls": [], "finish": None})
        assert state["finish"] is None, "nothing after a choice's finish chunk"
        if "role" in delta:
            assert state["role"] is None, "role only in the first delta"
            state["role"] = delta["role"]
        assert state["role"] == "assistant"
        if delta.get("content") is not None:
            state["content"] = (state["content"] or "") + delta["content"]
        for tc in delta.get("tool_calls", ()):
            calls = state["calls"]
            if tc["index"] == len(calls):
                assert tc["function"]["arguments"] == ""
                calls.append(
                    {
                        "id": tc["id"],
                        "type": tc["type"],
                        "function": {"name": tc["function"]["name"], "arguments": ""},
                    }
                )
            else:
                assert tc["index"] == len(calls) - 1, "calls arrive in index order, one after another"
                assert set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"}
                calls[-1]["function"]["arguments"] += tc["function"]["arguments"]
        if c["finish_reason"] is not None:
            assert delta == {}
            state["finish"] = c["finish_reason"]
    body_choices = []
    for i in sorted(choices):
        s = choices[i]
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": s["content"],
            "refusal": None,
            "annotations": [],
        }
        if s["calls"]:
            msg["tool_calls"] = s["calls"]
        body_choices.append({"index": i, "message": msg, "logprobs": None, "finish_reason": s["finish"]})
    body = {k: first[k] for k in ("id", "created", "model")}
    return {
        **body,
        "object": "chat.completion",
        "choices": body_choices,
        "usage": usage,
        "service_tier": first["service_tier"],
        "system_fingerprint": first["system_fingerprint"],
    }


# ------------------------------------------------------------------------------------------------- decode


def test_decode_every_field() -> None:
    req = decode(
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Look:"},
                        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            ],
            "tools": [WEATHER],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "parallel_tool_calls": False,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "w", "schema": {"type": "object"}, "strict": True},
            },
            "stream": True,
            "stream_options": {"include_usage": True},
            "n": 2,
            "max_completion_tokens": 50,
            "reasoning_effort": "low",
            "temperature": 0.5,
            "seed": 7,
            "stop": ["\n"],
            "metadata": {"k": "v"},
        }
    )
    assert req.api == "chat"
    assert req.model == "gpt-4o"
    assert [m.role for m in req.messages] == ["developer", "user", "assistant", "tool"]
    assert req.messages[1].content == "Look:"
    assert req.messages[1].parts[1].kind == "image"
    assert req.messages[2].tool_calls[0].name == "get_weather"
    assert req.messages[3].tool_call_id == "call_1"
    assert req.tools[0].name == "get_weather" and req.tools[0].description == "Weather for a city"
    assert (req.tool_choice.mode, req.tool_choice.name) == ("named", "get_weather")
    assert req.parallel_tool_calls is False
    assert req.response_schema is not None and req.response_schema.name == "w" and req.response_schema.strict
    assert (req.stream, req.stream_options, req.n, req.max_output_tokens) == (
        True,
        {"include_usage": True},
        2,
        50,
    )
    assert req.reasoning is not None and req.reasoning.effort == "low"
    assert req.extra == {"temperature": 0.5, "seed": 7, "stop": ["\n"], "metadata": {"k": "v"}}
    assert req.header("x-stainless-retry-count") == "0"


def test_decode_small_forms() -> None:
    req = decode(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 9,
            "response_format": {"type": "json_object"},
            "reasoning_effort": "none",
            "tool_choice": "none",
            "tools": [],
        }
    )
    assert req.max_output_tokens == 9
    assert req.response_schema is not None and req.response_schema.kind == "json_object"
    assert req.reasoning is None
    assert req.tool_choice.mode == "none"


def test_decode_azure_deployment_is_the_model() -> None:
    assert (
        decode({"messages": [{"role": "user", "content": "hi"}]}, {"deployment": "my-gpt"}).model == "my-gpt"
    )
    body = {"model": "explicit", "messages": [{"role": "user", "content": "hi"}]}
    assert decode(body, {"deployment": "my-gpt"}).model == "explicit"


def test_stream_flags_do_not_change_the_answer() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "Tell me about tides"}]}
    _, plain = answer(base)
    _, streamed = answer({**base, "stream": True, "stream_options": {"include_usage": True}})
    assert plain == streamed


M = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"messages": M}, "You must provide a model parameter.", "model"),
        (
            {"model": 3, "messages": M},
            "Invalid type for 'model': expected a string, but got an integer instead.",
            "model",
        ),
        ({"model": "m"}, "Missing required parameter: 'messages'.", "messages"),
        (
            {"model": "m", "messages": "hi"},
            "Invalid type for 'messages': expected an array of objects, but got a string instead.",
            "messages",
        ),
        (
            {"model": "m", "messages": []},
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
            "array "
            "instead.",
            "messages",
        ),
        (
            {"model": "m", "messages": ["hi"]},
            "Invalid type for 'messages[0]': expected an object, but got a string instead.",
            "messages[0]",
        ),
        (
            {"model": "m", "messages": [{"content": "x"}]},
            "Missing required parameter: 'messages[0].role'.",
            "messages[0].role",
        ),
        (
            {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
            "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', "
            "'tool', and "
            "'developer'.",
            "messages[0].role",
        ),
        (
            {"model": "m", "messages": [{"role": "user"}]},
            "Missing required parameter: 'messages[0].content'.",
            "messages[0].content",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": 5}]},
            "Invalid type for 'messages[0].content': expected one of a string or array of objects, but "
            "got an "
            "integer instead.",
            "messages[0].content",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]},
            "Invalid value: 'video'. Supported values are: 'text', 'image_url', 'input_audio', 'file', and "
            "'refusal'.",
            "messages[0].content[0].type",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]},
            "Invalid type for 'messages[0].content[0].text': expected a string, but got an integer instead.",
            "messages[0].content[0].text",
        ),
        (
            {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
            "Missing required parameter: 'messages[0].tool_call_id'.",
            "messages[0].tool_call_id",
        ),
        (
            {
                "model": "m",
                "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}],
            },
            "Missing required parameter: 'messages[0].tool_calls[0].function.arguments'.",
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            {"model": "m", "messages": M, "tools": {}},
            "Invalid type for 'tools': expected an array of objects, but got an object instead.",
            "tools",
        ),
        (
            {"model": "m", "messages": M, "tools": [{"type": "function", "function": {"name": "a b"}}]},
            "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that "
            "matches the "
            "pattern '^[a-zA-Z0-9_-]{1,64}$'.",
            "tools[0].function.name",
        ),
        (
            {"model": "m", "messages": M, "tool_choice": "auto"},
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            "tool_choice",
        ),
        (
            {"model": "m", "messages": M, "tools": [WEATHER], "tool_choice": "always"},
            "Invalid value: 'always'. Supported values are: 'none', 'auto', and 'required'.",
            "tool_choice",
        ),
        (
            {
                "model": "m",
                "messages": M,
                "tools": [WEATHER],
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            },
            "Invalid value for 'tool_choice': no function named 'nope' is declared in 'tools'.",
            "tool_choice",
        ),
        (
            {"model": "m", "messages": M, "response_format": {"type": "xml"}},
            "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'.",
            "response_format.type",
        ),
        (
            {"model": "m", "messages": M, "response_format": {"type": "json_schema", "json_schema": {}}},
            "Missing required parameter: 'response_format.json_schema.name'.",
            "response_format.json_schema.name",
        ),
        (
            {"model": "m", "messages": M, "stream": "yes"},
            "Invalid type for 'stream': expected a boolean, but got a string instead.",
            "stream",
        ),
        (
            {"model": "m", "messages": M, "stream_options": {"include_usage": True}},
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        ),
        (
            {"model": "m", "messages": M, "n": 0},
            "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.",
            "n",
        ),
        (
            {"model": "m", "messages": M, "n": 129},
            "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 129 instead.",
            "n",
        ),
        (
            {"model": "m", "messages": M, "max_tokens": "10"},
            "Invalid type for 'max_tokens': expected an integer, but got a string instead.",
            "max_tokens",
        ),
        (
            {"model": "m", "messages": M, "max_completion_tokens": 0},
            "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, but got 0 "
            "instead.",
            "max_completion_tokens",
        ),
        (
            {"model": "m", "messages": M, "temperature": 3},
            "Invalid 'temperature': expected a value between 0 and 2, but got 3 instead.",
            "temperature",
        ),
        (
            {"model": "m", "messages": M, "top_logprobs": 2},
            "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.",
            "top_logprobs",
        ),
        (
            {"model": "m", "messages": M, "stop": ["a", "b", "c", "d", "e"]},
            "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array "
            "with length "
            "5 instead.",
            "stop",
        ),
        (
            {"model": "m", "messages": M, "tools": [
                {"type": "function", "function": {"name": f"f{i}"}} for i in range(129)]},
            "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array "
            "with length 129 instead.",
            "tools",
        ),
        (
            {"model": "m", "messages": M, "reasoning_effort": "huge"},
            "Invalid value: 'huge'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', and "
            "'xhigh'.",
            "reasoning_effort",
        ),
    ],
)
def test_decode_errors_name_the_param(body: dict[str, Any], message: str, param: str) -> None:
    with pytest.raises(RequestError) as info:
        decode(body)
    assert (info.value.message, info.value.param) == (message, param)


def test_decode_refuses_a_non_object_body() -> None:
    with pytest.raises(RequestError) as info:
        decode([1])  # type: ignore[arg-type]
    assert (info.value.message, info.value.param) == (
        "The request body must be a JSON object, but got an array instead.",
        None,
    )


# --------------------------------------------------------------------------------------------- body, stream


def test_text_body(openai_spec: Any, snapshot: Any) -> None:
    req, out = answer({"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]})
    body = CODEC.body(out, req)
    openai_spec("CreateChatCompletionResponse", body)
    oa.ChatCompletion.model_validate(body, strict=False)
    assert body["id"].startswith("chatcmpl-") and len(body["id"]) == 9 + 29
    assert body["system_fingerprint"].startswith("fp_") and len(body["system_fingerprint"]) == 13
    assert (
        body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    )
    assert body == snapshot


def test_tool_call_body(openai_spec: Any, snapshot: Any) -> None:
    req, out = answer(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER]}
    )
    body = CODEC.body(out, req)
    openai_spec("CreateChatCompletionResponse", body)
    message = body["choices"][0]["message"]
    assert message["content"] is None
    assert isinstance(message["tool_calls"][0]["function"]["arguments"], str)
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body == snapshot


def test_reasoning_shows_only_as_reasoning_tokens() -> None:
    req, out = answer(
        {"model": "o3", "messages": [{"role": "user", "content": "chess?"}], "reasoning_effort": "high"}
    )
    body = CODEC.body(out, req)
    reasoning = body["usage"]["completion_tokens_details"]["reasoning_tokens"]
    assert reasoning == out.usage.reasoning_tokens > 0
    assert out.reasoning not in body["choices"][0]["message"]["content"]


def test_token_limit_finishes_with_length_and_exact_usage() -> None:
    req, out = answer(
        {"model": "m", "messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 5}
    )
    body = CODEC.body(out, req)
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 5


STREAM_CASES: dict[str, dict[str, Any]] = {
    "text": {"messages": [{"role": "user", "content": "Tell me about tides"}]},
    "tool_call": {"messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER]},
    "parallel_tool_calls": {
        "messages": [{"role": "user", "content": 'go !MOCK_TOOL_CALL:a:{"x":1}! !MOCK_TOOL_CALL:b:{}!'}]
    },
    "n2_usage": {
        "messages": [{"role": "user", "content": "hi"}],
        "n": 2,
        "max_tokens": 6,
        "stream_options": {"include_usage": True},
    },
    "unicode": {
        "messages": [{"role": "user", "content": '!MOCK_TOOL_CALL:echo:{"t":"日本語 e\u0301 👍🏽"}!'}]
    },
}


@pytest.mark.parametrize("case", sorted(STREAM_CASES))
def test_stream_snapshots(case: str, sse_snapshot: Any, openai_spec: Any) -> None:
    req, out = answer({"model": "gpt-4o", "stream": True, **STREAM_CASES[case]})
    wire = plan_wire(CODEC.frames(out, req), out.stream, CODEC, out, req)
    events = chunks(req, out)
    for ev in events[:-1]:
        openai_spec("CreateChatCompletionStreamResponse", ev)
        oa.ChatCompletionChunk.model_validate(ev)
    assert fold(events) == {**CODEC.body(out, req), "usage": events[-2].get("usage")}
    assert wire.data == sse_snapshot


def test_stream_interleaves_choices_choice_zero_first() -> None:
    req, out = answer(
        {"model": "m", "stream": True, "n": 2, "messages": [{"role": "user", "content": "hi there"}]}
    )
    indices = [ev["choices"][0]["index"] for ev in chunks(req, out)[:-1]]
    assert indices[:4] == [0, 1, 0, 1]
    assert sorted(indices) == [0] * indices.count(0) + [1] * indices.count(1)


def test_no_usage_anywhere_without_include_usage() -> None:
    req, out = answer({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert all("usage" not in ev for ev in chunks(req, out)[:-1])


def test_error_frames_raise_in_the_sdk() -> None:
    req, out = answer({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    [frame] = CODEC.error_frames(Fault(kind="stream_error", message="boom"), out, req, 2)
    assert json.loads(frame.data) == {
        "error": {"message": "boom", "type": "server_error", "param": None, "code": None}
    }
    assert frame.event is None


@pytest.mark.parametrize(
    ("error", "status", "expected"),
    [
        (
            RequestError("bad", "messages"),
            400,
            {"message": "bad", "type": "invalid_request_error", "param": "messages", "code": None},
        ),
        (
            ErrorSpec(status=429),
            429,
            {
                "message": "Rate limit reached for requests. Please try again shortly.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            },
        ),
        (
            ErrorSpec(status=503, message="down"),
            503,
            {"message": "down", "type": "server_error", "param": None, "code": None},
        ),
        (
            ErrorSpec(status=401),
            401,
            {
                "message": "Incorrect API key provided.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            },
        ),
    ],
)
def test_error_bodies(error: Any, status: int, expected: dict[str, Any], openai_spec: Any) -> None:
    body = CODEC.error_body(error, status)
    assert body == {"error": expected}
    openai_spec("ErrorResponse", body)


def test_verbatim_error_body() -> None:
    assert CODEC.error_body(ErrorSpec(status=418, body={"teapot": True}), 418) == {"teapot": True}


# ------------------------------------------------------------------------------------- fold == body property

texts = st.text(max_size=40)
json_args = st.dictionaries(
    st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8)), max_size=3
).map(lambda d: json.dumps(d, ensure_ascii=False))
calls = st.builds(
    ToolCallPart,
    id=st.from_regex(r"call_[A-Za-z0-9]{4}", fullmatch=True),
    name=st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    arguments=json_args,
)


@st.composite
def choices(draw: st.DrawFn) -> Choice:
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(ReasoningPart(text=draw(texts)))
    if draw(st.booleans()):
        parts.append(TextOut(text=draw(texts)))
    parts += draw(st.lists(calls, max_size=3))
    finish = draw(st.sampled_from(["stop", "length", "tool_calls", "content_filter"]))
    return Choice(parts=tuple(parts), finish_reason=finish)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(choices(), min_size=1, max_size=3),
    st.integers(min_value=1, max_value=7),
    st.booleans(),
    st.integers(min_value=0, max_value=2**63),
)
def test_folded_stream_equals_the_body(cs: list[Choice], chunk: int, usage: bool, seed: int) -> None:
    out = ModelOutput(
        choices=tuple(cs),
        usage=Usage(prompt_tokens=3, completion_tokens=4, reasoning_tokens=1),
        stream=StreamPlan(chunk_chars=chunk),
        model="gpt-x",
        id_seed=seed,
        created=1_700_000_000,
    )
    req = ModelRequest(api="chat", stream=True, stream_options={"include_usage": usage})
    events = chunks(req, out)
    body = CODEC.body(out, req)
    folded = fold(events)
    assert folded["usage"] == (body["usage"] if usage else None)
    assert {**folded, "usage": body["usage"]} == body
