"""Paced streams on time: absolute deadlines, one shared timer, and starts that cannot starve the others.

A paced stream's writes are due at fixed times from the stream's start (`start + sum of the planned
delays so far`), never "an interval after the last write went out": a late wake-up is not passed on to the
frames after it, so a stream ends when planned however busy the loop was on the way.

One `Pacer` per event loop keeps every stream's next deadline in a heap and arms a single timer for the
earliest one. When it fires, it writes the frame of every stream that is due, by running the stream's
`send` right there (it completes at once unless the socket's buffer is full; then the rest of that send
waits for the buffer to drain, without holding up the other streams). So a frame costs one heap entry and
one `send`, not a timer, a future and a task wake-up of its own.

Starting a stream (decoding, drawing, encoding its answer) is the expensive part, and a burst of
requests that arrive together runs back to back in one turn of the loop, with no timer firing in between:
500 paced requests at once would hold every running stream's frames back for the whole burst. While paced
streams are running, `Pacer.admit` therefore lets requests start only for a couple of milliseconds per
turn of the loop; the others wait for the next turn, after the timers have fired.

A full garbage collection walks every object the server keeps (journal, rule histories, stores): 5-20 ms
during which no frame goes out. While paced streams run, the collector's young generations work as usual
but full collections wait (`GcHold`) until the last stream ends, or at most `_GC_HOLD_S`, so a server
that always has paced streams running still collects now and then.
"""

from __future__ import annotations

import asyncio
import gc
import heapq
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from ..codec.sse import StreamAborted, WirePlan, Write, frames_in
from .writes import SCOPE_KEY as WRITES_KEY
from .writes import BatchedWrites

__all__ = ["GcHold", "PacedStream", "Pacer", "pacer"]

_SLICE_S = 0.002
"""How long requests may start back to back while paced streams run, before the loop turns again."""
_EARLY_S = 0.0005
"""A write due this close to a timer's firing goes out with it. uvloop's timers have millisecond resolution
(a delay is rounded to whole milliseconds, under half a millisecond to none): waiting for less than this would
spin the loop."""

_GC_HOLD_S = 60.0
"""The longest full collections wait while paced streams keep running."""
_NO_FULL = 1 << 30
"""A third threshold no count of young collections reaches: no automatic full collection."""

# the clocks, as module names so tests can stand in for them
_monotonic = time.monotonic
_perf_counter = time.perf_counter

_PACERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pacer] = weakref.WeakKeyDictionary()


class GcHold:
    """Holds automatic full collections back while any holder (a pacer with streams running) wants it.

    Process-wide, as the collector is: the first hold raises the third threshold out of reach, the last
    release puts the thresholds back as they were (a full collection then comes when it is due). Young
    generations are collected as usual throughout.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: tuple[int, int, int] | None = None
        self.since = 0.0
        """When the current hold began, or its last forced collection ran (monotonic seconds)."""

    def hold(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                self._saved = gc.get_threshold()
                gc.set_threshold(self._saved[0], self._saved[1], _NO_FULL)
                self.since = _monotonic()

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._saved is not None:
                gc.set_threshold(*self._saved)
                self._saved = None

    def overdue(self, now: float) -> None:
        """Collect everything once a hold has lasted `_GC_HOLD_S`: one pause a minute, not a leak."""
        if self._saved is not None and now - self.since > _GC_HOLD_S:
            self.since = now
            gc.collect()


GC_HOLD = GcHold()


def pacer() -> Pacer:
    """The running loop's pacer."""
    loop = asyncio.get_running_loop()
    last = _LAST
    if last is not None and last.loop is loop:  # every request asks: skip the weak dict's look-up
        return last
    p = _PACERS.get(loop)
    if p is None:
        p = _PACERS[loop] = Pacer(loop)
    return _remember(p)


_LAST: Pacer | None = None


def _remember(p: Pacer) -> Pacer:
    global _LAST
    _LAST = p
    return p


class Pacer:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[tuple[float, int, _Run]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | asyncio.Handle | None = None
        self._timer_at = float("inf")
        self.running = 0
        """Paced streams in progress (`started` / `ended`)."""
        self._slice_start: float | None = None

    def started(self) -> None:
        self.running += 1
        if self.running == 1:
            GC_HOLD.hold()

    def ended(self) -> None:
        self.running -= 1
        if self.running == 0:
            GC_HOLD.release()

    # -- admission --
    async def admit(self) -> None:
        """Return when a request may start its (CPU-bound) work without delaying running streams."""
        while self.running:
            now = _perf_counter()
            if self._slice_start is None:
                self._slice_start = now
                # runs on the next turn of the loop, after its timers: a fresh slice then
                self.loop.call_soon(self._end_slice)
            if now - self._slice_start < _SLICE_S:
                return
            await asyncio.sleep(0)

    def _end_slice(self) -> None:
        self._slice_start = None

    # -- the timer --
    def schedule(self, when: float, run: _Run) -> None:
        heapq.heappush(self._heap, (when, next(self._order), run))
        if when < self._timer_at - _EARLY_S:
            self._arm(when)

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self.loop.call_later(max(_EARLY_S, when - _monotonic()), self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._timer_at = float("inf")
        heap = self._heap
        now = _monotonic()
        GC_HOLD.overdue(now)
        horizon = now + _EARLY_S
        due: list[_Run] = []
        while heap and heap[0][0] <= horizon:
            due.append(heapq.heappop(heap)[2])
        for run in due:
            run.step()  # may schedule (and arm the timer for) its next write
        if heap and heap[0][0] < self._timer_at - _EARLY_S:
            self._arm(heap[0][0])


class _Run:
    """One paced stream in progress: its writes, the next one's deadline, and how to send."""

    __slots__ = ("aborts", "done", "due", "ending", "i", "left", "pacer", "send", "sent", "stopped", "writes")

    def __init__(self, writes: Sequence[Write], aborts: bool, send: Send, p: Pacer) -> None:
        self.writes = writes
        self.aborts = aborts
        self.send = send
        self.pacer = p
        self.i = 0
        self.due = 0.0
        self.stopped = False
        self.ending = False
        self.left = False
        """The client hung up before the end."""
        self.sent = 0
        """Bytes handed to `send` so far."""
        self.done: asyncio.Future[None] = p.loop.create_future()

    def start(self) -> None:
        self.due = _monotonic()
        self.step()

    def stop(self) -> None:
        """The client left: nothing more is written."""
        if not self.ending:
            self.left = True
        self.stopped = True
        if not self.done.done():
            self.done.set_result(None)

    def step(self) -> None:
        """Write the current write (its time has come) and every undelayed one after it, then schedule the
        next. A loop, not recursion: a plan may hold thousands of undelayed writes in a row (a long
        answer in small wire chunks), more than Python's recursion limit."""
        while not self.stopped:
            w = self.writes[self.i]
            self.i += 1
            if w.data:
                self.sent += len(w.data)
                body = self.send({"type": "http.response.body", "body": w.data, "more_body": True})
                if not self._drive(body.__await__()):
                    return  # `send` waits (flow control): `_resume` goes on when it is done
            if not self._advance():
                return

    def _advance(self) -> bool:
        """After a write: True when the next write is due at once (the caller writes it); otherwise end
        the body or schedule the next write."""
        if self.stopped:
            return False
        if self.i == len(self.writes):
            if self.aborts:  # the connection is dropped, not closed: no end of body
                self.done.set_result(None)
            else:
                self.ending = True
                end = self.send({"type": "http.response.body", "body": b"", "more_body": False})
                self._drive(end.__await__())
            return False
        delay = self.writes[self.i].delay_ms / 1000.0
        if delay <= 0:
            return True
        self.due += delay  # from the planned time of the previous write, not from when it went out
        self.pacer.schedule(self.due, self)
        return False

    def _drive(self, coro: Generator[Any, None, None], exc: BaseException | None = None) -> bool:
        """Run `send` here: True when it finished at once (a write, not the end of the body); if it has to
        wait (flow control), it is resumed when what it waits for is done."""
        try:
            waiting = coro.throw(exc) if exc is not None else coro.send(None)
        except StopIteration:
            if not self.ending:
                return True
            if not self.done.done():
                self.done.set_result(None)  # the end of the body went out
            return False
        except BaseException as error:  # whatever `send` raised ends the stream with it
            if not self.done.done():
                self.done.set_exception(error)
            self.stopped = True
            return False
        if isinstance(waiting, asyncio.Future):
            waiting._asyncio_future_blocking = False
            waiting.add_done_callback(lambda f: self._resume(coro, f))
        else:  # a bare yield: go on at the next turn of the loop
            self.pacer.loop.call_soon(self._resume, coro, None)
        return False

    def _resume(self, coro: Generator[Any, None, None], fut: asyncio.Future[Any] | None) -> None:
        exc: BaseException | None = None
        if fut is not None:
            exc = asyncio.CancelledError() if fut.cancelled() else fut.exception()
        if self._drive(coro, exc) and self._advance():
            self.step()


class PacedStream(Response):
    """An SSE answer whose writes go out at the times its `WirePlan` says (see the module docstring).

    Ends with StreamAborted after the last write when the plan drops the connection.
    """

    media_type = "text/event-stream"

    def __init__(self, wire: WirePlan, headers: Mapping[str, str] | None = None,
                 raw_headers: list[tuple[bytes, bytes]] | None = None,
                 on_end: Callable[[int, bool], None] | None = None) -> None:  # fmt: skip
        self.wire = wire
        self.on_end = on_end
        """Told `(frames_sent, cancelled)` once the stream has ended, however it ended."""
        self.status_code = 200
        self.background = None
        if raw_headers is not None:
            self.raw_headers = raw_headers
        else:
            self.init_headers(headers)  # no `body` attribute: no content-length, the body goes chunked

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writes: BatchedWrites | None = scope.get(WRITES_KEY)
        if writes is not None:  # served: the frames go out when planned, not with the loop pass's batch
            writes.immediate = True
        try:
            await self._send_all(scope, receive, send)
        finally:
            if writes is not None:
                writes.immediate = False

    async def _send_all(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        p = pacer()
        run = _Run(self.wire.writes, self.wire.aborts, send, p)
        watcher = asyncio.ensure_future(_until_disconnect(receive, run))
        p.started()
        cancelled = True  # unless the run ends on its own: a send that raised, a cancelled task
        try:
            run.start()
            await run.done
            cancelled = run.left
        finally:
            p.ended()
            run.stopped = True
            watcher.cancel()
            if self.on_end is not None:
                sent = self.wire.data[: run.sent] if run.sent < len(self.wire.data) else self.wire.data
                self.on_end(frames_in(sent), cancelled)
        if self.wire.aborts:
            raise StreamAborted(len(self.wire.frames))


async def _until_disconnect(receive: Receive, run: _Run) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            run.stop()
            return

