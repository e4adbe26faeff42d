"""The journal in Redis, shared by every replica (`--state redis://…`): a stream capped at `--journal-size`.

    synthgpt:journal:total   every call ever journaled (INCR numbers the calls of all replicas in one order)
    synthgpt:journal         stream of the newest records, one JSON field each (`record_json`)
    synthgpt:journal:delivery:<index>   how a call ended, when that is not what was written with it (a
                             stream that was still `streaming`, an error, a cancel); expires after a day

In the server (a running event loop) a record leaves in the background: one script numbers and appends it
(`_APPEND`: INCR and XADD in one round trip) through the asyncio client, so no answer waits for the
journal, and a slow Redis delays the journal, never the answers. Such a record's own `index` stays -1
(its number is the one Redis gave, which the listing shows); `settle()` waits for this process's writes
in flight, and `GET /_synthgpt/calls` calls it first, so a listing shows every call answered before it.
Without a running loop (the library used synchronously, the worker thread) a record is written at once.

Reads (`GET /_synthgpt/calls`) fetch the kept stream and filter here: the stream is bounded by
`--journal-size`, and reading the journal is rare next to writing it. A record that cannot be written
while Redis is away is not lost silently: the call is still answered (when it needs no shared state),
`dropped` counts it and the log says so once per outage.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
from collections.abc import Callable
from typing import Any

from ..errors import StateUnavailable
from ..state.link import RedisLink, run_script
from .memory import CallRecord, Delivery, _globs
from .records import record_from_dict, record_json

__all__ = ["RedisJournal"]

log = logging.getLogger("synthgpt.server")
_DELIVERY_TTL = 86400  # seconds: a listing long after the run still shows how its calls ended
_IN_FLIGHT = 10_000  # background writes one process may have waiting; more are dropped (and counted)

# KEYS[1] the stream, KEYS[2] the total; ARGV[1] the record's JSON, ARGV[2] the stream's cap (0: keep none).
# Returns the record's index.
_APPEND = """
local i = redis.call('INCR', KEYS[2]) - 1
if tonumber(ARGV[2]) > 0 then
  redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[2], '*', 'i', i, 'r', ARGV[1])
end
return i
"""
_writes: set[asyncio.Task[Any]] = set()
"""Every background journal write of this process still in flight (`settle` awaits them)."""


async def settle() -> None:
    """Wait until this process's journal writes in flight have landed (or failed)."""
    loop = asyncio.get_running_loop()
    mine = [t for t in _writes if t.get_loop() is loop]
    if mine:
        await asyncio.gather(*mine, return_exceptions=True)


class RedisJournal:
    def __init__(self, link: RedisLink, maxlen: int = 1000) -> None:
        if maxlen < 0:
            raise ValueError(f"journal size must be >= 0, got {maxlen}")
        self._link = link
        self._maxlen = maxlen
        self._stream = link.key("journal")
        self._total = link.key("journal", "total")
        self.dropped = 0
        """Records this process could not write (Redis away); their calls were answered."""
        self._failing = False
        self._append = link.client.register_script(_APPEND)
        self._numbered: dict[int, asyncio.Task[int | None]] = {}
        """id(record) -> its background write, until `finished` needs the index Redis gave it."""

    def add(self, build: Callable[[int], CallRecord]) -> CallRecord:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._add_now(build)
        record = build(-1)
        if len(_writes) >= _IN_FLIGHT:
            self._drop(StateUnavailable(f"{_IN_FLIGHT} journal writes wait for Redis at {self._link.where}"))
            return record
        data = record_json(record)
        task = loop.create_task(self._write(data))
        _writes.add(task)
        task.add_done_callback(_writes.discard)
        if record.outcome != "done" or record.frames_sent is not None:  # `finished` will write its ending
            if len(self._numbered) >= _IN_FLIGHT:  # calls never finished (a bug elsewhere) must not pile up
                self._numbered.pop(next(iter(self._numbered)))
            self._numbered[id(record)] = task
        return record

    async def _write(self, data: str) -> int | None:
        keys, args = [self._stream, self._total], [data, str(self._maxlen)]
        try:
            index = int(await self._link.acall(lambda c: run_script(c, self._append, keys, args)))
        except StateUnavailable as exc:
            self._drop(exc)
            return None
        self._failing = False
        return index

    def _add_now(self, build: Callable[[int], CallRecord]) -> CallRecord:
        try:
            index = int(self._link.call(lambda c: c.incr(self._total))) - 1
        except StateUnavailable as exc:
            self._drop(exc)
            return build(-1)
        record = build(index)
        if self._maxlen:
            data = record_json(record)
            try:
                self._link.call(lambda c: c.xadd(self._stream, {"r": data}, maxlen=self._maxlen,
                                                 approximate=False))  # fmt: skip
            except StateUnavailable as exc:
                self._drop(exc)
                return record
        self._failing = False
        return record

    def finished(self, record: CallRecord) -> None:
        """Keep how the call ended, unless the record as written already says it (a whole answer: `done`)."""
        numbered = self._numbered.pop(id(record), None)
        if self._maxlen == 0 or (record.outcome == "done" and record.frames_sent is None):
            return
        data = json.dumps([record.outcome, record.frames_sent])
        if numbered is not None:  # written in the background: its ending follows it there
            task = numbered.get_loop().create_task(self._ended(numbered, data))
            _writes.add(task)
            task.add_done_callback(_writes.discard)
            return
        if record.index < 0:
            return
        key = self._link.key("journal", "delivery", str(record.index))
        try:
            self._link.call(lambda c: c.set(key, data, ex=_DELIVERY_TTL))
        except StateUnavailable as exc:
            self._drop(exc)

    async def _ended(self, numbered: asyncio.Task[int | None], data: str) -> None:
        index = await numbered
        if index is None:
            return
        key = self._link.key("journal", "delivery", str(index))
        try:
            await self._link.acall(lambda c: c.set(key, data, ex=_DELIVERY_TTL))
        except StateUnavailable as exc:
            self._drop(exc)

    def _drop(self, exc: StateUnavailable) -> None:
        self.dropped += 1
        if not self._failing:
            self._failing = True
            log.warning("journal records are being dropped: %s", exc.cause)

    def _records(self) -> builtins.list[CallRecord]:
        entries: Any = self._link.call(lambda c: c.xrange(self._stream))
        # stream order is write order; two replicas may write their INCR-numbered records out of order
        records = [_record(fields) for _, fields in entries]
        records.sort(key=lambda r: r.index)
        if records:
            keys = [self._link.key("journal", "delivery", str(r.index)) for r in records]
            ended: list[bytes | None] = self._link.call(lambda c: c.mget(keys))
            for i, data in enumerate(ended):
                if data is not None:
                    outcome, frames = json.loads(data)
                    r = records[i]
                    records[i] = CallRecord(r.index, r.request, r.rule, r.seed, r.output, r.at, r.duration_ms,
                                            r.captures, Delivery(outcome, frames))  # fmt: skip
        return records

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> builtins.list[CallRecord]:
        items = self._records()
        return items if where is None else [r for r in items if where(r)]

    def query(
        self,
        *,
        rule: str | None = None,
        api: str | None = None,
        model: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> builtins.list[CallRecord]:
        matching = self.list(_globs(rule, api, model))
        return matching[offset : None if limit is None else offset + limit]

    def count(self, *, rule: str | None = None, api: str | None = None, model: str | None = None) -> int:
        return len(self.list(_globs(rule, api, model)))

    def clear(self) -> None:
        self._link.call(lambda c: c.delete(self._stream))

    @property
    def total(self) -> int:
        value = self._link.call(lambda c: c.get(self._total))
        return int(value or 0)

    @property
    def maxlen(self) -> int:
        return self._maxlen

    def __len__(self) -> int:
        return int(self._link.call(lambda c: c.xlen(self._stream)))

    def __repr__(self) -> str:
        return f"RedisJournal({self._link.where}, maxlen={self._maxlen})"


def _record(fields: dict[bytes, bytes]) -> CallRecord:
    data = json.loads(fields[b"r"])
    if b"i" in fields:  # numbered by `_APPEND` as it was written
        data["index"] = int(fields[b"i"])
    return record_from_dict(data)
