"""The call journal: what was asked and what was answered, behind one protocol.

    CallJournal (Protocol)      what MockGPT, the server's `/_synthgpt/calls` and the assertions use
    ├── Journal                 in memory, bounded, thread-safe (memory.py; `MemoryJournal` is the same)
    ├── SQLiteJournal           a SQLite file several processes share (sqlite.py; `--journal PATH.sqlite`)
    ├── WorkersJournal          each server worker's calls in memory, gathered into a SQLite file when
    │                           read (workers.py; `--workers N` without `--journal`)
    └── RedisJournal            a capped Redis stream replicas share (redis.py; `--state redis://…`)

`query.py` answers `GET /_synthgpt/calls` (filters, pages, JSONL export) through the protocol's `query` and
`count`, so a new store is one class implementing `CallJournal`. `record_to_dict` /
`record_from_dict` are the records' JSON form (the JSONL export; the SQLite and Redis journals' rows, which
keep a served request as the wire it was decoded from: `records.record_json`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .memory import (
    DEFAULT_JOURNAL_BYTES,
    Builder,
    CallRecord,
    Delivery,
    Journal,
    Outcome,
    PackedRecord,
    record_bytes,
    unpack,
)
from .records import record_from_dict, record_to_dict

if TYPE_CHECKING:
    from .sqlite import SQLiteJournal
    from .workers import WorkersJournal

__all__ = [
    "DEFAULT_JOURNAL_BYTES",
    "Builder",
    "CallJournal",
    "CallRecord",
    "Delivery",
    "Journal",
    "MemoryJournal",
    "Outcome",
    "PackedRecord",
    "SQLiteJournal",
    "WorkersJournal",
    "journal_written",
    "record_bytes",
    "record_from_dict",
    "record_to_dict",
    "unpack",
]

MemoryJournal = Journal
"""The in-memory journal by the name that says so (`Journal` stays its public name)."""


async def journal_written(journal: object) -> Exception | None:
    """Wait until the calls `journal` holds back are in its store (a batched `SQLiteJournal` writes the
    calls of one pass of the event loop together, see its module); the error that kept them out, if any.
    Every other journal has stored a call by the time `add` returns."""
    unwritten = getattr(journal, "unwritten", None)
    batch = unwritten() if unwritten is not None else None
    return None if batch is None else await batch.wait()


def __getattr__(name: str) -> Any:
    # sqlite3 (~1.4 MB of a server's memory) is imported with the SQLite journal, when one is used
    if name == "SQLiteJournal":
        from .sqlite import SQLiteJournal

        return SQLiteJournal
    if name == "WorkersJournal":
        from .workers import WorkersJournal

        return WorkersJournal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@runtime_checkable
class CallJournal(Protocol):
    """A journal of calls. `add` numbers and stores a record in one step (calls from many threads keep
    the order of their indices; `build` may be a `Builder`, which a store may draft before numbering);
    `total` counts every call ever added, `len()` those still kept."""

    def add(self, build: Callable[[int], CallRecord]) -> CallRecord: ...

    def query(
        self,
        *,
        rule: str | None = None,
        api: str | None = None,
        model: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[CallRecord]:
        """Records in call order whose fields match the glob patterns given, from `offset`, at most
        `limit`."""
        ...

    def count(self, *, rule: str | None = None, api: str | None = None, model: str | None = None) -> int: ...

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> list[CallRecord]: ...

    def clear(self) -> None:
        """Forget every record; `total` (and so the next index) is kept."""
        ...

    def finished(self, record: CallRecord) -> None:
        """`record`'s call has ended (`record.delivery` says how): a store keeping copies updates its own."""
        ...

    @property
    def total(self) -> int: ...

    @property
    def maxlen(self) -> int: ...

    def __len__(self) -> int: ...
