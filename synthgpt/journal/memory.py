"""The call journal: a bounded, thread-safe record of what was asked and what was answered."""

from __future__ import annotations

import builtins
import fnmatch
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..model import ModelOutput, ModelRequest
from .packing import pack, pack_output, unpack_output, unpack_pair

if TYPE_CHECKING:
    from ..codec.envelope import Wire

__all__ = [
    "DEFAULT_JOURNAL_BYTES", "Builder", "CallRecord", "Delivery", "Journal", "Outcome",
    "PackedRecord", "record_bytes", "unpack", "wire_of",
]  # fmt: skip

Outcome = Literal["streaming", "done", "error", "fault", "cancelled"]


class Delivery:
    """How a call's answer reached the client: the one part of a record that changes after it is stored.

    A stream is journaled when it starts (`streaming`) and finished when it ends: `done`, `error` (an HTTP
    error answer), `fault` (a planned disconnect, truncation or mid-stream error ended it) or `cancelled`
    (the client hung up first), with the number of SSE frames sent. Shared by every holder of the record
    (the journal, the rule's history, the caller), so all of them see the end.
    """

    __slots__ = ("finished", "frames_sent", "outcome")

    def __init__(self, outcome: Outcome = "done", frames_sent: int | None = None) -> None:
        self.outcome: Outcome = outcome
        self.frames_sent = frames_sent
        self.finished = False

    def __repr__(self) -> str:
        return f"Delivery({self.outcome!r}, frames_sent={self.frames_sent})"


DEFAULT_JOURNAL_BYTES = 64 * 1024 * 1024
"""What the journal may hold, besides its count bound: a thousand calls of a few KB each fit many times
over, while twenty answers of megabytes (long documents) no longer take a server's memory into the GB."""
_RECORD_OVERHEAD = 4096  # the dozen objects of a live record besides its texts, roughly
# What each of a live record's repeated objects holds besides its texts (tracemalloc, CPython 3.11): a
# message, a part of one, a tool call, a declared tool, an answer's choice. Without them a conversation
# of 20,000 short messages counted 44 KB and held 13.6 MB, and the byte bounds bounded nothing: twenty
# such calls took a server past 1.5 GB (tests/security/test_journal_bytes.py).
_MESSAGE_BYTES = 680
_PART_BYTES = 540
_TOOL_CALL_BYTES = 700
_TOOL_BYTES = 1400
_CHOICE_BYTES = 1000
_PACKED_OVERHEAD = 256  # a packed record's own object, its captures and delivery


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One answered call. `request` and `output` are frozen snapshots."""

    index: int
    request: ModelRequest
    rule: str
    seed: int
    output: ModelOutput
    at: float
    """Clock reading (the injected clock) when the call was answered."""
    duration_ms: float = field(compare=False)
    """Real time spent generating: journal metadata only, never part of an answer."""
    captures: dict[str, str] = field(default_factory=dict)
    delivery: Delivery = field(default_factory=Delivery, compare=False, repr=False)
    """How the answer was delivered (see `Delivery`): metadata, excluded from equality."""
    nbytes: int = field(default=-1, compare=False, repr=False)
    """`record_bytes` of this record, once someone asked (the journal, then the rule's history)."""

    @property
    def outcome(self) -> Outcome:
        return self.delivery.outcome

    @property
    def frames_sent(self) -> int | None:
        """SSE frames sent, for a streamed answer that has ended; None otherwise."""
        return self.delivery.frames_sent

    @property
    def cancelled(self) -> bool:
        return self.delivery.outcome == "cancelled"

    @property
    def api(self) -> str:
        return self.request.api

    @property
    def model(self) -> str:
        return self.request.model


class Builder:
    """A record builder `add` may be given instead of a plain function of the index. Called with the index,
    it builds the record as one does (`make`) and keeps it (`kept`: the engine's puts it in the rule's
    history). A journal that keeps the record in another form (the in-memory one packs it) makes it, stores
    that form and hands it to `kept`, so every holder keeps the same one. A journal that learns the index
    only as it stores the row (SQLite, where the row's key is the index) makes the record first (`draft`,
    index -1, shared with no one) and numbers it once stored (`number`)."""

    __slots__ = ()

    repeats = False
    """The record repeats an earlier call's request and output objects (a replay): a journal packing them
    may pack them once and share the bytes."""

    def __call__(self, index: int) -> CallRecord:
        record = self.make(index)
        self.kept(record, record, -1)
        return record

    def make(self, index: int) -> CallRecord:
        raise NotImplementedError

    def kept(self, record: CallRecord, form: CallRecord | PackedRecord, size: int) -> None:
        """`record` is stored as `form` (itself, or packed), whose `record_bytes` is `size` (-1: not worked
        out)."""

    def draft(self) -> CallRecord:
        return self.make(-1)

    def number(self, draft: CallRecord, index: int) -> CallRecord:
        # frozen for its users; the draft has none yet
        object.__setattr__(draft, "index", index)
        self.kept(draft, draft, -1)
        return draft


_PAYLOADS = 16
_PAYLOAD_MAX_BYTES = 64 * 1024
"""The largest packed pair (`record_bytes` of the packed record) kept for the replays of a call to share."""


@dataclass(slots=True)
class PackedRecord:
    """A `CallRecord` as the journal keeps it, rebuilt when read. A record's request and output are about ten
    pydantic objects, ~10 KB; packed, ~700 B, and a served request is only a reference to the bytes it came
    in. Not a frozen dataclass: one is made per call, and a frozen one sets each field through
    `object.__setattr__` (1.4 µs against 0.3); only the journal and the rule's history hold them, and
    neither changes one."""

    index: int
    rule: str
    seed: int
    at: float
    duration_ms: float
    captures: dict[str, str]
    payload: bytes
    """(request, output) packed (`journal.packing`); the output alone when `wire` holds the request."""
    delivery: Delivery = field(default_factory=Delivery)
    wire: Wire | None = None
    """What a served request was decoded from, decoded again when the record is read (`codec.envelope`)."""

    def unpack(self) -> CallRecord:
        wire = self.wire
        if wire is None:
            request, output = unpack_pair(self.payload)
        else:
            request, output = wire.decode(), unpack_output(self.payload)
        return CallRecord(self.index, request, self.rule, self.seed, output, self.at, self.duration_ms,
                          self.captures, self.delivery)  # fmt: skip


def record_bytes(item: CallRecord | PackedRecord) -> int:
    """About how much memory a kept record holds: its packed bytes once packed; its texts while live (what
    grows with a request or an answer: messages, tool arguments, answer text, embeddings). A live record's
    figure is worked out once and kept on it: a journal keeping it live and the rule's history both ask."""
    if isinstance(item, PackedRecord):
        return _packed_bytes(item.payload, item.wire)
    size = item.nbytes
    if size < 0:
        size = _live_bytes(item)
        object.__setattr__(item, "nbytes", size)  # frozen for its users; this is its own cache
    return size


def _packed_bytes(payload: bytes, wire: Wire | None) -> int:
    return len(payload) + _PACKED_OVERHEAD + (0 if wire is None else wire.nbytes)


def wire_of(request: ModelRequest) -> Wire | None:
    """The request's `Wire`, if the pipeline decoded it from one (read from the private dict directly:
    `request._wire` is found only after pydantic's __getattr__ fallback)."""
    private: dict[str, Any] = request.__pydantic_private__  # type: ignore[assignment]
    wire: Wire | None = private.get("_wire")
    return wire


def _live_bytes(item: CallRecord) -> int:
    req, out = item.request, item.output
    size = _RECORD_OVERHEAD + _TOOL_BYTES * len(req.tools)
    if req.inputs:  # an empty sum, or a generator per message below, costs as much as the rest
        size += sum(map(len, req.inputs))
    for m in req.messages:
        size += _MESSAGE_BYTES + len(m.content)
        if m.parts:
            size += _PART_BYTES * len(m.parts)
        if m.tool_calls:
            size += sum(_TOOL_CALL_BYTES + len(c.arguments) for c in m.tool_calls)
    for choice in out.choices:
        size += _CHOICE_BYTES
        for part in choice.parts:
            # the fields from the model's __dict__: a getattr default on a pydantic model costs a
            # __getattr__ miss and an exception (~1 µs) for every part without the field
            fields = part.__dict__
            size += len(fields.get("text", "")) + len(fields.get("arguments", ""))
    if out.embeddings:
        size += 32 * len(out.embeddings) * len(out.embeddings[0])  # a float object and its slot each
    return size


def unpack(item: CallRecord | PackedRecord) -> CallRecord:
    """A record as kept (live, or packed once it aged), as a `CallRecord`."""
    return item.unpack() if isinstance(item, PackedRecord) else item


class _Payloads:
    """The packed (request, output) pairs of the last few replayed calls, by identity: calls the server or
    the engine answered again from a memo share one request and one output, packed once. Found by the
    output's id (the pair's request compared too); emptied when full rather than kept in order: a miss costs
    only a packing. A drawn call's pair is never kept here: held on, its objects would be freed later, from
    memory long out of cache (bench/PROFILE.md, round 16)."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[ModelRequest, ModelOutput, bytes, Wire | None]] = {}

    def of(self, record: CallRecord, share: bool) -> tuple[bytes, Wire | None]:
        """The packed pair (the output alone, with the request's `Wire`, when it has one); kept for the next
        replays to share when `share` (this call is a replay) and it is small (`_PAYLOAD_MAX_BYTES`)."""
        req, out = record.request, record.output
        items = self._items
        hit = items.get(id(out))  # held objects keep their ids: a hit is the same pair
        if hit is not None and hit[0] is req:
            return hit[2], hit[3]
        wire = wire_of(req)
        blob = pack(req, out) if wire is None else pack_output(out)
        if share and _packed_bytes(blob, wire) <= _PAYLOAD_MAX_BYTES:
            if len(items) >= _PAYLOADS:
                items.clear()
            items[id(out)] = (req, out, blob, wire)
        return blob, wire

    def clear(self) -> None:
        self._items.clear()


class Journal:
    """Keeps the newest `maxlen` records (0 keeps none) holding at most `max_bytes` (`record_bytes`; the
    newest record is kept whatever its size); `total` counts every call ever recorded.

    Each record is packed as it is stored (`PackedRecord`), and the rule's history keeps the same packed
    record (`Builder.kept`): once the call has ended, its request and output are freed, while they are still
    in the processor's cache. A record that cannot be packed (a request built in code can hold anything: a
    lambda in `extra`) is kept as it is. Reading the journal is rare; holding a thousand records is what
    every long run does. Kept live instead, a record of a conversation of ~1,500 messages held its hundreds
    of thousands of objects, and every full collection of the cyclic garbage collector walked them all
    (`/healthz` waited 120-175 ms behind a few such calls, `tests/fuzz/test_hostile_battery.py`).
    """

    def __init__(self, maxlen: int = 1000, max_bytes: int = DEFAULT_JOURNAL_BYTES) -> None:
        if maxlen < 0:
            raise ValueError(f"journal size must be >= 0, got {maxlen}")
        if max_bytes < 1:
            raise ValueError(f"journal bytes must be >= 1, got {max_bytes}")
        self._limit = maxlen
        self.max_bytes = max_bytes
        self._records: deque[CallRecord | PackedRecord] = deque()
        self._sizes: deque[int] = deque()
        self._bytes = 0
        self._lock = threading.Lock()
        self._total = 0
        self._payloads = _Payloads()

    def next_index(self) -> int:
        with self._lock:
            i = self._total
            self._total += 1
            return i

    def append(self, record: CallRecord) -> None:
        with self._lock:
            self._store(record, False)

    def add(self, build: Callable[[int], CallRecord]) -> CallRecord:
        """Number and store a record in one step: concurrent calls are kept in the order of their indices."""
        with self._lock:
            return self._add(build, self._total)

    def _add(self, build: Callable[[int], CallRecord], index: int) -> CallRecord:
        """`add` with the index given (the caller holds the lock); the next index is the one after it."""
        if isinstance(build, Builder):
            record = build.make(index)
            self._total = index + 1
            form, size = self._store(record, build.repeats)
            build.kept(record, form, size)
        else:
            record = build(index)
            self._total = index + 1
            self._store(record, False)
        return record

    def _store(self, record: CallRecord, share: bool) -> tuple[CallRecord | PackedRecord, int]:
        """Keep `record`, packed if it can be: the form kept and its size (the record itself and -1 when
        this journal keeps nothing)."""
        if self._limit == 0:
            return record, -1
        form = self._packed(record, share)
        size = record_bytes(form)
        records, sizes = self._records, self._sizes
        records.append(form)
        sizes.append(size)
        self._bytes += size
        while len(records) > self._limit or (self._bytes > self.max_bytes and len(records) > 1):
            records.popleft()
            self._bytes -= sizes.popleft()
        return form, size

    def _packed(self, r: CallRecord, share: bool) -> CallRecord | PackedRecord:
        try:
            payload, wire = self._payloads.of(r, share)
        except Exception:  # a request built in code can hold anything (a lambda in `extra`): keep it
            return r
        return PackedRecord(r.index, r.rule, r.seed, r.at, r.duration_ms, r.captures, payload, r.delivery,
                            wire)  # fmt: skip

    def finished(self, record: CallRecord) -> None:
        """`record`'s delivery has ended. Kept in memory, the record already shows it (its `Delivery` is
        shared); a journal that stores copies (SQLite) writes the outcome there."""

    @property
    def total(self) -> int:
        return self._total

    @property
    def maxlen(self) -> int:
        return self._limit

    @property
    def bytes(self) -> int:
        """What the kept records hold, by `record_bytes`."""
        return self._bytes

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> list[CallRecord]:
        items = [unpack(r) for r in self._kept()]
        return items if where is None else [r for r in items if where(r)]

    def _kept(self) -> builtins.list[CallRecord | PackedRecord]:
        """The records as kept, copied under the lock: they are rebuilt after it (a thousand take ~30 ms,
        which a call drawn meanwhile in the server's worker thread must not wait for)."""
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._sizes.clear()
            self._bytes = 0
            self._payloads.clear()

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.list())

    def __getitem__(self, i: int) -> CallRecord:
        with self._lock:
            kept = self._records[i]
        return unpack(kept)

    def query(
        self,
        *,
        rule: str | None = None,
        api: str | None = None,
        model: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> builtins.list[CallRecord]:  # `list` is the method here
        """Records in call order whose rule, API and model match the glob patterns given, paginated."""
        where = _globs(rule, api, model)
        stop = None if limit is None else offset + limit
        if where is None:  # a page of all records: only its own are rebuilt from their packed form
            return [unpack(r) for r in self._kept()[offset:stop]]
        return self.list(where)[offset:stop]

    def count(self, *, rule: str | None = None, api: str | None = None, model: str | None = None) -> int:
        """How many records the same filters as `query` keep."""
        where = _globs(rule, api, model)
        return len(self._records) if where is None else len(self.list(where))


def _globs(rule: str | None, api: str | None, model: str | None) -> Callable[[CallRecord], bool] | None:
    """A filter keeping records whose fields match the glob patterns given (`fnmatch.fnmatchcase`)."""
    pairs = [(p, f) for p, f in ((rule, "rule"), (api, "api"), (model, "model")) if p is not None]
    if not pairs:
        return None
    return lambda r: all(fnmatch.fnmatchcase(getattr(r, f), p) for p, f in pairs)
