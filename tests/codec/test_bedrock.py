"""Bedrock Converse wire-level tests: the event stream framing decoded by botocore's own parser (CRCs
checked), and every body and event checked against the published bedrock-runtime service model (the
botocore JSON), with unknown members refused."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer
from botocore.model import Shape

from synthgpt.codec.bedrock.encode import BedrockCodec
from synthgpt.codec.bedrock.eventstream import encode_message
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

MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
STREAM = BedrockCodec(stream=True)
OUT = ModelOutput(
    choices=(
        Choice(
            parts=(ReasoningPart(text="Hmm.", signature="sig"), TextOut(text="Let me look."),
                   ToolCallPart(id="c", name="get_weather", arguments='{"city":"Oslo"}')),
            finish_reason="tool_calls",
        ),
    ),
    usage=Usage(prompt_tokens=9, completion_tokens=12),
    stream=StreamPlan(chunk_chars=5),
    id_seed=7,
)  # fmt: skip


def conforms(value: Any, shape: Shape, path: str = "$") -> None:
    """`value` is what botocore's shape allows: known members only, required ones present, types right."""
    kind = shape.type_name
    if getattr(shape, "is_document_type", False):
        return  # a free JSON document (a tool's input)
    if kind == "structure":
        assert isinstance(value, dict), path
        members = shape.members  # type: ignore[attr-defined]
        assert set(value) <= set(members), f"{path}: unknown {set(value) - set(members)}"
        for name in shape.required_members:  # type: ignore[attr-defined]
            assert name in value, f"{path}: missing {name}"
        if shape.metadata.get("union"):
            assert len(value) == 1, f"{path}: a union has one member"
        for k, v in value.items():
            conforms(v, members[k], f"{path}.{k}")
    elif kind == "list":
        assert isinstance(value, list), path
        for i, v in enumerate(value):
            conforms(v, shape.member, f"{path}[{i}]")  # type: ignore[attr-defined]
    elif kind == "string":
        assert isinstance(value, str), path
        if shape.enum:
            assert value in shape.enum, f"{path}: {value!r} not in {shape.enum}"
    elif kind in ("integer", "long"):
        assert isinstance(value, int) and not isinstance(value, bool), path
    elif kind == "boolean":
        assert isinstance(value, bool), path


def request(**body: Any) -> ModelRequest:
    base = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    return STREAM.decode({**base, **body}, {"authorization": "AWS4-HMAC-SHA256 x"}, {"model_id": "m"})


def decode_stream(data: bytes) -> list[tuple[dict[str, Any], Any]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, json.loads(m.payload)) for m in buffer]


def test_body_conforms_to_the_service_model() -> None:
    body = BedrockCodec().body(OUT, request())
    conforms(body, MODEL.operation_model("Converse").output_shape)
    assert body["stopReason"] == "tool_use" and body["usage"] == {"inputTokens": 9, "outputTokens": 12,
                                                                   "totalTokens": 21}  # fmt: skip
    assert [next(iter(b)) for b in body["output"]["message"]["content"]] == [
        "reasoningContent",
        "text",
        "toolUse",
    ]


def test_stream_decodes_with_botocore_and_conforms() -> None:
    req = request()
    data = plan_wire(STREAM.frames(OUT, req), OUT.stream, STREAM, OUT, req).data
    messages = decode_stream(data)
    union = MODEL.operation_model("ConverseStream").output_shape.members["stream"]  # type: ignore[attr-defined]
    for headers, payload in messages:
        assert headers[":message-type"] == "event" and headers[":content-type"] == "application/json"
        conforms({headers[":event-type"]: payload}, union)
    names = [h[":event-type"] for h, _ in messages]
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    assert names.count("contentBlockStart") == 1 and names.count("contentBlockStop") == 3


def test_a_bad_crc_is_caught_by_botocore() -> None:
    good = encode_message([(":event-type", "messageStart")], b'{"role":"assistant"}')
    assert decode_stream(good)[0][1] == {"role": "assistant"}
    assert struct.unpack(">I", good[8:12])[0] == zlib.crc32(good[:8])
    bad = good[:-1] + bytes([good[-1] ^ 1])
    with pytest.raises(ChecksumMismatch):
        decode_stream(bad)


def test_stream_error_is_an_exception_message() -> None:
    req = request()
    out = OUT.model_copy(
        update={"stream": StreamPlan(chunk_chars=5, faults=(Fault(kind="stream_error", after=2),))}
    )
    messages = decode_stream(plan_wire(STREAM.frames(out, req), out.stream, STREAM, out, req).data)
    headers, payload = messages[-1]
    assert len(messages) == 3 and headers[":message-type"] == "exception"
    assert headers[":exception-type"] == "modelStreamErrorException" and payload == {
        "message": "The model returned an error."
    }


def test_decoding() -> None:
    req = request(
        messages=[
            {"role": "user",
             "content": [{"text": "Weather?"}, {"image": {"format": "png", "source": {"bytes": ""}}}]},
            {"role": "assistant",
             "content": [{"toolUse": {"toolUseId": "t1", "name": "w", "input": {"c": 1}}}]},
            {"role": "user",
             "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"sky": "sunny"}}],
                                                          "status": "error"}}]},
        ],
        system=[{"text": "Be brief."}],
        inferenceConfig={"maxTokens": 40, "stopSequences": ["END"]},
        toolConfig={"tools": [{"toolSpec": {"name": "w", "inputSchema": {"json": {"type": "object"}}}}],
                    "toolChoice": {"tool": {"name": "w"}}},
        outputConfig={"textFormat": {"type": "json_schema",
                                     "structure": {"jsonSchema": {"schema": '{"type":"object"}',
                                                                  "name": "doc"}}}},
        additionalModelRequestFields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
    )  # fmt: skip
    assert [m.role for m in req.messages] == ["system", "user", "assistant", "tool"]
    assert req.messages[1].parts[1].kind == "image" and req.messages[3].is_error
    assert req.tool_result_name(req.messages[3]) == "w" and req.messages[3].content == '{"sky":"sunny"}'
    assert (req.max_output_tokens, req.stop_sequences, req.tool_choice.name) == (40, ("END",), "w")
    assert req.response_schema is not None and req.response_schema.name == "doc"
    assert req.reasoning is not None and req.reasoning.budget_tokens == 1024
    assert req.stream and req.model == "m" and req.header("authorization") is None


@pytest.mark.parametrize(
    ("body", "param"),
    [({"messages": None}, "messages"),
     ({"messages": [{"role": "system", "content": []}]}, "messages.1.member.role"),
     ({"inferenceConfig": {"maxTokens": 0}}, "inferenceConfig.maxTokens")],
)  # fmt: skip
def test_bad_requests(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as caught:
        request(**body)
    assert caught.value.param == param and caught.value.code == "ValidationException"


def test_errors_name_their_exception() -> None:
    codec = BedrockCodec()
    spec = ErrorSpec(status=429)
    assert codec.error_body(spec, 429) == {"message": "Too many requests, please wait before trying again."}
    assert codec.error_headers(spec, 429)["x-amzn-errortype"].startswith("ThrottlingException:")
    assert codec.error_headers(RequestError("x", code="ValidationException"), 400)[
        "x-amzn-errortype"
    ].startswith("ValidationException:")


def test_decode_events_reads_back_what_encode_message_writes() -> None:
    """The recorder reads Converse streams with the writer's own module: events in order, exceptions
    skipped, a payload that is not JSON kept as None, a cut tail dropped."""
    from synthgpt.codec.bedrock.eventstream import decode_events

    def event(name: str, payload: bytes) -> bytes:
        return encode_message([(":event-type", name), (":content-type", "application/json"),
                               (":message-type", "event")], payload)  # fmt: skip

    failure = encode_message(
        [(":exception-type", "throttlingException"), (":message-type", "exception")], b"{}"
    )
    data = event("messageStart", b'{"role":"assistant"}') + failure + event("metadata", b"not json")
    assert decode_events(data) == [("messageStart", {"role": "assistant"}), ("metadata", None)]
    assert decode_events(data + event("messageStop", b"{}")[:-5]) == decode_events(data)
