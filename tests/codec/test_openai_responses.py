"""The Responses wire format (WIRE.md §3), in process: decode, body, event stream, faults, errors, store."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.openai_responses.encode import UNKNOWN_ITEM_TYPE, ResponseNotFound, ResponsesCodec
from synthgpt.codec.openai_responses.store import ResponseStore
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import ErrorSpec, Fault, Message, ModelOutput, ModelRequest, StreamPlan, ToolCall
from tests.codec._support import EVENT_SCHEMAS

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


def make_mock() -> MockGPT:
    return MockGPT(
        seed=7,
        rules=RuleSet(
            [
                Rule(
                    "weather",
                    m.has_tools() & ~m.has_tool_result(last=True),
                    g.reply(text="Let me check.", tool_calls=[g.tool_call("get_weather", {"city": "Paris"})]),
                ),
                Rule("after_tool", m.has_tool_result(last=True), g.just("It is sunny in Paris.")),
                Rule(
                    "think",
                    m.wants_reasoning(),
                    g.reply(text="Sunny.", reasoning=g.reasoning("Check the sky.")),
                ),
                Rule(
                    "long", m.last_user(contains="essay"), g.just("one two three four five six seven eight")
                ),
                Rule("text", m.always(), g.just("Hello, world!")),
            ]
        ),
    )


def run(
    body: dict[str, Any], codec: ResponsesCodec | None = None
) -> tuple[ResponsesCodec, ModelRequest, ModelOutput]:
    codec = codec or ResponsesCodec()
    request = codec.decode(body, {}, {})
    return codec, request, make_mock().generate(request)


def events_of(codec: ResponsesCodec, request: ModelRequest, output: ModelOutput) -> list[dict[str, Any]]:
    return [json.loads(f.data) for f in codec.frames(output, request)]


# ------------------------------------------------------------------------------------------------- decode


def test_decode_string_input_instructions_and_settings() -> None:
    body = {
        "model": "gpt-4o",
        "input": "What is the weather?",
        "instructions": "Be brief.",
        "max_output_tokens": 64,
        "stream": True,
        "store": False,
        "temperature": 0.2,
        "metadata": {"k": "v"},
        "reasoning": {"effort": "low", "summary": "auto"},
        "text": {
            "format": {"type": "json_schema", "name": "Out", "schema": {"type": "object"}, "strict": True}
        },
        "tools": [WEATHER_TOOL, {"type": "web_search_preview"}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "parallel_tool_calls": False,
    }
    req = ResponsesCodec().decode(body, {"Authorization": "Bearer sk", "X-Trace": "1"}, {})
    assert req.api == "responses"
    assert req.model == "gpt-4o"
    assert [(x.role, x.content) for x in req.messages] == [
        ("system", "Be brief."),
        ("user", "What is the weather?"),
    ]
    assert req.max_output_tokens == 64
    assert req.stream is True
    assert req.parallel_tool_calls is False
    assert [t.name for t in req.tools] == ["get_weather"]
    assert req.tools[0].strict is True
    assert (req.tool_choice.mode, req.tool_choice.name) == ("named", "get_weather")
    assert req.response_schema is not None
    assert (req.response_schema.kind, req.response_schema.name, req.response_schema.schema_) == (
        "json_schema",
        "Out",
        {"type": "object"},
    )
    assert req.reasoning is not None and (req.reasoning.effort, req.reasoning.summary) == ("low", "auto")
    assert (
        req.extra["store"] is False
        and req.extra["temperature"] == 0.2
        and req.extra["metadata"] == {"k": "v"}
    )
    assert req.headers == (("x-trace", "1"),)  # credentials are never recorded


def test_decode_replayed_history_items() -> None:
    body = {
        "model": "gpt-4o",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_1",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "18C and sunny"},
        ],
    }
    req = ResponsesCodec().decode(body, {}, {})
    assert [x.role for x in req.messages] == ["user", "assistant", "tool"]
    assert req.messages[1].content == "Checking."
    assert req.messages[1].tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments='{"city":"Paris"}'),
    )
    assert (req.messages[2].tool_call_id, req.messages[2].name, req.messages[2].content) == (
        "call_1",
        "get_weather",
        "18C and sunny",
    )
    assert req.ends_with_tool_result


def test_decode_each_turn_of_calls_is_one_assistant_message() -> None:
    def call(i: int) -> dict[str, Any]:
        return {"type": "function_call", "call_id": f"c{i}", "name": f"t{i}", "arguments": f'{{"i":{i}}}'}

    def output(i: int) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": f"c{i}", "output": f"r{i}"}

    req = ResponsesCodec().decode({"model": "gpt-4o", "input": [
        {"role": "user", "content": "go"},
        call(0), {"type": "reasoning", "id": "rs_1", "summary": []}, call(1), call(2),  # a new message
        output(0), output(1), output(2),
        {"role": "assistant", "content": "Half done."}, call(3), call(4),  # join the message they follow
        output(3), output(4), call(5), call(6),  # a turn still waiting for its results
    ]}, {}, {})  # fmt: skip
    assert [(m.role, m.content, [c.id for c in m.tool_calls]) for m in req.messages] == [
        ("user", "go", []),
        ("assistant", "", ["c0", "c1", "c2"]),
        ("tool", "r0", []), ("tool", "r1", []), ("tool", "r2", []),
        ("assistant", "Half done.", ["c3", "c4"]),
        ("tool", "r3", []), ("tool", "r4", []),
        ("assistant", "", ["c5", "c6"]),
    ]  # fmt: skip
    assert req.messages[1].tool_calls[2] == ToolCall(id="c2", name="t2", arguments='{"i":2}')
    assert [m.name for m in req.messages if m.role == "tool"] == ["t0", "t1", "t2", "t3", "t4"]


def test_decode_allowed_tools_keeps_the_declared_order_and_refuses_unknown_names() -> None:
    tools = [{"type": "function", "name": n} for n in ("a", "b", "c", "d")]
    choice = {"type": "allowed_tools", "mode": "required", "tools": [
        {"type": "function", "name": "c"}, {"type": "web_search"}, {"type": "function", "name": "a"},
        {"type": "function", "name": "c"},
    ]}  # fmt: skip
    body = {"model": "m", "input": "hi", "tools": tools}
    req = ResponsesCodec().decode({**body, "tool_choice": choice}, {}, {})
    assert ([t.name for t in req.tools], req.tool_choice.mode) == (["a", "c"], "required")
    for name in ("e", 5):
        bad = {**choice, "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": name}]}
        with pytest.raises(RequestError) as info:
            ResponsesCodec().decode({**body, "tool_choice": bad}, {}, {})
        assert (info.value.message, info.value.param) == (
            f"Invalid value for 'tool_choice.tools[1]': no function named '{name}' is declared in 'tools'.",
            "tool_choice.tools[1]",
        )


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"input": "hi"}, "Missing required parameter: 'model'.", "model"),
        (
            {"model": 3, "input": "hi"},
            "Invalid type for 'model': expected a string, but got an integer instead.",
            "model",
        ),
        ({"model": "m"}, "Missing required parameter: 'input'.", "input"),
        (
            {"model": "m", "input": 5},
            "Invalid type for 'input': expected a string or an array of input items, "
            "but got an integer instead.",
            "input",
        ),
        (
            {"model": "m", "input": [{"type": "bogus"}]},
            "Invalid value for 'input[0].type': 'bogus' is not a supported input item type.",
            "input[0].type",
        ),
        (
            {"model": "m", "input": [{"role": "robot", "content": "x"}]},
            "Invalid value for 'input[0].role': expected one of user, assistant, system, developer, "
            "got 'robot'.",
            "input[0].role",
        ),
        (
            {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]},
            "Missing required parameter: 'input[0].call_id'.",
            "input[0].call_id",
        ),
        (
            {"model": "m", "input": "hi", "max_output_tokens": 0},
            "Invalid 'max_output_tokens': integer below minimum value. "
            "Expected a value >= 1, but got 0 instead.",
            "max_output_tokens",
        ),
        (
            {"model": "m", "input": "hi", "tool_choice": "sometimes"},
            "Invalid value for 'tool_choice': expected 'none', 'auto' or 'required', got 'sometimes'.",
            "tool_choice",
        ),
        (
            {"model": "m", "input": "hi", "text": {"format": {"type": "json_schema", "name": "x"}}},
            "Missing required parameter: 'text.format.schema'.",
            "text.format.schema",
        ),
        (
            {"model": "m", "input": "hi", "stream": "yes"},
            "Invalid type for 'stream': expected a boolean, but got a string instead.",
            "stream",
        ),
        ({"model": "m", "input": []}, "Invalid 'input': the conversation has no messages.", "input"),
    ],
)
def test_decode_errors_name_the_field(body: dict[str, Any], message: str, param: str) -> None:
    with pytest.raises(RequestError) as info:
        ResponsesCodec().decode(body, {}, {})
    assert (info.value.message, info.value.param) == (message, param)


def test_decode_rejects_a_non_object_body() -> None:
    with pytest.raises(RequestError, match="must be a JSON object"):
        ResponsesCodec().decode(["x"], {}, {})


# --------------------------------------------------------------------------------------------- non-stream


def test_body_is_a_complete_response(openai_spec: Any) -> None:
    codec, req, out = run(
        {"model": "gpt-4o", "input": "Weather?", "tools": [WEATHER_TOOL], "instructions": "x"}
    )
    body = codec.body(out, req)
    openai_spec("Response", body)
    assert body["id"].startswith("resp_") and len(body["id"]) == 5 + 48
    assert (body["object"], body["status"], body["created_at"], body["completed_at"]) == (
        "response",
        "completed",
        out.created,
        out.created,
    )
    assert body["instructions"] == "x"
    message, call = body["output"]
    assert message["type"] == "message" and message["id"].startswith("msg_") and len(message["id"]) == 52
    assert message["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "Let me check."}
    ]
    assert call == {
        "id": call["id"],
        "type": "function_call",
        "status": "completed",
        "arguments": '{"city":"Paris"}',
        "call_id": out.tool_calls[0].id,
        "name": "get_weather",
    }
    assert call["id"].startswith("fc_") and len(call["id"]) == 51
    assert body["tools"] == [{**WEATHER_TOOL}]
    assert body["usage"] == {
        "input_tokens": out.usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": out.usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": out.usage.prompt_tokens + out.usage.completion_tokens,
    }


def test_body_snapshot(snapshot: Any) -> None:
    codec, req, out = run(
        {"model": "gpt-4o", "input": "Hi", "reasoning": {"effort": "low", "summary": "auto"}}
    )
    assert codec.body(out, req) == snapshot.use_extension(JSONSnapshotExtension)


def test_same_request_same_bytes_and_stream_flag_changes_nothing() -> None:
    a_codec, a_req, a_out = run({"model": "gpt-4o", "input": "Hi"})
    b_codec, b_req, b_out = run({"model": "gpt-4o", "input": "Hi", "stream": True})
    assert json.dumps(a_codec.body(a_out, a_req)) == json.dumps(b_codec.body(b_out, b_req))


def test_reasoning_summary_only_when_asked() -> None:
    codec, req, out = run({"model": "o4", "input": "Hi", "reasoning": {"effort": "low"}})
    body = codec.body(out, req)
    assert body["output"][0]["type"] == "reasoning" and body["output"][0]["summary"] == []
    assert body["usage"]["output_tokens_details"]["reasoning_tokens"] == out.usage.reasoning_tokens > 0
    codec, req, out = run(
        {
            "model": "o4",
            "input": "Hi",
            "reasoning": {"summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        }
    )
    item = codec.body(out, req)["output"][0]
    assert item["summary"] == [{"type": "summary_text", "text": "Check the sky."}]
    assert item["encrypted_content"] == out.parts[0].signature  # type: ignore[union-attr]


def test_token_limit_gives_incomplete(openai_spec: Any) -> None:
    codec, req, out = run({"model": "gpt-4o", "input": "an essay please", "max_output_tokens": 3})
    body = codec.body(out, req)
    openai_spec("Response", body)
    assert (body["status"], body["incomplete_details"], body["completed_at"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
        None,
    )
    assert body["output"][0]["status"] == "incomplete"
    assert body["output"][0]["content"][0]["text"] == "one two thre"  # a token is at most 4 letters
    assert body["usage"]["output_tokens"] == 3
    events = events_of(codec, req, out)
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"] == body


# ------------------------------------------------------------------------------------------------- stream


def test_text_stream_event_order(openai_spec: Any) -> None:
    codec, req, out = run({"model": "gpt-4o", "input": "Hi", "stream": True})
    frames = codec.frames(out, req)
    events = [json.loads(f.data) for f in frames]
    types = [e["type"] for e in events]
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 4,  # "Hello, world!" in pieces of 4 code points
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [f.event for f in frames] == types  # `event:` lines name every payload
    assert [f.terminal for f in frames] == [False] * (len(frames) - 1) + [True]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["response"]["output"] == [] and events[0]["response"]["status"] == "in_progress"
    assert "usage" not in events[0]["response"]
    assert [e["delta"] for e in events if e["type"] == "response.output_text.delta"] == [
        "Hell",
        "o, w",
        "orld",
        "!",
    ]
    assert events[-1]["response"] == codec.body(out, req)
    for e in events:
        openai_spec(EVENT_SCHEMAS[e["type"]], e)


def test_tool_call_and_reasoning_stream(openai_spec: Any) -> None:
    codec, req, out = run(
        {"model": "o4", "input": "Weather?", "tools": [WEATHER_TOOL], "reasoning": {"summary": "auto"}}
    )
    events = events_of(codec, req, out)
    for e in events:
        openai_spec(EVENT_SCHEMAS[e["type"]], e)
    added = [
        (e["output_index"], e["item"]["type"]) for e in events if e["type"] == "response.output_item.added"
    ]
    done = [
        (e["output_index"], e["item"]["type"]) for e in events if e["type"] == "response.output_item.done"
    ]
    assert added == done == [(0, "reasoning"), (1, "message"), (2, "function_call")]
    call_added = next(
        e for e in events if e["type"] == "response.output_item.added" and e["output_index"] == 2
    )
    assert call_added["item"]["arguments"] == "" and call_added["item"]["status"] == "in_progress"
    args = "".join(e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(args) == {"city": "Paris"}
    args_done = next(e for e in events if e["type"] == "response.function_call_arguments.done")
    assert (args_done["name"], args_done["arguments"]) == ("get_weather", '{"city":"Paris"}')
    summary = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta")
    assert summary == out.reasoning and summary.startswith("The user is asking about")
    # every content event comes after its item was added and before it was done
    for e in events:
        if "item_id" in e:
            index = e["output_index"]
            assert (index, "added") in _lifecycle(events, upto=e)
            assert (index, "done") not in _lifecycle(events, upto=e)


def _lifecycle(events: list[dict[str, Any]], upto: dict[str, Any]) -> set[tuple[int, str]]:
    seen: set[tuple[int, str]] = set()
    for e in events:
        if e is upto:
            break
        if e["type"] in ("response.output_item.added", "response.output_item.done"):
            seen.add((e["output_index"], e["type"].rsplit(".", 1)[1]))
    return seen


def test_stream_error_fault_sends_error_then_failed(openai_spec: Any) -> None:
    codec, req, out = run({"model": "gpt-4o", "input": "Hi", "stream": True})
    fault = Fault(kind="stream_error", after=11, message="boom")
    plan = StreamPlan(faults=(fault,))
    wire = plan_wire(codec.frames(out, req), plan, codec, out, req)
    events = [json.loads(f.data) for f in wire.frames]
    assert [e["type"] for e in events[-3:]] == ["response.output_item.done", "error", "response.failed"]
    assert events[-2] == {
        "type": "error",
        "code": "server_error",
        "message": "boom",
        "param": None,
        "sequence_number": 11,
    }
    failed = events[-1]["response"]
    assert (events[-1]["sequence_number"], failed["status"], failed["error"]) == (
        12,
        "failed",
        {"code": "server_error", "message": "boom"},
    )
    assert failed["output"] == codec.body(out, req)["output"]  # the message finished before the cut
    for e in events:
        openai_spec(EVENT_SCHEMAS[e["type"]], e)
    early = codec.error_frames(fault, out, req, 3)
    assert json.loads(early[1].data)["response"]["output"] == []


@pytest.mark.parametrize(("after", "index"), [(0, 0), (2, 0), (3, 1), (1000, 1)])
def test_unknown_item_fault_inserts_an_item(after: int, index: int) -> None:
    codec = ResponsesCodec()
    req = codec.decode({"model": "gpt-4o", "input": "Hi"}, {}, {})
    mock = MockGPT(
        seed=7,
        rules=[
            Rule(
                "x",
                m.always(),
                g.answer(g.just("Hi!"), stream={"faults": [{"kind": "unknown_item", "after": after}]}),
            )
        ],
    )
    out = mock.generate(req)
    body = codec.body(out, req)
    kinds = [i["type"] for i in body["output"]]
    assert kinds == (
        ["synthgpt_unknown_item", "message"] if index == 0 else ["message", "synthgpt_unknown_item"]
    )
    unknown = body["output"][index]
    assert unknown["type"] == UNKNOWN_ITEM_TYPE and unknown["status"] == "completed"
    events = events_of(codec, req, out)
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    assert added == [0, 1]
    assert events[-1]["response"] == body


# ------------------------------------------------------------------------------------------------- errors


def test_error_bodies_are_openai_shaped(openai_spec: Any) -> None:
    codec = ResponsesCodec()
    body = codec.error_body(ErrorSpec(status=429, message="slow down"), 429)
    assert body == {
        "error": {"message": "slow down", "type": "requests", "param": None, "code": "rate_limit_exceeded"}
    }
    openai_spec("ErrorResponse", body)
    missing = codec.error_body(ResponseNotFound("resp_x"), 404)
    assert missing == {
        "error": {
            "message": "Previous response with id 'resp_x' not found.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }
    assert ResponseNotFound("resp_x").status == 404


# -------------------------------------------------------------------------------------------------- store


def test_previous_response_id_continues_the_conversation() -> None:
    codec, req, out = run(
        {"model": "gpt-4o", "input": "Weather?", "tools": [WEATHER_TOOL], "instructions": "A"}
    )
    first = codec.body(out, req)
    call = first["output"][1]
    follow = {
        "model": "gpt-4o",
        "previous_response_id": first["id"],
        "instructions": "B",
        "tools": [WEATHER_TOOL],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "18C"}],
    }
    req2 = codec.decode(follow, {}, {})
    assert [(x.role, x.content) for x in req2.messages] == [
        ("system", "B"),  # instructions are not carried over
        ("user", "Weather?"),
        ("assistant", "Let me check."),
        ("tool", "18C"),
    ]
    assert req2.messages[2].tool_calls[0].id == call["call_id"]
    assert req2.messages[3].name == "get_weather"
    out2 = make_mock().generate(req2)
    second = codec.body(out2, req2)
    assert second["previous_response_id"] == first["id"]
    assert second["output"][0]["content"][0]["text"] == "It is sunny in Paris."
    assert len(codec.store) == 2


def test_unknown_previous_response_id_is_a_404() -> None:
    with pytest.raises(ResponseNotFound) as info:
        ResponsesCodec().decode({"model": "m", "input": "x", "previous_response_id": "resp_nope"}, {}, {})
    assert (info.value.status, info.value.param) == (404, "previous_response_id")


def test_store_false_is_not_kept_and_stores_are_per_codec() -> None:
    codec, req, out = run({"model": "m", "input": "x", "store": False})
    body = codec.body(out, req)
    assert body["store"] is False and len(codec.store) == 0
    codec, req, out = run({"model": "m", "input": "x"})
    rid = codec.body(out, req)["id"]
    assert rid in codec.store
    assert rid not in ResponsesCodec().store


def test_the_store_keeps_conversations_packed_and_gives_them_back_equal() -> None:
    # live, a thousand short conversations (a prompt and its drawn answer) held 1.8 MB; packed ~0.6 MB
    codec = ResponsesCodec(store_size=1)
    mock = MockGPT(seed=1, journal_size=0)  # the built-in rules: a paragraph or two of prose

    def conversation(i: int) -> tuple[str, tuple[Message, ...]]:
        request = codec.decode({"model": "m", "input": f"tell me about bridges, number {i}"}, {}, {})
        rid = codec.body(mock.generate(request), request)["id"]
        return rid, codec.store.get(rid) or ()

    store = ResponseStore(1000)
    tracemalloc.start()  # before the conversations are made: what only the store holds is freed below
    for i in range(300):
        rid, messages = conversation(i)
        store.put(rid, messages)
    assert len(messages) == 2 and messages[0].content.endswith("number 299")
    assert store.get(rid) == messages and store.get(rid) is not store.get(rid)
    del messages
    held = tracemalloc.get_traced_memory()[0]
    store.clear()
    kept = (held - tracemalloc.get_traced_memory()[0]) / 300
    tracemalloc.stop()
    assert kept < 1000, kept  # bytes a conversation (live: ~1,750)


def test_a_conversation_that_cannot_be_packed_is_kept_as_it_is() -> None:
    odd = Message.model_construct(**{**Message(role="user", content="x").__dict__, "name": lambda: 1})
    store = ResponseStore(2)
    store.put("a", (odd,))  # JSON and pickle both refuse the lambda
    got = store.get("a")
    assert got is not None and got == (odd,) and got[0] is odd


def test_store_is_bounded_lru() -> None:
    store = ResponseStore(2)
    msg = (Message(role="user", content="x"),)
    store.put("a", msg)
    store.put("b", msg)
    assert store.get("a") == msg  # touch a: b is now the oldest
    store.put("c", msg)
    assert ("a" in store, "b" in store, "c" in store, len(store)) == (True, False, True, 2)
    with pytest.raises(ValueError, match="maxsize"):
        ResponseStore(0)


def test_stream_bytes_snapshot(sse_snapshot: Any) -> None:
    codec, req, out = run(
        {
            "model": "o4",
            "input": "Weather?",
            "tools": [WEATHER_TOOL],
            "reasoning": {"summary": "auto"},
            "stream": True,
        }
    )
    out = out.model_copy(update={"stream": StreamPlan(chunk_chars=16)})
    wire = plan_wire(codec.frames(out, req), out.stream, codec, out, req)
    assert wire.data == sse_snapshot
