"""The engine's memo: answers to requests given as mappings, replayed when the same request comes again.

`MockGPT.generate({...})` called again and again with one request (a fixture builder, a test that loops, a
load script in process) would decode, validate, fingerprint and draw the same answer each time. An answer
`resolve` marks replayable is a pure function of what `generation` returns and the request, so the engine
keeps it, by the request's JSON with sorted keys, the second time that request comes, and answers it the third
time by `MockGPT.replay`: the call is journaled and counted as if drawn, and the output is the same
(immutable) object. The server's own memo (`server.memo`) keeps encoded bytes instead, by raw body and
headers; this one serves the in-process callers, which hand the engine a mapping.

Not kept: requests given as a `ModelRequest` (a caller that built one has decoded already), requests
orjson cannot write (objects inside them, integers beyond 64 bits) or whose JSON is longer than
`MAX_KEY_BYTES`, and every request while the clock is not a FixedClock or the rules' call counts are
shared between processes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import orjson

from ..clock import FixedClock
from ..generation import Generation
from ..journal.memory import record_bytes

if TYPE_CHECKING:
    from .mockgpt import MockGPT

__all__ = ["MAX_KEY_BYTES", "DrawMemo", "KeptAnswers", "Stamp", "generation", "keeps_answers"]

MAX_KEY_BYTES = 16 * 1024
"""Requests whose JSON is longer are not kept: long conversations are rarely sent twice verbatim."""
_ENTRIES = 256
_BYTES = 4 * 1024 * 1024  # what the kept answers may hold (`record_bytes`): an embeddings batch is large
_SEEN = 1024
_KEY_OPTIONS = orjson.OPT_SORT_KEYS  # key order in a mapping changes nothing in the answer
K = TypeVar("K", bound=Hashable)
Stamp = tuple[Any, ...] | None
"""What an answer depends on besides its request (`generation`); None: answers may change between calls."""
V = TypeVar("V")


def _itself(source: Any) -> Stamp:
    """A source that is its own generation (a memo used without an engine, as in tests)."""
    return cast(Stamp, source)


def keeps_answers(mock: MockGPT) -> bool:
    """Whether `mock`'s answers may be kept at all: its clock is fixed (a stepping or system clock has
    every call read another time). `generation` is None exactly when not."""
    return type(mock.clock) is FixedClock


def generation(mock: MockGPT) -> Stamp:
    """What every answer depends on besides the request; None when answers may change between calls."""
    if not keeps_answers(mock):
        return None
    rules = mock.rules
    return (mock, mock.seed, mock.context_window, mock.limits, rules, tuple(rules.rules), mock.clock.now())


class KeptAnswers(Generic[K, V]):
    """At most `max_entries` values holding about `max_bytes`, by key, least recent out, each kept from its
    key's second sighting and only under one generation: the bookkeeping of the engine's memo and the
    server's (`server.memo.ResponseMemo`).

    A sighting is given the key and a source of the generation (`generation_of(source)`, the module's
    `generation` for both memos: the engine). The generation is worked out only when a value is found or
    a key comes a second time, and checked there: a load of distinct requests (every sighting a first)
    costs one hash of its key and a look in two tables, where working out the generation and comparing
    it was about a third of that. So the memo learns that the rules, seed or clock changed at its next
    hit or second sighting, and empties itself then: a value is never answered under another generation
    than the one it was kept under, and the bounds hold meanwhile."""

    def __init__(
        self, max_entries: int, max_bytes: int, generation_of: Callable[[Any], Stamp] = _itself
    ) -> None:
        if max_entries < 0 or max_bytes < 0:
            raise ValueError("memo bounds must be >= 0")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._generation_of = generation_of
        # by the key's hash, (key, value, size): the one hash a sighting takes serves both tables (a
        # key whose hash another kept key has replaces it when kept, and is not found for it)
        self._entries: OrderedDict[int, tuple[K, V, int]] = OrderedDict()
        # keys seen once, as hashes: an answer is kept only when its request comes a second time, so a load
        # of all-different requests (the common long run) fills nothing but this small set
        # (an OrderedDict: a plain dict's first key, found by `next(iter(...))`, lies past every slot deleted
        # before it until the dict is next resized, ~0.5 µs a request once 1,024 keys were seen)
        self._seen: OrderedDict[int, None] = OrderedDict()  # the first key is the oldest
        self._generation: Stamp = None
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.max_bytes > 0

    def sighting(self, source: Any, key: K) -> tuple[V | None, Stamp]:
        """(the value kept for `key`, None) when there is one under the current generation; else (None,
        the generation to keep this answer under) when this is the key's second sighting (`store` it,
        if replayable), or (None, None). One look under the lock (see the class's notes)."""
        h = hash(key)
        with self._lock:
            entries = self._entries
            kept = entries.get(h)
            if kept is not None and kept[0] == key:
                gen = self._generation_of(source)
                if gen is not None and gen == self._generation:
                    entries.move_to_end(h)
                    self.hits += 1
                    return kept[1], None
                self._reset(gen)  # kept under another generation: none of the values holds now
            self.misses += 1
            seen = self._seen
            if h not in seen:
                seen[h] = None
                if len(seen) > _SEEN:
                    seen.popitem(last=False)
                return None, None
            del seen[h]  # a third sighting counts as a first
            gen = self._generation_of(source)
            if gen is not None and gen != self._generation:
                self._reset(gen)
            return None, gen

    def store(self, gen: Stamp, key: K, value: V, size: int) -> None:
        """Keep `value` for `key` (`sighting` said so, with `gen`) if it fits and `gen` is still the
        memo's (a hit or a second sighting during the draw may have found another), the least recent
        values going first."""
        if size > self.max_bytes:
            return
        h = hash(key)
        with self._lock:
            if gen is None or gen != self._generation:
                return
            entries = self._entries
            old = entries.pop(h, None)
            if old is not None:
                self._bytes -= old[2]
            entries[h] = (key, value, size)
            self._bytes += size
            while entries and (len(entries) > self.max_entries or self._bytes > self.max_bytes):
                self._bytes -= entries.popitem(last=False)[1][2]

    def clear(self) -> None:
        with self._lock:
            self._reset(None)
            self._seen.clear()

    def _reset(self, gen: Stamp) -> None:
        """Forget the values kept under another generation than `gen`. The keys seen once stay: they may
        have been seen under `gen` already (it is found only at a hit or a second sighting)."""
        self._entries.clear()
        self._bytes = 0
        self._generation = gen

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes


class DrawMemo(KeptAnswers[bytes, Generation]):
    """The engine's memo: generations by request key (`key`), under the engine's generation."""

    def __init__(self, max_entries: int = _ENTRIES, max_bytes: int = _BYTES) -> None:
        super().__init__(max_entries, max_bytes, generation)

    def key(self, mock: MockGPT, request: Mapping[str, Any], api: str | None) -> bytes | None:
        """The key under which the answer to `request` is looked up and kept, taken once per call; None
        when it is not to be kept (see the module's notes)."""
        if not self.enabled or mock.counter is not None or type(request) is not dict:
            return None
        if not keeps_answers(mock):
            return None
        try:
            text = orjson.dumps(request, option=_KEY_OPTIONS)
        except TypeError:  # not plain JSON: objects, big integers, non-string keys
            return None
        if len(text) > MAX_KEY_BYTES:
            return None
        return (api or "").encode() + b"\n" + text

    def put(self, gen: tuple[Any, ...], key: bytes, drawn: Generation) -> None:
        """Keep `drawn`, a replayable answer to its key's second sighting (`sighting` gave `gen`)."""
        self.store(gen, key, drawn, len(key) + record_bytes(drawn.record))
