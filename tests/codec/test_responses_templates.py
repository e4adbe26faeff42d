"""The Responses stream written from templates (`PlainMessage`, `_message_parts`, `_response_frame`) is
byte for byte the stream of its events as dicts through `json.dumps`, on every shape of answer: plain or
awkward text, empty text, a cut (incomplete) answer, several messages around a function call, reasoning,
logprobs and annotations (which keep the general path), a pinned id that JSON escapes, tiny floats and
`null` in what the request echoes (which send the one encoder pass back to `dumps`)."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt.codec.base import render_frame
from synthgpt.codec.openai_responses.encode import ResponsesCodec
from synthgpt.codec.openai_responses.events import PlainMessage, TextRun, stream_parts
from synthgpt.codec.runs import expand
from synthgpt.codec.sse import plan_parts
from synthgpt.model import Choice, ModelOutput, ReasoningPart, StreamPlan, TextOut, ToolCallPart, Usage
from tests.codec.test_frame_runs import AWKWARD, reference_json, sse


def output_of(parts: list[Any], *, finish: str = "stop", pinned: str | None = None) -> ModelOutput:
    return ModelOutput(
        choices=(Choice(parts=tuple(parts), finish_reason=finish),),
        usage=Usage(prompt_tokens=12, completion_tokens=34),
        stream=StreamPlan(chunk_chars=4, id=pinned),
        model="gpt-4o",
        id_seed=123456789,
        created=1_767_225_600,
    )


CALL = ToolCallPart(id="call_1", name="lookup", arguments='{"q":"é\\"\\u2028"}')
OUTPUTS = {
    **{f"text{i}": output_of([TextOut(text=t)]) for i, t in enumerate(AWKWARD)},
    "incomplete": output_of([TextOut(text="cut sho")], finish="length"),
    "filtered": output_of([TextOut(text="")], finish="content_filter"),
    "text-call-text": output_of([TextOut(text="a"), CALL, TextOut(text='b"\n')]),
    "call-only": output_of([CALL], finish="tool_calls"),
    "reasoning": output_of([ReasoningPart(text="think", signature="sig"), TextOut(text="so")]),
    "pinned-id": output_of([TextOut(text="hi")], pinned='resp_"odd"\u2028é'),
}
BODIES = {
    "plain": {},
    "logprobs": {"include": ["message.output_text.logprobs"], "top_logprobs": 2},
    "summary": {"reasoning": {"effort": "low", "summary": "auto"}},
    "tiny-float": {"temperature": 1e-05, "top_p": 0.5, "metadata": {"k": "null"}},
    "web-search": {"tools": [{"type": "web_search"}]},
    "instructions": {"instructions": "Be \"brief\"\n", "user": "u-1e-5", "store": False},
}


def reference(codec: ResponsesCodec, output: ModelOutput, request: Any) -> bytes:
    return sse([(e["type"], e) for e in codec.events(output, request)])


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
@pytest.mark.parametrize("output", OUTPUTS.values(), ids=OUTPUTS.keys())
def test_stream_is_its_events_through_json_dumps(output: ModelOutput, body: dict[str, Any]) -> None:
    codec = ResponsesCodec()
    request = codec.decode({"model": "gpt-4o", "input": "Hi", "stream": True, **body}, {}, {})
    expected = reference(codec, output, request)
    assert b"".join(render_frame(f) for f in expand(codec.frame_parts(output, request))) == expected
    assert plan_parts(codec, output.stream, output, request).data == expected
    frames = codec.frames(output, request)
    assert [f.terminal for f in frames] == [False] * (len(frames) - 1) + [True]


def test_a_plain_message_lists_the_events_of_a_message_item() -> None:
    """`PlainMessage.events()`: the events WIRE.md §3.3 lists for a message, spelled out here."""
    output = output_of([TextOut(text="hello there")], finish="length")
    codec = ResponsesCodec()
    request = codec.decode({"model": "gpt-4o", "input": "Hi", "stream": True}, {}, {})
    (message,) = [p for p in stream_parts(output, request) if isinstance(p, PlainMessage)]
    item = message.item
    ids = {"item_id": item["id"], "output_index": 0}
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    full = {"type": "output_text", "annotations": [], "logprobs": [], "text": "hello there"}
    assert item == {"id": item["id"], "type": "message", "status": "incomplete", "content": [full],
                    "role": "assistant"}  # fmt: skip
    assert message.events() == [
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", **ids, "content_index": 0, "part": empty},
        *({"type": "response.output_text.delta", **ids, "content_index": 0, "delta": d, "logprobs": []}
          for d in ["hell", "o th", "ere"]),
        {"type": "response.output_text.done", **ids, "content_index": 0, "text": "hello there",
         "logprobs": []},
        {"type": "response.content_part.done", **ids, "content_index": 0, "part": full},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]  # fmt: skip
    assert len(message) == len(message.events())
    assert reference_json(message.events()[0]).startswith('{"type":"response.output_item.added"')


def test_messages_with_logprobs_or_annotations_keep_the_general_events() -> None:
    output = output_of([TextOut(text="hello")])
    codec = ResponsesCodec()
    request = codec.decode({"model": "gpt-4o", "input": "Hi", "stream": True,
                            "include": ["message.output_text.logprobs"]}, {}, {})  # fmt: skip
    parts = stream_parts(output, request)
    assert not any(isinstance(p, PlainMessage | TextRun) for p in parts)
    assert [p["type"] for p in parts if isinstance(p, dict)].count("response.output_text.delta") == 2
