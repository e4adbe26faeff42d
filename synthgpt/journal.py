"""The call journal: a bounded, thread-safe record of what was asked and what was answered."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .model import ModelOutput, ModelRequest

__all__ = ["CallRecord", "Journal"]


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

    @property
    def api(self) -> str:
        return self.request.api

    @property
    def model(self) -> str:
        return self.request.model


class Journal:
    """Keeps the newest `maxlen` records (0 keeps none); `total` counts every call ever recorded."""

    def __init__(self, maxlen: int = 1000) -> None:
        if maxlen < 0:
            raise ValueError(f"journal size must be >= 0, got {maxlen}")
        self._records: deque[CallRecord] = deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._total = 0

    def next_index(self) -> int:
        with self._lock:
            i = self._total
            self._total += 1
            return i

    def append(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)

    def add(self, build: Callable[[int], CallRecord]) -> CallRecord:
        """Number and store a record in one step: concurrent calls are kept in the order of their indices."""
        with self._lock:
            record = build(self._total)
            self._total += 1
            self._records.append(record)
        return record

    @property
    def total(self) -> int:
        return self._total

    @property
    def maxlen(self) -> int:
        return self._records.maxlen or 0

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> list[CallRecord]:
        with self._lock:
            items = list(self._records)
        return items if where is None else [r for r in items if where(r)]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.list())

    def __getitem__(self, i: int) -> CallRecord:
        with self._lock:
            return self._records[i]
