"""Cohere v2 chat wire-level tests: request decoding, error bodies and the mid-stream error event."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt.codec.cohere.encode import CohereCodec, cohere_error_body
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import Choice, ErrorSpec, Fault, ModelOutput, StreamPlan, TextOut

CODEC = CohereCodec()


def decode(body: dict[str, Any]) -> Any:
    return CODEC.decode({"model": "command-a-03-2025", **body}, {"authorization": "Bearer k"}, {})


def test_decoding() -> None:
    req = decode(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {"role": "assistant", "tool_plan": "I will look.",
                 "tool_calls": [{"id": "w_1", "type": "function",
                                 "function": {"name": "w", "arguments": '{"c":1}'}}]},
                {"role": "tool", "tool_call_id": "w_1",
                 "content": [{"type": "document", "document": {"data": {"sky": "sunny"}}}]},
            ],
            "tool_choice": "REQUIRED", "max_tokens": 30, "stop_sequences": ["END"],
            "response_format": {"type": "json_object"}, "thinking": {"type": "enabled", "token_budget": 99},
        }
    )  # fmt: skip
    assert (req.system, req.max_output_tokens, req.stop_sequences, req.stream) == (
        "Be brief.",
        30,
        ("END",),
        False,
    )
    assert req.messages[2].content == "I will look." and req.messages[2].tool_calls[0].name == "w"
    assert req.tool_result_name(req.messages[3]) == "w" and req.messages[3].content == '{"sky":"sunny"}'
    assert req.tool_choice.mode == "required" and req.response_schema is not None
    assert req.reasoning is not None and req.reasoning.budget_tokens == 99 and req.headers == ()


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        ({"messages": [{"role": "user", "content": "x"}], "tool_choice": "AUTO"}, "tool_choice"),
        (
            {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}},
            "response_format.type",
        ),
    ],
)
def test_bad_requests(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as caught:
        decode(body)
    assert caught.value.param == param and caught.value.message.startswith("invalid request: ")


def test_stream_error_is_a_failed_message_end() -> None:
    req = decode({"messages": [{"role": "user", "content": "x"}], "stream": True})
    out = ModelOutput(
        choices=(Choice(parts=(TextOut(text="Hello there"),)),),
        stream=StreamPlan(chunk_chars=4, faults=(Fault(kind="stream_error", after=3),)),
    )
    data = plan_wire(CODEC.frames(out, req), out.stream, CODEC, out, req).data.decode()
    *_, last = data.strip().split("\n\n")
    assert last.split("\n")[0] == "event: message-end"
    assert json.loads(last.split("\n")[1][6:]) == {
        "type": "message-end",
        "delta": {
            "error": "internal server error, this has been reported to our developers",
            "finish_reason": "ERROR",
        },
    }


def test_error_body() -> None:
    body = cohere_error_body(ErrorSpec(status=404), 404)
    assert set(body) == {"id", "message"} and body["message"] == "model not found" and len(body["id"]) == 36
