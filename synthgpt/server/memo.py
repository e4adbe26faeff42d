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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..codec.base import WireCodec
from ..codec.sse import WirePlan, ending_fault, frames_in
from ..engine import MockGPT
from ..engine.memo import KeptAnswers, generation, keeps_answers
from ..errors import StateUnavailable
from ..journal import CallRecord, journal_written
from ..jsonutil import fitted
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


class ResponseMemo(KeptAnswers[Key, MemoEntry]):
    """At most `max_entries` answers and about `max_bytes` bytes of keys and answers, least recent out."""

    def __init__(self, max_entries: int = DEFAULT_MEMO_ENTRIES, max_bytes: int = DEFAULT_MEMO_BYTES) -> None:
        super().__init__(max_entries, max_bytes, generation)

    def put(self, gen: tuple[Any, ...], key: Key, entry: MemoEntry) -> None:
        """Keep `entry`, the answer to its key's second sighting (`sighting` gave `gen`), if it fits the
        bounds."""
        self.store(gen, key, entry, _size(key, entry))


def _size(key: Key, entry: MemoEntry) -> int:
    return entry.size + len(key[3]) + sum(len(k) + len(v) for k, v in key[2])


Slot = tuple[ResponseMemo, Key]


def memo_slot(
    memo: ResponseMemo | None, mock: MockGPT, scope: Scope, declared: int | None, body: bytes
) -> Slot | None:
    """Where the answer to this request is looked up and kept: (memo, key), under `mock`'s generation;
    None when it may not be (no memo, a clock that moves, a body larger than keys are kept for or of no
    declared length)."""
    if memo is None or declared is None or declared > _MAX_REQUEST_BYTES or not memo.enabled:
        return None
    if not keeps_answers(mock):
        return None
    return memo, (scope["path"], scope["query_string"], tuple(scope["headers"]), body)


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
    if await journal_written(mock.journal) is not None:
        return False  # the journal could not take it: the route answers (and refuses) instead
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


def remember(
    slot: Slot, gen: tuple[Any, ...], codec: WireCodec, answered: Answered, response: Response
) -> None:
    """Keep a replayable answer under its request's key (`memo_slot`) and `gen`, on the second sighting
    of that key (`ResponseMemo.sighting` said so and gave `gen`: the caller asks only then, so a load of
    distinct requests builds nothing here)."""
    drawn = answered.generation
    if drawn is None or not answered.replayable:
        return
    if type(response) not in (Response, JsonBody, EventStreamBody, PacedStream):  # a cut body (`CutJsonBody`)
        return
    memo, key = slot
    wire = response.wire if isinstance(response, PacedStream) else None
    data = b"" if wire else response.data if isinstance(response, EventStreamBody) else response.body
    entry = MemoEntry(
        response.status_code, response.raw_headers, fitted(data), drawn.rule, drawn.record,
        codec.replay_effect(drawn.output, drawn.request), wire,
    )  # fmt: skip
    memo.put(gen, key, entry)
