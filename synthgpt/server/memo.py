"""A bounded memo of encoded answers, for requests whose answer cannot depend on call order.

With a fixed clock, an answer that no call-order-dependent rule could have shaped (no `times` rule at or
before the rule that answered, no draw that read the rule's call count: see `MockGPT.resolve`) is
a pure function of (engine seed, rules, the request's bytes, the clock reading). The server keeps the
encoded bytes of such answers and, when the same request comes again, sends them without decoding or
drawing anything; the call is still journaled and counted (`MockGPT.replay`), exactly as if drawn.

The key is everything the answer may depend on: the route's path and query, every request header
(the journal records them and rules may match on them) and the raw body; an answer is kept the second
time its request is seen (a load of all-different requests keeps nothing); the memo is emptied whenever
the engine, its seed, its rule list or the clock reading changes. It is bypassed altogether when the
clock is not a FixedClock. Kept: status-200 answers without a first delay, as bytes (a JSON body, an unpaced
stream) or as the planned writes of a paced stream, which a replay sends on its own schedule.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..codec.base import WireCodec
from ..codec.sse import WirePlan, ending_fault, frames_in
from ..engine import MockGPT
from ..engine.memo import generation
from ..errors import StateUnavailable
from ..journal import CallRecord
from ..pipeline import Answered, finish
from ..rules.rule import Rule
from .observe import note_frames, note_output
from .pacing import PacedStream, pacer
from .responses import EventStreamBody, JsonBody

__all__ = [
    "DEFAULT_MEMO_BYTES", "DEFAULT_MEMO_ENTRIES", "MemoEntry", "ResponseMemo", "Slot", "memo_slot",
    "remember", "replay",
]  # fmt: skip

DEFAULT_MEMO_ENTRIES = 256
DEFAULT_MEMO_BYTES = 2 * 1024 * 1024
_MAX_REQUEST_BYTES = 64 * 1024  # larger bodies are rarely repeated verbatim: not worth keeping as keys
_SEEN_KEYS = 1024
_ENTRY_OVERHEAD = 512  # objects and dict slots of one entry, roughly, besides its byte strings

Key = tuple[str, bytes, tuple[tuple[bytes, bytes], ...], bytes]


@dataclass(frozen=True, slots=True)
class MemoEntry:
    """An answer to send again: its status, raw headers and body; the call to journal for each replay."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    rule: Rule
    record: CallRecord
    after: Callable[[], None] | None = None
    """What answering leaves behind besides the journal (the Responses store entry), redone per replay."""
    wire: WirePlan | None = None
    """A paced stream's writes and their delays (`body` is then empty): sent over time, as planned."""

    @property
    def size(self) -> int:
        sent = len(self.body) + (sum(len(w.data) + 64 for w in self.wire.writes) if self.wire else 0)
        return sent + sum(len(k) + len(v) for k, v in self.headers) + _ENTRY_OVERHEAD


class ResponseMemo:
    """At most `max_entries` answers and about `max_bytes` bytes of keys and answers, least recent out."""

    def __init__(self, max_entries: int = DEFAULT_MEMO_ENTRIES, max_bytes: int = DEFAULT_MEMO_BYTES) -> None:
        if max_entries < 0 or max_bytes < 0:
            raise ValueError("memo bounds must be >= 0")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Key, MemoEntry] = OrderedDict()
        self._generation: tuple[Any, ...] | None = None
        self._bytes = 0
        self._lock = threading.Lock()
        # Keys seen once, as hashes: an answer is kept only when its request comes a second time, so a load
        # of all-different requests (the common long run) fills nothing but this small set.
        self._seen: dict[int, None] = {}  # insertion-ordered: the first key is the oldest
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.max_bytes > 0

    def get(self, gen: tuple[Any, ...], key: Key) -> MemoEntry | None:
        with self._lock:
            if gen != self._generation:
                self._reset(gen)
                self.misses += 1
                return None
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry

    def put(self, gen: tuple[Any, ...], key: Key, entry: MemoEntry) -> None:
        """Keep `entry` if `key` was seen before (under this generation) and it fits the bounds."""
        size = entry.size + len(key[3]) + sum(len(k) + len(v) for k, v in key[2])
        if size > self.max_bytes:
            return
        with self._lock:
            if gen != self._generation:  # the rules or the clock changed while this answer was drawn
                return
            h = hash(key)
            seen = self._seen
            if h not in seen:
                seen[h] = None
                if len(seen) > _SEEN_KEYS:
                    del seen[next(iter(seen))]
                return
            del seen[h]
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[key] = entry
            self._bytes += size
            while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
                k, e = self._entries.popitem(last=False)
                self._bytes -= e.size + len(k[3]) + sum(len(a) + len(b) for a, b in k[2])

    def clear(self) -> None:
        with self._lock:
            self._reset(None)

    def _reset(self, gen: tuple[Any, ...] | None) -> None:
        self._entries.clear()
        self._seen.clear()
        self._bytes = 0
        self._generation = gen

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes


Slot = tuple[ResponseMemo, tuple[Any, ...], Key]


def memo_slot(
    memo: ResponseMemo | None, mock: MockGPT, scope: Scope, declared: int | None, body: bytes
) -> Slot | None:
    """Where the answer to this request is looked up and kept: (memo, generation, key); None when it may
    not be (no memo, a clock that moves, a body larger than keys are kept for or of no declared length)."""
    if memo is None or declared is None or declared > _MAX_REQUEST_BYTES or not memo.enabled:
        return None
    gen = generation(mock)
    if gen is None:
        return None
    return memo, gen, (scope["path"], scope["query_string"], tuple(scope["headers"]), body)


async def replay(scope: Scope, receive: Receive, send: Send, mock: MockGPT, entry: MemoEntry) -> bool:
    """Send `entry` again, journaled and counted as a drawn answer; False when it cannot be (the shared
    Responses store is away: the route answers instead, with its 503)."""
    pace = pacer()
    if pace.running:  # a burst of replays is cheap each, not all together: let due frames out first
        await pace.admit()
    if entry.after is not None:
        try:
            entry.after()
        except StateUnavailable:
            return False
    record = mock.replay(entry.rule, entry.record)
    note_output(scope, record.output, record.request)
    stream = record.request.stream
    fault = ending_fault(record.output.stream) if stream else None

    def ended(frames: int, cancelled: bool) -> None:
        note_frames(scope, frames)
        finish(mock, record, None if cancelled else fault, cancelled, frames)

    if entry.wire is not None:
        paced = PacedStream(entry.wire, raw_headers=entry.headers, on_end=ended)
        await paced(scope, receive, send)
        return True
    try:
        await send({"type": "http.response.start", "status": entry.status, "headers": entry.headers})
        await send({"type": "http.response.body", "body": entry.body, "more_body": False})
    except BaseException:
        ended(0, True)
        raise
    if stream:
        ended(frames_in(entry.body), False)
    else:
        finish(mock, record, None)
    return True


def remember(slot: Slot, codec: WireCodec, answered: Answered, response: Response) -> None:
    """Keep a replayable answer under its request's key (`memo_slot`)."""
    drawn = answered.generation
    if drawn is None or not answered.replayable:
        return
    if type(response) not in (Response, JsonBody, EventStreamBody, PacedStream):  # a cut body (`CutJsonBody`)
        return
    memo, gen, key = slot
    wire = response.wire if isinstance(response, PacedStream) else None
    data = b"" if wire else response.data if isinstance(response, EventStreamBody) else response.body
    entry = MemoEntry(
        response.status_code, response.raw_headers, bytes(data), drawn.rule, drawn.record,
        codec.replay_effect(drawn.output, drawn.request), wire,
    )  # fmt: skip
    memo.put(gen, key, entry)
