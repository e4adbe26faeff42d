"""Decoded parts of requests, kept by the JSON text they were decoded from.

An agent loop sends its whole conversation again on every turn, and its tools with it: turn 30 of a loop
repeats 60 messages and every tool of turn 29, byte for byte. Decoding them (every check, in the API's
wording, then the neutral models) was ~6 µs a message and ~8 µs a tool, two thirds of such a request's
cost. A decoder keeps what it made of each part here, by the part's JSON text (orjson's, of the parsed
value: one C call) and whatever else its decoding read, and the next request that holds the same part
takes the same frozen model instead of deciding it again.

Only parts that decoded are kept: a part that fails is checked again each time, and refused with its
position in that request. The neutral models are frozen and shared by every request holding them (the
dicts inside them, a tool's parameters, are read only, as everywhere else).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import orjson

from ..jsonutil import fitted

__all__ = [
    "MESSAGES_BYTES",
    "TOOLS_BYTES",
    "Interned",
    "forget",
    "json_key",
    "kept_tools",
    "messages_cache",
    "tools_cache",
]

MESSAGES_BYTES = 4 << 20
"""What each API's kept messages (or input items) may hold: ~4 MB."""
TOOLS_BYTES = 1 << 20
"""What each API's kept tools may hold: ~1 MB."""

_V = TypeVar("_V")


def json_key(value: Any) -> bytes | None:
    """`value`'s JSON text, the same for equal values with their keys in the same order; None for a value
    orjson does not write (an integer past 64 bits): then it is decoded each time. As orjson wrote it:
    `Interned.put` sizes the keys it keeps (`fitted`), a look-up that finds one copies nothing."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


def _fitted_key(key: Any) -> Any:
    """`key` with each bytes object in it, in tuples too, `fitted`: orjson's bytes keep the buffer they
    were written in (a 60-byte text held 4 KB)."""
    kind = type(key)
    if kind is bytes:
        return fitted(key)
    if kind is tuple:
        return tuple(map(_fitted_key, key))
    return key


class Interned(Generic[_V]):
    """Decoded values by key, holding about `max_bytes` of memory at most; emptied when full, rather than
    kept in order: a miss costs one decoding, and a loop refills it in one turn.

    An entry is reckoned `entry_bytes` plus `per_char` bytes for each character of its part's text (the
    key, and the strings and dicts the models hold): measured with tracemalloc, a kept message holds
    0.8-1.6 KB with a short text, a tool ~6 KB with a small schema (`tests/codec/test_interned.py` holds
    the caches, filled past their bounds, to what they reckon)."""

    __slots__ = ("_bytes", "_items", "entry_bytes", "max_bytes", "per_char")

    def __init__(self, max_bytes: int, *, entry_bytes: int, per_char: int) -> None:
        self._items: dict[Hashable, _V] = {}
        self._bytes = 0
        self.max_bytes = max_bytes
        self.entry_bytes = entry_bytes
        self.per_char = per_char
        _EVERY.append(self)

    def get(self, key: Hashable) -> _V | None:
        return self._items.get(key)

    def put(self, key: Hashable, value: _V, chars: int) -> None:
        """Keep `value` by `key`, its part's text `chars` long (a part reckoned larger than the whole
        bound is not kept)."""
        cost = self.entry_bytes + self.per_char * chars
        if cost > self.max_bytes:
            return
        if self._bytes + cost > self.max_bytes:
            self._items.clear()
            self._bytes = 0
        self._items[_fitted_key(key)] = value
        self._bytes += cost

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes


_EVERY: list[Interned[Any]] = []


def forget() -> None:
    """Empty every decoder's kept parts (for a test that measures what one request holds)."""
    for cache in _EVERY:
        cache.clear()


def messages_cache() -> Interned[Any]:
    """A decoder's kept messages: about `MESSAGES_BYTES` at most."""
    return Interned(MESSAGES_BYTES, entry_bytes=1536, per_char=3)


def tools_cache() -> Interned[Any]:
    """A decoder's kept tools: about `TOOLS_BYTES` at most (a tool's schema is a dict of dicts)."""
    return Interned(TOOLS_BYTES, entry_bytes=4096, per_char=8)


def kept_tools(values: list[Any], cache: Interned[Any], make: Callable[[Any, int], Any]) -> tuple[Any, ...]:
    """The tools a request declares: `make(value, i)` of each (None for a tool the provider runs, which
    the request does not declare as its own), or what it made of the same text before, from `cache`."""
    tools = []
    for i, value in enumerate(values):
        text = json_key(value) if type(value) is dict else None
        if text is not None:
            found = cache.get(text)
            if found is not None:
                if found is not _NOT_DECLARED:
                    tools.append(found)
                continue
        made = make(value, i)
        if made is not None:
            tools.append(made)
        if text is not None:
            cache.put(text, _NOT_DECLARED if made is None else made, len(text))
    return tuple(tools)


_NOT_DECLARED = object()
"""What a tools cache keeps for a tool the provider runs (a server or hosted tool)."""
