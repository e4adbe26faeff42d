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
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson

from ..clock import FixedClock
from ..generation import Generation
from ..journal.memory import record_bytes

if TYPE_CHECKING:
    from .mockgpt import MockGPT

__all__ = ["MAX_KEY_BYTES", "DrawMemo", "KeptAnswers", "generation"]

MAX_KEY_BYTES = 16 * 1024
"""Requests whose JSON is longer are not kept: long conversations are rarely sent twice verbatim."""
_ENTRIES = 256
_BYTES = 4 * 1024 * 1024  # what the kept answers may hold (`record_bytes`): an embeddings batch is large
_SEEN = 1024
_KEY_OPTIONS = orjson.OPT_SORT_KEYS  # key order in a mapping changes nothing in the answer
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def generation(mock: MockGPT) -> tuple[Any, ...] | None:
    """What every answer depends on besides the request; None when answers may change between calls."""
    clock = mock.clock
    if type(clock) is not FixedClock:  # a stepping or system clock: every call reads another time
        return None
    rules = mock.rules
    return (mock, mock.seed, mock.context_window, mock.limits, rules, tuple(rules.rules), clock.now())


class KeptAnswers(Generic[K, V]):
    """At most `max_entries` values holding about `max_bytes`, by key, least recent out, each kept from its
    key's second sighting and only under one generation (`generation`): the bookkeeping of the engine's
    memo and the server's (`server.memo.ResponseMemo`)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        if max_entries < 0 or max_bytes < 0:
            raise ValueError("memo bounds must be >= 0")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        # keys seen once, as hashes: an answer is kept only when its request comes a second time, so a load
        # of all-different requests (the common long run) fills nothing but this small set
        # (an OrderedDict: a plain dict's first key, found by `next(iter(...))`, lies past every slot deleted
        # before it until the dict is next resized, ~0.5 µs a request once 1,024 keys were seen)
        self._seen: OrderedDict[int, None] = OrderedDict()  # the first key is the oldest
        self._generation: tuple[Any, ...] | None = None
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.max_bytes > 0

    def sighting(self, gen: tuple[Any, ...] | None, key: K) -> tuple[V | None, bool]:
        """The value kept for `key` under `gen` (a new generation empties the memo first); when there is none,
        whether this is the key's second sighting, so that its answer, if replayable, is to be kept
        (`store`). One look under the lock: a load of distinct requests builds nothing to keep."""
        with self._lock:
            if gen is None or gen != self._generation:
                self._reset(gen)
            else:
                kept = self._entries.get(key)
                if kept is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return kept[0], False
            self.misses += 1
            return None, gen is not None and self._seen_again(key)

    def _seen_again(self, key: K) -> bool:
        """Whether `key` was seen once before (forgotten now: a third sighting counts as a first); else note
        it. The caller holds the lock."""
        h = hash(key)
        seen = self._seen
        if h in seen:
            del seen[h]
            return True
        seen[h] = None
        if len(seen) > _SEEN:
            seen.popitem(last=False)
        return False

    def store(self, gen: tuple[Any, ...] | None, key: K, value: V, size: int) -> None:
        """Keep `value` for `key` (`sighting` said so) if it fits and `gen` is still the memo's (the rules or
        the clock may have changed during the draw), the least recent values going first."""
        if size > self.max_bytes:
            return
        with self._lock:
            if gen is None or gen != self._generation:
                return
            entries = self._entries
            old = entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            entries[key] = (value, size)
            self._bytes += size
            while entries and (len(entries) > self.max_entries or self._bytes > self.max_bytes):
                self._bytes -= entries.popitem(last=False)[1][1]

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


class DrawMemo(KeptAnswers[bytes, Generation]):
    """The engine's memo: generations by request key (`slot`)."""

    def __init__(self, max_entries: int = _ENTRIES, max_bytes: int = _BYTES) -> None:
        super().__init__(max_entries, max_bytes)

    def slot(
        self, mock: MockGPT, request: Mapping[str, Any], api: str | None
    ) -> tuple[tuple[Any, ...], bytes] | None:
        """(generation, key) under which the answer to `request` is looked up and kept, taken once per
        call; None when it is not to be kept (see the module's notes)."""
        if not self.enabled or mock.counter is not None or type(request) is not dict:
            return None
        gen = generation(mock)
        if gen is None:
            return None
        try:
            text = orjson.dumps(request, option=_KEY_OPTIONS)
        except TypeError:  # not plain JSON: objects, big integers, non-string keys
            return None
        if len(text) > MAX_KEY_BYTES:
            return None
        return gen, (api or "").encode() + b"\n" + text

    def put(self, slot: tuple[tuple[Any, ...], bytes], drawn: Generation) -> None:
        """Keep `drawn`, a replayable answer to its key's second sighting (`sighting` said so)."""
        gen, key = slot
        self.store(gen, key, drawn, len(key) + record_bytes(drawn.record))
