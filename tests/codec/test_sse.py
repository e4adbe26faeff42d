"""The shared SSE layer: text chunking, faults, keep-alives, pacing and transport chunking."""

from __future__ import annotations

import itertools
import json
import unicodedata
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from synthgpt.codec.base import Frame
from synthgpt.codec.sse import (
    KEEPALIVE,
    StreamAborted,
    WirePlan,
    Write,
    chunk_text,
    iter_bytes,
    malform,
    plan_wire,
    stream_bytes,
)
from synthgpt.errors import RequestError
from synthgpt.model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest, StreamPlan


class FakeCodec:
    """Only what the SSE layer asks of a codec: its mid-stream error frames."""

    api: ApiKind = "chat"

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        raise NotImplementedError

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        raise NotImplementedError

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        return [Frame(json.dumps({"error": fault.message, "sent": sent}), event="error")]

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        raise NotImplementedError


FRAMES = [Frame('{"n":0}'), Frame('{"n":1}'), Frame('{"n":2}'), Frame("[DONE]", terminal=True)]
OUT = ModelOutput(id_seed=1234)
REQ = ModelRequest()


def plan(frames: list[Frame] = FRAMES, **kwargs: Any) -> WirePlan:
    return plan_wire(frames, StreamPlan(**kwargs), FakeCodec(), OUT, REQ)


def data(frames: list[Frame] = FRAMES, **kwargs: Any) -> str:
    return plan(frames, **kwargs).data.decode()


# ---------------------------------------------------------------------------------------------- chunk_text


def test_chunk_text_ascii() -> None:
    assert chunk_text("Hello world", 4) == ["Hell", "o wo", "rld"]
    assert chunk_text("", 4) == []
    assert chunk_text("abc", 10) == ["abc"]


def test_chunk_text_counts_code_points_not_bytes() -> None:
    assert chunk_text("héllo wörld", 3) == ["hél", "lo ", "wör", "ld"]
    assert chunk_text("日本語のテキスト", 3) == ["日本語", "のテキ", "スト"]


def test_chunk_text_keeps_combining_marks_and_emoji_sequences_whole() -> None:
    e_acute = "e\u0301"  # e + combining acute accent
    assert chunk_text(f"a{e_acute}b", 2) == [f"a{e_acute}", "b"]
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
    assert chunk_text(f"x{family}y", 1) == ["x", family, "y"]
    flag = "\U0001f1eb\U0001f1f7"
    assert chunk_text(f"{flag}{flag}", 1) == [flag, flag]
    thumbs = "\U0001f44d\U0001f3fd"  # with a skin-tone modifier
    assert chunk_text(f"{thumbs}!", 1) == [thumbs, "!"]


def test_chunk_text_never_splits_a_surrogate_pair_held_in_a_str() -> None:
    pair = "\ud83d\ude00"  # how some decoders leave astral characters
    assert chunk_text(f"a{pair}b", 1) == ["a", pair, "b"]


def test_chunk_text_refuses_a_zero_size() -> None:
    with pytest.raises(ValueError, match="chunk size must be >= 1, got 0"):
        chunk_text("abc", 0)


@given(st.text(), st.integers(min_value=1, max_value=12))
def test_chunk_text_pieces_rebuild_the_text(text: str, n: int) -> None:
    pieces = chunk_text(text, n)
    assert "".join(pieces) == text
    assert all(pieces)
    for piece in pieces[:-1]:
        assert len(piece) >= n
    for left, right in itertools.pairwise(pieces):
        # a piece never starts with a combining mark or a joiner that belongs to its predecessor
        assert unicodedata.category(right[0])[0] != "M" or left[-1] in "\u200d"
        assert not ("\ud800" <= left[-1] <= "\udbff" and "\udc00" <= right[0] <= "\udfff")


@given(st.text(alphabet=st.characters(codec="ascii"), min_size=1), st.integers(min_value=1, max_value=12))
def test_chunk_text_ascii_pieces_are_exact(text: str, n: int) -> None:
    pieces = chunk_text(text, n)
    assert [len(p) for p in pieces[:-1]] == [n] * (len(pieces) - 1)
    assert 1 <= len(pieces[-1]) <= n


# ------------------------------------------------------------------------------------------------- planning


def test_healthy_unpaced_stream_is_one_write() -> None:
    wire = plan()
    assert wire.writes == (Write(b'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n'),)
    assert not wire.aborts
    assert wire.frames == tuple(FRAMES)


def test_named_events_are_rendered_with_their_event_line() -> None:
    assert data([Frame("{}", event="ping")]) == "event: ping\ndata: {}\n\n"


def test_truncate_stops_cleanly_without_terminator() -> None:
    wire = plan(faults=(Fault(kind="truncate", after=2),))
    assert wire.data == b'data: {"n":0}\n\ndata: {"n":1}\n\n'
    assert not wire.aborts


def test_disconnect_aborts_after_n_frames() -> None:
    wire = plan(faults=(Fault(kind="disconnect", after=1),))
    assert wire.data == b'data: {"n":0}\n\n'
    assert wire.aborts


def test_ending_faults_never_let_the_terminator_through() -> None:
    wire = plan(faults=(Fault(kind="truncate", after=99),))
    assert wire.frames == tuple(FRAMES[:3])


def test_stream_error_sends_the_codec_error_frames_then_ends() -> None:
    wire = plan(faults=(Fault(kind="stream_error", after=1, message="boom"),))
    assert wire.data.decode() == 'data: {"n":0}\n\nevent: error\ndata: {"error": "boom", "sent": 1}\n\n'
    assert not wire.aborts


def test_the_earliest_ending_fault_wins() -> None:
    wire = plan(faults=(Fault(kind="truncate", after=3), Fault(kind="disconnect", after=1)))
    assert wire.aborts
    assert len(wire.frames) == 1


def test_malformed_frame_is_invalid_json_and_the_stream_goes_on() -> None:
    wire = plan(faults=(Fault(kind="malformed", after=1),))
    assert [f.data for f in wire.frames] == ['{"n":0}', '{"n', '{"n":2}', "[DONE]"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(wire.frames[1].data)


def test_malformed_never_hits_the_terminator() -> None:
    wire = plan(faults=(Fault(kind="malformed", after=10),))
    assert wire.frames[2].data == '{"n'
    assert wire.frames[3].data == "[DONE]"


@pytest.mark.parametrize(
    "payload", ["{}", '{"a":1}', '{"choices":[{"delta":{"content":"x"}}]}', "[1,2]", "x"]
)
def test_malform_always_breaks_json(payload: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(malform(payload))


def test_unknown_item_is_left_to_the_codec() -> None:
    assert plan(faults=(Fault(kind="unknown_item", after=1),)).frames == tuple(FRAMES)


def test_keepalive_comments_between_frames_not_after_the_last() -> None:
    assert data(keepalive_every=2) == (
        'data: {"n":0}\n\ndata: {"n":1}\n\n: ping\n\ndata: {"n":2}\n\ndata: [DONE]\n\n'
    )
    assert data(keepalive_every=1).count(KEEPALIVE.decode()) == 3


def test_first_delay_goes_before_the_single_write() -> None:
    assert plan(first_delay_ms=50).writes == (Write(plan().data, 50.0),)


def test_first_delay_applies_even_with_nothing_to_send() -> None:
    wire = plan(first_delay_ms=30, faults=(Fault(kind="truncate", after=0),))
    assert wire.writes == (Write(b"", 30.0),)


def test_interval_gives_one_write_per_frame() -> None:
    wire = plan(first_delay_ms=5, interval_ms=20)
    assert [w.delay_ms for w in wire.writes] == [5.0, 20.0, 20.0, 20.0]
    assert [w.data for w in wire.writes] == [
        b'data: {"n":0}\n\n',
        b'data: {"n":1}\n\n',
        b'data: {"n":2}\n\n',
        b"data: [DONE]\n\n",
    ]


def test_jitter_is_seeded_by_the_answer() -> None:
    a = [w.delay_ms for w in plan(interval_ms=10, jitter_ms=5).writes]
    b = [w.delay_ms for w in plan(interval_ms=10, jitter_ms=5).writes]
    other = [
        w.delay_ms
        for w in plan_wire(
            FRAMES, StreamPlan(interval_ms=10, jitter_ms=5), FakeCodec(), ModelOutput(id_seed=99), REQ
        ).writes
    ]
    assert a == b
    assert a != other
    assert a[0] == 0 and all(10 <= d <= 15 for d in a[1:])


def test_wire_chunks_cut_the_byte_stream_at_fixed_offsets() -> None:
    wire = plan(wire_chunk_bytes=7)
    assert wire.data == plan().data
    assert [len(w.data) for w in wire.writes] == [7] * 8 + [3]
    assert wire.writes[2].data == b"\ndata: "


def test_wire_chunks_with_pacing_keep_global_offsets_and_delays() -> None:
    wire = plan(wire_chunk_bytes=10, interval_ms=3)
    assert wire.data == plan().data
    assert [(len(w.data), w.delay_ms) for w in wire.writes] == [
        (10, 0.0),
        (5, 0.0),
        (5, 3.0),
        (10, 0.0),
        (10, 3.0),
        (5, 0.0),
        (5, 3.0),
        (9, 0.0),
    ]


# ----------------------------------------------------------------------------------------------- performing


async def test_stream_bytes_sleeps_as_planned_and_yields_the_bytes() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    got = [
        b
        async for b in stream_bytes(
            FRAMES, StreamPlan(first_delay_ms=100, interval_ms=20), FakeCodec(), OUT, REQ, sleep=sleep
        )
    ]
    assert b"".join(got) == plan().data
    assert slept == [0.1, 0.02, 0.02, 0.02]


async def test_stream_bytes_unpaced_never_sleeps() -> None:
    async def sleep(seconds: float) -> None:
        raise AssertionError("slept")

    got = [b async for b in stream_bytes(FRAMES, StreamPlan(), FakeCodec(), OUT, REQ, sleep=sleep)]
    assert len(got) == 1


async def test_stream_bytes_raises_after_the_last_write_on_disconnect() -> None:
    got: list[bytes] = []
    with pytest.raises(StreamAborted, match="after 2 frames"):
        async for chunk in stream_bytes(
            FRAMES, StreamPlan(faults=(Fault(kind="disconnect", after=2),)), FakeCodec(), OUT, REQ
        ):
            got.append(chunk)
    assert got == [b'data: {"n":0}\n\ndata: {"n":1}\n\n']


def test_iter_bytes_is_the_sync_twin() -> None:
    slept: list[float] = []
    it = iter_bytes(
        FRAMES,
        StreamPlan(interval_ms=5, faults=(Fault(kind="disconnect", after=3),)),
        FakeCodec(),
        OUT,
        REQ,
        sleep=slept.append,
    )
    got: list[bytes] = []
    with pytest.raises(StreamAborted):
        got.extend(it)
    assert b"".join(got) == b'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n'
    assert slept == [0.005, 0.005]


@given(
    st.lists(st.text(min_size=1, max_size=30).map(lambda t: json.dumps({"t": t})), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=50),
    st.sampled_from([0.0, 4.0]),
    st.sampled_from([None, 1, 3]),
)
def test_wire_chunks_never_change_the_bytes(
    payloads: list[str], size: int, interval: float, every: Any
) -> None:
    frames = [Frame(p) for p in payloads] + [Frame("[DONE]", terminal=True)]
    base = plan(frames, interval_ms=interval, keepalive_every=every)
    wire = plan(frames, interval_ms=interval, keepalive_every=every, wire_chunk_bytes=size)
    assert wire.data == base.data
    offset = 0
    for w in wire.writes:
        assert 0 < len(w.data) <= size
        # no piece crosses a multiple of size
        assert offset // size == (offset + len(w.data) - 1) // size
        offset += len(w.data)
    assert sum(w.delay_ms for w in wire.writes) == sum(w.delay_ms for w in base.writes)
