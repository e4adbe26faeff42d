"""Paced streams (`synthgpt.server.pacing`): writes due at absolute times from the stream's start, sent in
order with the planned bytes, stopped by a disconnect, and request starts held back while streams run.

No timing is asserted against the wall clock: deadlines are checked with a fake clock and a fake timer."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import MutableMapping
from typing import Any

import pytest

from synthgpt.codec.sse import StreamAborted, WirePlan, Write
from synthgpt.server import pacing
from synthgpt.server.pacing import PacedStream, Pacer, _Run

Message = MutableMapping[str, Any]


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class RecordingPacer(Pacer):
    """Records each deadline instead of arming a timer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.deadlines: list[float] = []

    def schedule(self, when: float, run: _Run) -> None:
        self.deadlines.append(when)


WIRE = WirePlan(
    (Write(b"a", 0.0), Write(b"b", 20.0), Write(b"c", 20.0), Write(b"d", 30.0)), frames=(), aborts=False
)


async def test_deadlines_count_from_the_start_not_from_when_writes_went_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(pacing, "_monotonic", clock)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    p = RecordingPacer(asyncio.get_running_loop())
    run = _Run(WIRE.writes, False, send, p)
    run.start()  # at t=100: "a" goes out at once, "b" is due at 100.020
    clock.t = 100.035  # the timer fired 15 ms late
    run.step()  # "b": "c" is still due 20 ms after b's planned time, not after it went out
    clock.t = 100.041
    run.step()
    clock.t = 100.200
    run.step()  # "d", then the end of the body
    assert p.deadlines == pytest.approx([100.020, 100.040, 100.070])
    assert [(m["body"], m["more_body"]) for m in sent] == [
        (b"a", True), (b"b", True), (b"c", True), (b"d", True), (b"", False)
    ]  # fmt: skip
    assert run.done.done() and run.done.result() is None


async def test_a_paced_stream_sends_its_writes_in_order_then_ends() -> None:
    wire = WirePlan((Write(b"one", 0.0), Write(b"two", 1.0), Write(b"three", 1.0)), frames=())
    sent = await _serve(PacedStream(wire, {"x-test": "1"}))
    assert sent[0]["type"] == "http.response.start" and (b"x-test", b"1") in sent[0]["headers"]
    assert not any(k == b"content-length" for k, _ in sent[0]["headers"])
    assert [(m["body"], m["more_body"]) for m in sent[1:]] == [
        (b"one", True), (b"two", True), (b"three", True), (b"", False)
    ]  # fmt: skip


async def test_a_dropped_connection_ends_without_the_end_of_body() -> None:
    wire = WirePlan((Write(b"one", 0.0), Write(b"two", 1.0)), frames=(), aborts=True)
    sent: list[Message] = []
    with pytest.raises(StreamAborted):
        await _serve(PacedStream(wire), sent)
    assert [m["body"] for m in sent[1:]] == [b"one", b"two"]


async def test_a_client_that_leaves_stops_the_stream() -> None:
    wire = WirePlan(tuple(Write(bytes([65 + i]), 0.0 if i == 0 else 5.0) for i in range(50)), frames=())
    sent: list[Message] = []
    left = asyncio.Event()

    async def receive() -> Message:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)
        if len(sent) == 3:  # start, then two frames: the client goes
            left.set()

    await asyncio.wait_for(PacedStream(wire)({"type": "http"}, receive, send), timeout=10)
    assert 3 <= len(sent) < 10
    assert all(m.get("more_body", True) for m in sent)  # no end of body was sent


async def test_a_send_that_must_wait_resumes_and_keeps_the_order() -> None:
    wire = WirePlan((Write(b"one", 0.0), Write(b"two", 1.0), Write(b"three", 1.0)), frames=())
    sent: list[Message] = []

    async def slow_send(message: Message) -> None:  # like uvicorn's send when the socket buffer is full
        await asyncio.sleep(0.002)
        await asyncio.sleep(0)
        sent.append(message)

    await _serve(PacedStream(wire), sent, send=slow_send)
    assert [m.get("body") for m in sent[1:]] == [b"one", b"two", b"three", b""]


async def test_an_error_in_send_ends_the_stream_with_it() -> None:
    wire = WirePlan((Write(b"one", 0.0), Write(b"two", 1.0)), frames=())

    async def send(message: Message) -> None:
        if message.get("body") == b"two":
            raise OSError("broken pipe")

    with pytest.raises(OSError, match="broken pipe"):
        await _serve(PacedStream(wire), send=send)


async def test_starts_wait_for_the_next_turn_of_the_loop_while_streams_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(pacing, "_perf_counter", clock)
    p = Pacer(asyncio.get_running_loop())
    await asyncio.wait_for(p.admit(), 1)  # no stream running: never waits
    p.running = 1
    # all in one turn of the loop, as a burst of requests arriving together runs
    first = p.admit().__await__()
    with pytest.raises(StopIteration):
        first.send(None)  # opens a slice and goes on
    clock.t += 0.001
    second = p.admit().__await__()
    with pytest.raises(StopIteration):
        second.send(None)  # still within the slice
    clock.t += 0.005
    third = p.admit().__await__()
    third.send(None)  # the slice is spent: it yields to the loop instead of starting
    await asyncio.sleep(0)  # the loop turns (its timers would fire now): a new slice opens
    with pytest.raises(StopIteration):
        third.send(None)


def test_full_collections_wait_while_streams_run(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(pacing, "_monotonic", clock)
    collected: list[int] = []
    monkeypatch.setattr(pacing.gc, "collect", lambda generation=2: collected.append(generation) or 0)
    before = gc.get_threshold()
    hold = pacing.GcHold()
    try:
        hold.hold()
        hold.hold()  # a second holder (another loop's pacer)
        assert gc.get_threshold() == (before[0], before[1], pacing._NO_FULL)
        hold.release()
        assert gc.get_threshold()[2] == pacing._NO_FULL  # still held by the first
        clock.t += pacing._GC_HOLD_S - 1
        hold.overdue(clock.t)
        assert collected == []
        clock.t += 2
        hold.overdue(clock.t)  # held for too long: one full collection, and the hold goes on
        assert collected == [2]
        hold.overdue(clock.t + 1)
        assert collected == [2]
    finally:
        hold.release()
    assert gc.get_threshold() == before
    hold.overdue(clock.t + 10 * pacing._GC_HOLD_S)  # not held: nothing to force
    assert collected == [2]


async def test_a_running_stream_holds_full_collections() -> None:
    before = gc.get_threshold()
    seen: list[int] = []

    async def record(message: Any) -> None:
        if message["type"] == "http.response.body":  # the body goes out while the stream runs
            seen.append(gc.get_threshold()[2])

    await _serve(PacedStream(WirePlan((Write(b"a", 0.0), Write(b"b", 1.0)), frames=())), send=record)
    assert seen == [pacing._NO_FULL] * 3  # two writes and the end of the body
    assert gc.get_threshold() == before


async def _serve(
    stream: PacedStream, sent: list[Message] | None = None, send: Any = None
) -> list[Message]:
    out: list[Message] = [] if sent is None else sent
    never = asyncio.Event()

    async def receive() -> Message:
        await never.wait()
        return {"type": "http.disconnect"}

    async def record(message: Message) -> None:
        out.append(message)

    await asyncio.wait_for(stream({"type": "http"}, receive, send or record), timeout=10)
    return out
