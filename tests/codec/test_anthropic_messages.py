"""The Anthropic Messages wire format (WIRE.md §4), in process: decode, message, event stream, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.anthropic.encode import MessagesCodec, anthropic_model_info, anthropic_models_page
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import ErrorSpec, Fault, ModelOutput, ModelRequest, StreamPlan, ToolCall

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
HEADERS = {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01", "content-type": "application/json"}


def make_mock() -> MockGPT:
    return MockGPT(
        seed=11,
        rules=RuleSet(
            [
                Rule(
                    "weather",
                    m.has_tools() & ~m.has_tool_result(last=True),
                    g.reply(text="Let me check.", tool_calls=[g.tool_call("get_weather", {"city": "Paris"})]),
                ),
                Rule("after_tool", m.has_tool_result(last=True), g.just("It is sunny.")),
                Rule(
                    "long", m.last_user(contains="essay"), g.just("one two three four five six seven eight")
                ),
                Rule("text", m.always(), g.just("Hello, world!")),
            ]
        ),
    )


def body_of(**extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "messages": [{"role": "user", "content": "Hi"}],
        **extra,
    }


def run(body: dict[str, Any]) -> tuple[MessagesCodec, ModelRequest, ModelOutput]:
    codec = MessagesCodec()
    request = codec.decode(body, HEADERS, {})
    return codec, request, make_mock().generate(request)


def events_of(codec: MessagesCodec, request: ModelRequest, output: ModelOutput) -> list[dict[str, Any]]:
    frames = codec.frames(output, request)
    events = [json.loads(f.data) for f in frames]
    assert [f.event for f in frames] == [e["type"] for e in events]  # the SDKs route on the `event:` line
    return events


# ------------------------------------------------------------------------------------------------- decode


def test_decode_full_request() -> None:
    body = body_of(
        system=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "18C"}],
                    },
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
        tools=[WEATHER_TOOL, {"type": "web_search_20250305", "name": "web_search"}],
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
        thinking={"type": "enabled", "budget_tokens": 1024},
        stream=True,
        temperature=0.5,
        stop_sequences=["END"],
    )
    req = MessagesCodec().decode(body, {**HEADERS, "Authorization": "Bearer sk"}, {})
    assert req.api == "messages" and req.model == "claude-sonnet-4-5"
    assert [(x.role, x.content) for x in req.messages] == [
        ("system", "Be brief.\nBe kind."),
        ("user", "Weather in Paris?"),
        ("assistant", "Checking."),
        ("tool", "18C"),
        ("user", "And tomorrow?"),
    ]
    assert req.messages[2].tool_calls == (
        ToolCall(id="toolu_1", name="get_weather", arguments='{"city":"Paris"}'),
    )
    assert (req.messages[3].tool_call_id, req.messages[3].name) == ("toolu_1", "get_weather")
    assert [t.name for t in req.tools] == ["get_weather"]  # server tools are the provider's business
    assert req.tools[0].parameters == WEATHER_TOOL["input_schema"]
    assert (req.tool_choice.mode, req.parallel_tool_calls) == ("required", False)
    assert req.reasoning is not None and req.reasoning.budget_tokens == 1024
    assert (req.max_output_tokens, req.stream) == (2048, True)
    assert req.extra == {"temperature": 0.5, "stop_sequences": ["END"]}
    assert dict(req.headers) == {"anthropic-version": "2023-06-01", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("choice", "mode", "name"),
    [
        ({"type": "auto"}, "auto", None),
        ({"type": "none"}, "none", None),
        ({"type": "tool", "name": "get_weather"}, "named", "get_weather"),
    ],
)
def test_decode_tool_choice(choice: dict[str, Any], mode: str, name: str | None) -> None:
    req = MessagesCodec().decode(body_of(tools=[WEATHER_TOOL], tool_choice=choice), HEADERS, {})
    assert (req.tool_choice.mode, req.tool_choice.name) == (mode, name)


@pytest.mark.parametrize(
    ("change", "message", "param"),
    [
        ({"max_tokens": None}, "max_tokens: Field required", "max_tokens"),
        ({"max_tokens": "10"}, "max_tokens: Input should be a valid integer", "max_tokens"),
        ({"model": None}, "model: Field required", "model"),
        ({"messages": []}, "messages: at least one message is required", "messages"),
        (
            {"messages": [{"role": "system", "content": "x"}]},
            "messages.0.role: Input should be 'user' or 'assistant'",
            "messages.0.role",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
            "messages.0.content.0.tool_use_id: Field required",
            "messages.0.content.0.tool_use_id",
        ),
        ({"tools": [{"name": "x"}]}, "tools.0.input_schema: Field required", "tools.0.input_schema"),
        (
            {"tool_choice": {"type": "maybe"}},
            "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
            "tool_choice.type",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 100}},
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
            "thinking.enabled.budget_tokens",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 4096}},
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
            "max_tokens",
        ),
        ({"system": 5}, "system: Input should be a valid string or a list of text blocks", "system"),
    ],
)
def test_decode_errors(change: dict[str, Any], message: str, param: str) -> None:
    body = {k: v for k, v in {**body_of(), **change}.items() if v is not None}
    with pytest.raises(RequestError) as info:
        MessagesCodec().decode(body, HEADERS, {})
    assert (info.value.message, info.value.param) == (message, param)


# ---------------------------------------------------------------------------------------------- messages


def test_message_body(anthropic_spec: Any) -> None:
    codec, req, out = run(body_of(tools=[WEATHER_TOOL]))
    body = codec.body(out, req)
    anthropic_spec("Message", body)
    assert body["id"].startswith("msg_01") and len(body["id"]) == 4 + 24
    tool_use = body["content"][1]
    assert tool_use["id"].startswith("toolu_01") and len(tool_use["id"]) == 6 + 24
    assert body == {
        "id": body["id"],
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": tool_use["id"], "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": out.usage.prompt_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": out.usage.completion_tokens,
            "service_tier": "standard",
        },
    }


def test_thinking_message_snapshot(snapshot: Any, anthropic_spec: Any) -> None:
    codec, req, out = run(body_of(thinking={"type": "enabled", "budget_tokens": 1024}))
    body = codec.body(out, req)
    anthropic_spec("Message", body)
    assert [b["type"] for b in body["content"]] == ["thinking", "text"]
    assert body["content"][0]["signature"] == out.parts[0].signature  # type: ignore[union-attr]
    assert body == snapshot.use_extension(JSONSnapshotExtension)


def test_max_tokens_cut() -> None:
    codec, req, out = run(body_of(max_tokens=2, messages=[{"role": "user", "content": "an essay"}]))
    body = codec.body(out, req)
    assert (body["stop_reason"], body["content"], body["usage"]["output_tokens"]) == (
        "max_tokens",
        [{"type": "text", "text": "one two"}],
        2,
    )
    assert events_of(codec, req, out)[-2]["delta"]["stop_reason"] == "max_tokens"


# ------------------------------------------------------------------------------------------------ stream


def test_text_stream(anthropic_spec: Any) -> None:
    codec, req, out = run(body_of(stream=True))
    events = events_of(codec, req, out)
    for e in events:
        anthropic_spec("RawMessageStreamEvent", e) if e["type"] != "ping" else None
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * 4,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0]["message"]
    assert (start["content"], start["stop_reason"], start["usage"]["output_tokens"]) == ([], None, 1)
    assert start["usage"]["input_tokens"] == out.usage.prompt_tokens
    assert events[1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert [e["delta"]["text"] for e in events[3:7]] == ["Hell", "o, w", "orld", "!"]
    assert events[-2] == {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {
            "input_tokens": out.usage.prompt_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": out.usage.completion_tokens,
        },
    }
    assert events[-1] == {"type": "message_stop"}
    assert codec.frames(out, req)[-1].terminal


def test_thinking_and_tool_stream(anthropic_spec: Any) -> None:
    codec, req, out = run(body_of(tools=[WEATHER_TOOL], thinking={"type": "enabled", "budget_tokens": 1024}))
    events = events_of(codec, req, out)
    for e in events:
        if e["type"] != "ping":
            anthropic_spec("RawMessageStreamEvent", e)
    starts = [(e["index"], e["content_block"]["type"]) for e in events if e["type"] == "content_block_start"]
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert starts == [(0, "thinking"), (1, "text"), (2, "tool_use")] and stops == [0, 1, 2]
    # blocks never interleave: every delta belongs to the block started last and not yet stopped
    open_block = None
    for e in events:
        if e["type"] == "content_block_start":
            assert open_block is None
            open_block = e["index"]
        elif e["type"] == "content_block_delta":
            assert e["index"] == open_block
        elif e["type"] == "content_block_stop":
            assert e["index"] == open_block
            open_block = None
    thinking = [e["delta"] for e in events if e.get("index") == 0 and e["type"] == "content_block_delta"]
    assert [d["type"] for d in thinking][-1] == "signature_delta"  # once, right before the block stops
    assert sum(d["type"] == "signature_delta" for d in thinking) == 1
    assert "".join(d.get("thinking", "") for d in thinking) == out.reasoning
    assert events[0]["message"]["content"] == []
    assert next(e for e in events if e["type"] == "content_block_start" and e["index"] == 0)[
        "content_block"
    ] == {
        "type": "thinking",
        "thinking": "",
        "signature": "",
    }
    tool_start = next(e for e in events if e["type"] == "content_block_start" and e["index"] == 2)
    assert tool_start["content_block"]["input"] == {}
    pieces = [
        e["delta"]["partial_json"]
        for e in events
        if e.get("index") == 2 and e["type"] == "content_block_delta"
    ]
    assert len(pieces) > 1 and json.loads("".join(pieces)) == {"city": "Paris"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_stream_error_event(anthropic_spec: Any) -> None:
    codec, req, out = run(body_of(stream=True))
    wire = plan_wire(
        codec.frames(out, req), StreamPlan(faults=(Fault(kind="stream_error", after=4),)), codec, out, req
    )
    assert [f.event for f in wire.frames] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "error",
    ]
    error = json.loads(wire.frames[-1].data)
    assert error == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    anthropic_spec("ErrorResponse", error)
    custom = codec.error_frames(Fault(kind="stream_error", message="too busy"), out, req, 0)
    assert json.loads(custom[0].data)["error"]["message"] == "too busy"


def test_unknown_item_fault_is_ignored() -> None:
    codec, req, _ = run(body_of())
    plain = make_mock().generate(req)
    faulty = plain.model_copy(update={"stream": StreamPlan(faults=(Fault(kind="unknown_item"),))})
    assert codec.body(faulty, req) == codec.body(plain, req)
    assert [f.data for f in codec.frames(faulty, req)] == [f.data for f in codec.frames(plain, req)]


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("status", "etype", "message"),
    [
        (400, "invalid_request_error", "Invalid request."),
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "Your API key does not have permission to use the specified resource."),
        (404, "not_found_error", "The requested resource could not be found."),
        (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
        (500, "api_error", "Internal server error"),
        (503, "api_error", "Internal server error"),
        (504, "timeout_error", "Request timed out."),
        (529, "overloaded_error", "Overloaded"),
    ],
)
def test_error_body_types(status: int, etype: str, message: str, anthropic_spec: Any) -> None:
    body = MessagesCodec().error_body(ErrorSpec(status=status), status)
    assert body == {"type": "error", "error": {"type": etype, "message": message}, "request_id": None}
    anthropic_spec("ErrorResponse", body)


def test_error_body_from_request_error_and_overrides() -> None:
    codec = MessagesCodec()
    assert codec.error_body(RequestError("max_tokens: Field required", "max_tokens"), 400) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
        "request_id": None,  # the server fills in the request id
    }
    assert codec.error_body(ErrorSpec(status=429, type="requests", message="slow"), 429)["error"] == {
        "type": "rate_limit_error",
        "message": "slow",  # an OpenAI type is not an Anthropic one
    }
    assert codec.error_body(ErrorSpec(status=400, body={"custom": True}), 400) == {"custom": True}
    assert codec.response_headers("req_1", 5) == {
        "request-id": "req_1",
        "anthropic-organization-id": "synthgpt",
    }


def test_models_page(anthropic_spec: Any) -> None:
    ids = ["claude-a-1", "claude-b-2", "claude-c-3"]
    page = anthropic_models_page(ids, {"limit": "2"})
    assert [d["id"] for d in page["data"]] == ["claude-a-1", "claude-b-2"]
    assert (page["has_more"], page["first_id"], page["last_id"]) == (True, "claude-a-1", "claude-b-2")
    rest = anthropic_models_page(ids, {"after_id": "claude-b-2"})
    assert ([d["id"] for d in rest["data"]], rest["has_more"]) == (["claude-c-3"], False)
    info = anthropic_model_info("claude-sonnet-4-5")
    anthropic_spec("ModelInfo", info)
    assert info == {
        "type": "model",
        "id": "claude-sonnet-4-5",
        "display_name": "Claude Sonnet 4.5",
        "created_at": "2025-02-19T00:00:00Z",
        "lifecycle": "active",
    }


def test_stream_bytes_snapshot(sse_snapshot: Any) -> None:
    codec, req, out = run(
        body_of(tools=[WEATHER_TOOL], thinking={"type": "enabled", "budget_tokens": 1024}, stream=True)
    )
    out = out.model_copy(update={"stream": StreamPlan(chunk_chars=16)})
    wire = plan_wire(codec.frames(out, req), out.stream, codec, out, req)
    assert wire.data == sse_snapshot


def test_decode_structured_output_and_adaptive_thinking() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    req = MessagesCodec().decode(
        body_of(
            output_config={"format": {"type": "json_schema", "schema": schema}}, thinking={"type": "adaptive"}
        ),
        HEADERS,
        {},
    )
    assert req.response_schema is not None and req.response_schema.schema_ == schema
    assert req.reasoning is not None and req.reasoning.effort == "adaptive"
    assert MessagesCodec().decode(body_of(thinking={"type": "disabled"}), HEADERS, {}).reasoning is None
    out = MockGPT(seed=1).generate(req)  # the built-in rules answer with a document valid against the schema
    body = MessagesCodec().body(out, req)
    assert [b["type"] for b in body["content"]] == ["thinking", "text"]
    assert isinstance(json.loads(body["content"][1]["text"])["city"], str)
