"""A served connection's socket writes, gathered over one pass of the event loop and made together.

uvicorn writes a response's head and each body part to the socket as the app sends them. On loopback each
write that finds the client asleep wakes it, and the kernel charges that wake-up to the writer: ~18 µs of
server CPU per answer on the 2-core VM of bench/ (a third of a replayed chat answer), against a few µs of
Python. `BatchedWrites` holds a connection's writes until the loop's next pass (one callback per pass for
all connections), then makes each connection's writes as one: the answers of many connections reach a
client while it is still awake from the first of them, and a head and its body go out as one segment.
Served replays cost ~67 → ~46 µs of CPU each, distinct chat answers ~227 → ~189 µs (bench/PROFILE.md).

A paced stream (`server.pacing.PacedStream`) writes at once: its frames are due at planned times, and a
batch would put the pass's length on each. The rest of its connection's answers are batched.

What it costs: a write goes out one loop pass later (a few µs while the loop is idle), or once
`BATCH_CONNECTIONS` connections hold writes, whichever comes first (a pass that sends hundreds of paced
frames would otherwise hold its first frame for all of them). A connection's
bytes keep their order; a write of `FLUSH_BYTES` or more is made at once (with what was held before it), so
flow control still sees a large answer's bytes as they are sent, and close() writes what is held first.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

__all__ = ["BATCH_CONNECTIONS", "FLUSH_BYTES", "SCOPE_KEY", "BatchedWrites"]

SCOPE_KEY = "synthgpt.writes"
"""Where a request's scope holds its connection's `BatchedWrites` (served by `synthgpt serve`)."""

FLUSH_BYTES = 64 * 1024
"""Held bytes at which a connection writes at once rather than at the loop's next pass."""
BATCH_CONNECTIONS = 16
"""Connections holding writes at which they all write at once: in a pass that answers many requests, the
first answer would otherwise wait for all the others, while a batch of this size already spares the client
most of its wake-ups (served replays: ~48 µs per request unbounded, ~49 with it)."""


class BatchedWrites:
    """A transport whose writes are made at the event loop's next pass, joined (see the module's notes).
    Everything but `write` and `close` is the wrapped transport's own."""

    __slots__ = ("_batch", "_held", "_size", "immediate", "transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self._batch = _batch_for(loop)
        self._held: list[bytes] | None = None
        self._size = 0
        self.immediate = False
        """Write at once (a paced stream, whose frames go out at planned times, sets it while it runs)."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if self.immediate:
            if held is not None:
                self.flush()
            if data:
                self._write(data)
            return
        if held is None:
            if len(data) >= FLUSH_BYTES:  # nothing held before it: no reason to wait
                self._write(data)
                return
            if not data:
                return
            self._held = [bytes(data)]
            self._size = len(data)
            self._batch.add(self)
            return
        held.append(bytes(data))
        self._size += len(data)
        if self._size >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write what is held now (the batch's callback, a large write, or close)."""
        held = self._held
        if held is None:
            return
        self._held = None
        self._write(held[0] if len(held) == 1 else b"".join(held))

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        transport = self.transport
        if transport.is_closing():  # the client left meanwhile: nothing can reach it (uvloop would raise)
            return
        transport.write(data)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self.transport.pause_reading()

    def resume_reading(self) -> None:
        self.transport.resume_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.transport.set_protocol(protocol)

    def __getattr__(self, name: str) -> Any:  # the rest of the transport's interface (abort, write_eof, …)
        return getattr(self.transport, name)


class _Batch:
    """The connections of one event loop holding writes, flushed by one callback at the loop's next pass."""

    __slots__ = ("loop", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: list[BatchedWrites] = []

    def add(self, conn: BatchedWrites) -> None:
        waiting = self.waiting
        if not waiting:
            self.loop.call_soon(self.flush)
        elif len(waiting) >= BATCH_CONNECTIONS:  # the first of them waited long enough: out with them (the
            self.flush()  # callback already asked for writes what comes after)
            waiting = self.waiting
        waiting.append(conn)

    def flush(self) -> None:
        """Write what the waiting connections hold (the pass's callback, or a full batch)."""
        waiting, self.waiting = self.waiting, []
        for conn in waiting:
            try:
                conn.flush()
            except Exception:  # one broken connection must not keep the others' answers
                conn.transport.abort()


_BATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batch] = weakref.WeakKeyDictionary()


def _batch_for(loop: asyncio.AbstractEventLoop) -> _Batch:
    batch = _BATCHES.get(loop)
    if batch is None:
        batch = _BATCHES[loop] = _Batch(loop)
    return batch
