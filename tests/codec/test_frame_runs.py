"""Streams written from runs of frames (`codec/runs.py`) are byte for byte the straightforward ones.

The reference here is the plain way: every event built as a dict and written by `json.dumps` (compact,
UTF-8 kept), one SSE event per frame. The fast path writes text deltas from a template around the text's
JSON (`encode_basestring`) and an unpaced stream in one piece; both must give the reference's bytes on
awkward texts: non-ASCII, emoji and ZWJ sequences, combining marks, every control character, quotes,
backslashes, U+2028/U+2029, DEL, `</script>`.
"""

from __future__ import annotations

import json
import random
from json.encoder import encode_basestring
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.codec.anthropic.encode import MessagesCodec
from synthgpt.codec.base import Frame, render_frame
from synthgpt.codec.openai_chat.encode import (
    ChatCodec,
    choice_deltas,
    completion_id,
    served_tier,
    system_fingerprint,
    usage_body,
)
from synthgpt.codec.openai_responses.encode import ResponsesCodec
from synthgpt.codec.runs import FrameRun, LazyFrames, Part, PlainChunks, expand, render_sse
from synthgpt.codec.sse import chunk_pieces, chunk_text, plan_parts, plan_wire, text_deltas, text_pieces
from synthgpt.jsonutil import dumps
from synthgpt.model import Choice, Fault, ModelOutput, ModelRequest, StreamPlan, TextOut, ToolCallPart, Usage

AWKWARD = [
    "",
    "plain ascii",
    'say "hi" \\ back\\slash \\\\ and \\"',
    "Zürich, Ελλάδα, 東京, русский",
    "emoji 😀👍🏽 family 👨\u200d👩\u200d👧 flag 🇫🇷",
    "combining e\u0301 a\u0308\u0323 and a lone mark \u0301",
    "".join(chr(c) for c in range(32)),
    "tab\tnew\nline\rcr\bbs\fff",
    "line\u2028separator\u2029paragraph",
    "del\x7f nbsp\xa0 bom\ufeff zwsp\u200b",
    "</script><!-- & 'quotes' -->",
    "\U0010ffff astral \U0001d11e",
    "{}[],:0-1e-05 null true",
]

TEXTS = st.text(
    st.characters(codec="utf-8") | st.sampled_from(["\u2028", "\u2029", "\x00", "\x1f", "\x7f", '"', "\\"]),
    max_size=40,
)


def reference_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """The reference stream: each payload through `json.dumps` (or as is, for `[DONE]`), one event each."""
    out = b""
    for name, payload in events:
        data = payload if isinstance(payload, str) else reference_json(payload)
        out += render_frame(Frame(data, name))
    return out


@pytest.mark.parametrize("text", AWKWARD)
def test_the_string_encoder_writes_what_dumps_writes(text: str) -> None:
    assert encode_basestring(text) == dumps(text) == reference_json(text)


@given(TEXTS)
def test_the_string_encoder_writes_what_dumps_writes_on_any_text(text: str) -> None:
    assert encode_basestring(text) == dumps(text) == reference_json(text)


# ------------------------------------------------------------------------------------------------ answers


def output_of(
    texts: list[str], *, chunk: int = 3, choices: int = 1, call: bool = False, deltas: bool = False
) -> ModelOutput:
    """An answer whose choices say `texts` (joined; adjacent text parts), cut every `chunk` characters, or
    along explicit `deltas` (the plan's own pieces) when asked."""
    parts: list[Any] = [TextOut(text=t) for t in texts]
    if call:
        parts.append(ToolCallPart(id="call_1", name="lookup", arguments='{"q":"é\\"\\u2028"}'))
    made = [Choice(parts=tuple(parts), finish_reason="tool_calls" if call else "stop")]
    made += [Choice(parts=(TextOut(text=f"{i}: " + "".join(texts)),), finish_reason="length")
             for i in range(1, choices)]  # fmt: skip
    whole = "".join(texts)
    cut = [whole[i : i + chunk] for i in range(0, len(whole), chunk)] if deltas else None
    return ModelOutput(
        choices=tuple(made),
        usage=Usage(prompt_tokens=12, completion_tokens=34),
        stream=StreamPlan(chunk_chars=chunk, deltas=cut),
        model="gpt-4o",
        id_seed=987654321,
        created=1_767_225_600,
    )


CASES = [pytest.param(output_of([t]), id=f"text{i}") for i, t in enumerate(AWKWARD)] + [
    pytest.param(output_of(AWKWARD[3:6], chunk=1), id="parts-by-one"),
    pytest.param(output_of(AWKWARD[4:7], chunk=5, deltas=True), id="explicit-deltas"),
    pytest.param(output_of(AWKWARD[2:4], call=True), id="text-and-call"),
    pytest.param(output_of(AWKWARD[6:9], choices=2), id="two-choices"),
]


def chat_request(**extra: Any) -> ModelRequest:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "stream": True, **extra}
    return ChatCodec().decode(body, {}, {})


def chat_reference(output: ModelOutput, request: ModelRequest) -> bytes:
    """Every chunk as a dict, the choices interleaved one delta at a time (WIRE.md §2.3)."""
    envelope = {
        "id": completion_id(output),
        "object": "chat.completion.chunk",
        "created": output.created,
        "model": output.model,
        "service_tier": served_tier(request),
        "system_fingerprint": system_fingerprint(output.model),
    }
    plan = output.stream
    per_choice = []
    for i, choice in enumerate(output.choices):
        pieces = text_deltas(choice.text, plan) if plan.deltas else None
        deltas = choice_deltas(choice, plan.chunk_chars, pieces)
        chunks: list[dict[str, Any]] = [
            {"index": i, "delta": d, "logprobs": None, "finish_reason": None} for d in deltas
        ]
        chunks.append({"index": i, "delta": {}, "logprobs": None, "finish_reason": choice.finish_reason})
        per_choice.append(chunks)
    events: list[tuple[str | None, Any]] = []
    for step in range(max(map(len, per_choice))):
        events += [(None, {**envelope, "choices": [c[step]]}) for c in per_choice if step < len(c)]
    if request.stream_options.get("include_usage"):
        events.append((None, {**envelope, "choices": [], "usage": usage_body(output.usage)}))
    events.append((None, "[DONE]"))
    return sse(events)


@pytest.mark.parametrize("output", CASES)
@pytest.mark.parametrize("usage", [False, True])
def test_chat_stream_bytes_are_the_reference(output: ModelOutput, usage: bool) -> None:
    request = chat_request(stream_options={"include_usage": True}) if usage else chat_request()
    codec = ChatCodec()
    expected = chat_reference(output, request)
    assert plan_parts(codec, output.stream, output, request).data == expected
    assert b"".join(render_frame(f) for f in codec.frames(output, request)) == expected


@pytest.mark.parametrize("output", CASES)
def test_responses_stream_bytes_are_the_reference(output: ModelOutput) -> None:
    codec = ResponsesCodec()
    request = codec.decode({"model": "gpt-4o", "input": "Hi", "stream": True}, {}, {})
    expected = sse([(e["type"], e) for e in codec.events(output, request)])
    assert plan_parts(codec, output.stream, output, request).data == expected
    assert b"".join(render_frame(f) for f in codec.frames(output, request)) == expected


@pytest.mark.parametrize("output", CASES)
def test_messages_stream_bytes_are_the_reference(output: ModelOutput) -> None:
    codec = MessagesCodec()
    body = {"model": "claude-sonnet-4-5", "max_tokens": 99, "stream": True,
            "messages": [{"role": "user", "content": "Hi"}]}  # fmt: skip
    request = codec.decode(body, {"x-api-key": "k"}, {})
    expected = sse([(e["type"], e) for e in codec.events(output, request)])
    assert plan_parts(codec, output.stream, output, request).data == expected
    assert b"".join(render_frame(f) for f in codec.frames(output, request)) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=3), st.integers(1, 9))
def test_every_api_on_any_text(texts: list[str], chunk: int) -> None:
    _chat_and_responses_are_the_reference(output_of(texts, chunk=chunk))


def _chat_and_responses_are_the_reference(output: ModelOutput) -> None:
    request = chat_request()
    assert plan_parts(ChatCodec(), output.stream, output, request).data == chat_reference(output, request)
    codec = ResponsesCodec()
    request = codec.decode({"model": "gpt-4o", "input": "Hi", "stream": True}, {}, {})
    expected = sse([(e["type"], e) for e in codec.events(output, request)])
    assert plan_parts(codec, output.stream, output, request).data == expected


# ------------------------------------------------------------------------------------------------- planning


PLANS = [
    StreamPlan(chunk_chars=3),
    StreamPlan(chunk_chars=3, interval_ms=5, jitter_ms=2),
    StreamPlan(chunk_chars=3, keepalive_every=4),
    StreamPlan(chunk_chars=3, wire_chunk_bytes=100),
    StreamPlan(chunk_chars=3, faults=(Fault(kind="malformed", after=5),)),
    StreamPlan(chunk_chars=3, faults=(Fault(kind="stream_error", after=7),)),
    StreamPlan(chunk_chars=3, faults=(Fault(kind="disconnect", after=9),)),
]


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("codec", [ChatCodec(), ResponsesCodec(), MessagesCodec()], ids=lambda c: c.api)
def test_planned_from_runs_as_from_frames(plan: StreamPlan, codec: Any) -> None:
    output = output_of(AWKWARD[3:6]).model_copy(update={"stream": plan})
    request = (
        ChatCodec()
        .decode({"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "stream": True}, {}, {})
        .model_copy(update={"api": codec.api})
    )
    expected = plan_wire(codec.frames(output, request), plan, codec, output, request)
    got = plan_parts(codec, plan, output, request)
    assert got == expected
    assert got.writes == expected.writes and tuple(got.frames) == tuple(expected.frames)


def test_lazy_frames_count_without_building_and_equal_the_tuple() -> None:
    parts: list[Part] = [
        Frame("{}", "a"),
        FrameRun("d", '{"t":', "}", ["x", "é", '"']),
        Frame("[DONE]", None, True),
    ]
    lazy = LazyFrames(parts)
    assert len(lazy) == 5 and lazy._frames is None  # counted from the runs, nothing built
    assert lazy == tuple(expand(parts)) and list(lazy) == expand(parts) and lazy[1].data == '{"t":"x"}'
    assert lazy[-1].terminal and lazy == LazyFrames(parts) and hash(lazy) == hash(tuple(expand(parts)))
    assert render_sse(parts) == b"".join(render_frame(f) for f in expand(parts))


def test_a_numbered_run_counts_from_its_first_number() -> None:
    run = FrameRun("e", '{"d":', ',"n":', ["a", "\u2028"], 7)
    assert [f.data for f in run.frames()] == ['{"d":"a","n":7}', '{"d":"\u2028","n":8}']
    assert render_sse([run]) == b"".join(render_frame(f) for f in run.frames())
    assert FrameRun("e", "", "", []).sse() == FrameRun("e", "", "", [], 3).sse() == ""
    # the counters' suffixes are kept per tail and grown on demand: any first number and length, either
    # side of the kept range, gives what each frame renders to
    rng = random.Random(4)
    for _ in range(300):
        first, k = rng.choice((0, 1, 63, 64, 100, 4000, 4090, 5000)), rng.randrange(0, 120)
        texts = [rng.choice(["x", "é", '"', ""]) for _ in range(k)]
        run = FrameRun("ev", '{"d":', rng.choice((',"n":', ',"seq":')), texts, first)
        assert run.sse().encode() == b"".join(render_frame(f) for f in run.frames())


@given(st.text("ab \n\r\t\x00\x7f.é", max_size=40), st.integers(1, 12))
def test_ascii_text_is_cut_every_n_characters(text: str, n: int) -> None:
    pieces = chunk_text(text, n)
    assert "".join(pieces) == text
    if text.isascii():
        assert pieces == [text[i : i + n] for i in range(0, len(text), n)]
    assert chunk_text(text, 2**40) == ([text] if text else [])


# ------------------------------------------------------------------------------------ plain ASCII chunks

ASCII_TEXTS = st.text(
    st.sampled_from("ab .,'<>-/{}[]:0e\x7f~") | st.sampled_from('"\\\n\t\x00\x1fé'), max_size=60
)
"""Mostly plain ASCII texts (what `PlainChunks` takes), now and then a character that sends them the
general way (a quote, a backslash, a control character, a non-ASCII letter)."""


def is_plain(text: str) -> bool:
    return text.isascii() and encode_basestring(text) == '"' + text + '"'


@given(ASCII_TEXTS, st.integers(0, 12))
def test_plain_chunks_are_the_pieces_of_chunk_text(text: str, n: int) -> None:
    plain = PlainChunks.of(text, n)
    if n < 1:
        assert plain is None
        with pytest.raises(ValueError):
            chunk_pieces(text, n)
        return
    expected = chunk_text(text, n)
    assert (plain is not None) == is_plain(text)
    got = chunk_pieces(text, n)
    assert list(got) == expected and len(got) == len(expected) and bool(got) == bool(expected)
    assert got == expected and list(got[:2]) == expected[:2]
    if plain is not None:
        assert plain == expected and plain == PlainChunks.of(text, n) and hash(plain) == hash(tuple(expected))
        assert [p.decode() for p in plain.unpacked()] == expected
    plan = StreamPlan(chunk_chars=n)
    assert list(text_pieces(text, plan)) == text_deltas(text, plan)
    cut = StreamPlan(chunk_chars=n, deltas=[text[:1], text[1:]] if text else None)
    assert text_pieces(text, cut) == text_deltas(text, cut)  # explicit deltas: the plan's own pieces


NUMBERS = st.sampled_from([None, 0, 5, 4090, 5000])
HEADS = st.sampled_from(['{"d":', '{"model":"é","d":'])


@settings(max_examples=300, deadline=None)
@given(ASCII_TEXTS, st.integers(1, 9), st.sampled_from([None, "ev"]), NUMBERS, HEADS)
def test_a_run_of_plain_chunks_writes_what_its_frames_render(
    text: str, n: int, event: str | None, number: int | None, head: str
) -> None:
    texts = chunk_pieces(text, n)
    run = FrameRun(event, head, "}" if number is None else ',"n":', texts, number)
    listed = FrameRun(event, head, run.tail, chunk_text(text, n) if text else [], number)
    expected = b"".join(render_frame(f) for f in listed.frames())
    assert run.sse_bytes() == listed.sse().encode() == expected
    assert run.frames() == listed.frames() and run.sse() == listed.sse()
    parts: list[Part] = [Frame("{}", "a"), run, Frame('{"é":1}'), listed, run, Frame("[DONE]", None, True)]
    assert render_sse(parts) == b"".join(render_frame(f) for f in expand(parts))
    assert len(LazyFrames(parts)) == len(expand(parts))


@settings(max_examples=60, deadline=None)
@given(st.lists(ASCII_TEXTS, min_size=1, max_size=3), st.integers(1, 9))
def test_every_api_on_plain_ascii_text(texts: list[str], chunk: int) -> None:
    output = output_of(texts, chunk=chunk)
    _chat_and_responses_are_the_reference(output)
    messages = MessagesCodec()
    body = {"model": "claude-sonnet-4-5", "max_tokens": 99, "stream": True,
            "messages": [{"role": "user", "content": "Hi"}]}  # fmt: skip
    request = messages.decode(body, {}, {})
    expected = sse([(e["type"], e) for e in messages.events(output, request)])
    assert plan_parts(messages, output.stream, output, request).data == expected
    for plan in PLANS:  # paced, cut or faulty: planned from the frames the runs expand to
        paced = output.model_copy(update={"stream": plan.model_copy(update={"chunk_chars": chunk})})
        frames = messages.frames(paced, request)
        assert plan_parts(messages, paced.stream, paced, request) == plan_wire(
            frames, paced.stream, messages, paced, request
        )
