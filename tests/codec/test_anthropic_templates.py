"""The Messages stream's events written from templates (`message_start`, a text block's start,
`message_delta`; `_written_out`) are byte for byte its events as dicts through `json.dumps`, on every
shape of answer: awkward texts, a pinned id and a model name that JSON escapes, a stop sequence, a cut
answer, thinking and tool use blocks (whose events keep the general way), no content at all."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt.codec.anthropic.encode import MessagesCodec, _event_parts, _plain_text_parts, _written_out
from synthgpt.codec.base import render_frame
from synthgpt.codec.runs import expand
from synthgpt.codec.sse import plan_parts
from synthgpt.model import Choice, ModelOutput, ReasoningPart, StreamPlan, TextOut, ToolCallPart, Usage
from tests.codec.test_frame_runs import AWKWARD, reference_json, sse


def output_of(
    parts: list[Any],
    *,
    finish: str = "stop",
    pinned: str | None = None,
    model: str = "claude-sonnet-4-5",
    stop: str | None = None,
) -> ModelOutput:
    return ModelOutput(
        choices=(Choice(parts=tuple(parts), finish_reason=finish, stop_sequence=stop),),
        usage=Usage(prompt_tokens=12, completion_tokens=34, cached_tokens=5),
        stream=StreamPlan(chunk_chars=4, id=pinned),
        model=model,
        id_seed=123456789,
        created=1_767_225_600,
    )


CALL = ToolCallPart(id="call_1", name="lookup", arguments='{"q":"é\\"\\u2028"}')
OUTPUTS = {
    **{f"text{i}": output_of([TextOut(text=t)]) for i, t in enumerate(AWKWARD)},
    "nothing": output_of([]),
    "cut": output_of([TextOut(text="cut sho")], finish="length"),
    "stop-sequence": output_of([TextOut(text="up to")], stop='"END"\u2028é\n'),
    "pinned-id": output_of([TextOut(text="hi")], pinned='msg_"odd"\\\u2028é\x01'),
    "odd-model": output_of([TextOut(text="hi")], model='claude "x"\té\U0001d11e'),
    "thinking": output_of([ReasoningPart(text="think", signature="sig"), TextOut(text="so")]),
    "tool-use": output_of([TextOut(text="a"), CALL, TextOut(text='b"\n')], finish="tool_calls"),
}


@pytest.mark.parametrize("output", OUTPUTS.values(), ids=OUTPUTS.keys())
def test_stream_is_its_events_through_json_dumps(output: ModelOutput) -> None:
    codec = MessagesCodec()
    body = {"model": "claude-sonnet-4-5", "max_tokens": 99, "stream": True,
            "messages": [{"role": "user", "content": "Hi"}]}  # fmt: skip
    request = codec.decode(body, {"x-api-key": "k"}, {})
    events = codec.events(output, request)
    expected = sse([(e["type"], e) for e in events])
    assert b"".join(render_frame(f) for f in codec.frames(output, request)) == expected
    assert plan_parts(codec, output.stream, output, request).data == expected
    for event in events:  # each template's text, where it writes one, is the event's JSON
        written = _written_out(event)
        assert written is None or written == reference_json(event)


@pytest.mark.parametrize("output", OUTPUTS.values(), ids=OUTPUTS.keys())
def test_a_one_text_answer_is_framed_without_its_events_as_they_frame(output: ModelOutput) -> None:
    """Every answer of one text block takes the short way (`_plain_text_parts`), with the frames the
    events give, names and the terminal flag included; the others take the general way."""
    plain = _plain_text_parts(output)
    one_text = [type(p) for p in output.parts] == [TextOut]
    assert (plain is not None) == one_text
    if plain is not None:
        assert expand(plain) == expand(_event_parts(output))


class _Model(str):
    pass


_BOOL_CACHED = Usage(prompt_tokens=12, completion_tokens=34, cached_tokens=5).model_copy(
    update={"cached_tokens": True}
)


@pytest.mark.parametrize(
    "odd",
    [{"usage": _BOOL_CACHED}, {"model": _Model("claude-x")}],
    ids=["bool-count", "str-subclass-model"],
)  # fmt: skip
def test_a_one_text_answer_of_unusual_types_takes_the_general_way(odd: dict[str, Any]) -> None:
    """A count that is a bool (which the short way's f-strings would write `True`) or a model name of a str
    subclass: the short way declines, and the stream is still its events' JSON (compiled, `_usage` reads
    the bool as 1 for both)."""
    output = output_of([TextOut(text="hi")]).model_copy(update=odd)
    assert _plain_text_parts(output) is None
    codec = MessagesCodec()
    request = codec.decode({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "Hi"}]},
                           {"x-api-key": "k"}, {})  # fmt: skip
    expected = sse([(e["type"], e) for e in codec.events(output, request)])
    assert b"".join(render_frame(f) for f in codec.frames(output, request)) == expected


def test_the_templated_kinds_are_written_out() -> None:
    """A plain text answer's stream goes through no encoder pass: every event has its template."""
    codec = MessagesCodec()
    request = codec.decode({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "Hi"}]},
                           {"x-api-key": "k"}, {})  # fmt: skip
    output = output_of([TextOut(text="hello")], stop="STOP")
    kinds = [e["type"] for e in codec.events(output, request) if _written_out(e) is None]
    assert kinds == ["content_block_delta", "content_block_delta"]  # the text run's, written by its own


START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                          "output_tokens": 1, "service_tier": "standard"}},
}  # fmt: skip
DELTA = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
    "usage": {"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
              "output_tokens": 3},
}  # fmt: skip


def _changed(event: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    copy: dict[str, Any] = {**event}
    inner = copy
    for key in path[:-1]:
        inner[key] = {**inner[key]}
        inner = inner[key]
    inner[path[-1]] = value
    return copy


@pytest.mark.parametrize(
    ("event", "path", "value"),
    [
        (START, ("message", "usage", "input_tokens"), 1.0),
        (START, ("message", "usage", "output_tokens"), True),
        (START, ("message", "usage", "service_tier"), None),
        (START, ("message", "content"), [{"type": "text", "text": ""}]),
        (START, ("message", "stop_reason"), "end_turn"),
        (START, ("message", "model"), None),
        (START, ("extra",), 1),
        (DELTA, ("delta", "stop_sequence"), 5),
        (DELTA, ("delta", "stop_reason"), None),
        (DELTA, ("usage", "service_tier"), "standard"),
        (DELTA, ("usage", "output_tokens"), float("nan")),
        ({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
         ("content_block",), {"type": "text", "text": "x"}),
    ],
)  # fmt: skip
def test_a_shape_the_templates_do_not_write_takes_the_general_way(
    event: dict[str, Any], path: tuple[str, ...], value: Any
) -> None:
    assert _written_out(event) == reference_json(event)  # the shape as built: its template
    assert _written_out(_changed(event, path, value)) is None


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message_start", "message": {"id": "msg_01", "stop_reason": None}},
        {"type": "message_start", "message": "not a message"},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_delta", "delta": {"stop_sequence": None, "stop_reason": "end_turn"},
         "usage": DELTA["usage"]},
        {"type": "message_delta", "delta": DELTA["delta"], "usage": {**DELTA["usage"], "output_tokens": 3}},
        {"type": "content_block_start", "index": 0, "content_block": {"text": "", "type": "text"}},
        {"type": "content_block_start", "content_block": {"type": "text", "text": ""}, "index": 0},
        {"type": "content_block_start", "index": 0, "content_block": [("type", "text")]},
    ],
)  # fmt: skip
def test_events_of_other_keys_or_orders_are_dumped_as_they_are(event: dict[str, Any]) -> None:
    """Keys missing, or in another order, or a value not a dict: the event's own JSON, by the general way
    (a template would reorder the keys, or fail on a missing one)."""
    from synthgpt.codec.anthropic.encode import _render

    written = _written_out(event)
    assert written is None or written == reference_json(event)
    assert _render(event) == reference_json(event)
