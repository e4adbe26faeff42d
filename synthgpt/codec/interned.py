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

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

import orjson

__all__ = ["Interned", "json_key"]

_V = TypeVar("_V")


def json_key(value: Any) -> bytes | None:
    """`value`'s JSON text, the same for equal values with their keys in the same order; None for a value
    orjson does not write (an integer past 64 bits): then it is decoded each time."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


class Interned(Generic[_V]):
    """Decoded values by key, holding keys of at most `max_bytes` bytes in all (their JSON texts); emptied
    when full, rather than kept in order: a miss costs one decoding, and a loop refills it in one turn."""

    __slots__ = ("_bytes", "_items", "max_bytes")

    def __init__(self, max_bytes: int) -> None:
        self._items: dict[Hashable, _V] = {}
        self._bytes = 0
        self.max_bytes = max_bytes

    def get(self, key: Hashable) -> _V | None:
        return self._items.get(key)

    def put(self, key: Hashable, value: _V, nbytes: int) -> None:
        """Keep `value` by `key`, whose text is `nbytes` long (a part larger than the whole bound is not
        kept)."""
        if nbytes > self.max_bytes:
            return
        if self._bytes + nbytes > self.max_bytes:
            self._items.clear()
            self._bytes = 0
        self._items[key] = value
        self._bytes += nbytes

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes
