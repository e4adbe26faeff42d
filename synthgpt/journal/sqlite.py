"""A call journal kept in SQLite, so several server workers (processes) share one journal.

`SQLiteJournal(path)` is a drop-in `Journal`: assign it to `MockGPT.journal` (the server does that for
`synthgpt serve --journal PATH.sqlite`). Records live in a `calls` table, one row per call, keyed by the
call's index (`idx`, the rowid), with the searchable columns (`api`, `model`, `rule`) beside the full record
as JSON (`records.record_json`: a served request as the wire it was decoded from). Filters scan the rows: an
index on `rule` cost every call a page write. The file is in WAL mode and a call is one INSERT that numbers
its own row (the next index is worked out inside the statement, under SQLite's write lock), so writers from
many threads and processes queue on that lock (with a busy timeout) instead of failing, losing or repeating
an index.

The journal stays bounded: beyond `maxlen` rows the oldest are deleted as new ones arrive. A file of the
first format (an `id` column beside `idx`, numbered by a counter row) is migrated when opened.

A server's journal is `batched`: the calls drawn on its event loop in one pass of the loop are written
together, in one transaction, at the start of the next pass (a transaction's locks and WAL writes were
~70 % of journaling a call, a row in a batch costs ~5 µs), and the server sends none of their answers
until they are written (`unwritten`), so a client that has an answer finds its call in the file, whichever
worker it asks next. Reads in this process write what is waiting first; a call drawn off the loop (a
worker thread, the library used synchronously) is written at once, after whatever is waiting.

    sqlite3 calls.sqlite "select idx, api, model, rule from calls order by idx"
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .memory import Builder, CallRecord, Journal
from .records import record_from_dict, record_json

__all__ = ["SQLiteJournal", "sql_glob"]

log = logging.getLogger("synthgpt.journal")

_COLUMNS = ["idx", "api", "model", "rule", "seed", "at", "duration_ms", "pid", "record"]
_FIRST_COLUMNS = ["id", *_COLUMNS]
"""The first format's `calls`: numbered by `counters.total`, ordered by `id` (migrated when opened)."""

_CALLS = """
CREATE TABLE calls (
    idx INTEGER PRIMARY KEY,
    api TEXT NOT NULL,
    model TEXT NOT NULL,
    rule TEXT NOT NULL,
    seed TEXT NOT NULL,
    at REAL NOT NULL,
    duration_ms REAL NOT NULL,
    pid INTEGER NOT NULL,
    record TEXT NOT NULL
)"""
_SCHEMA = [
    # the running total when no row holds it: every row deleted (`clear`), or an index taken and not stored
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO counters (name, value) VALUES ('total', 0)",
]
_MIGRATE = [
    _CALLS.replace("CREATE TABLE calls", "CREATE TABLE calls_numbered"),
    f"INSERT OR REPLACE INTO calls_numbered ({', '.join(_COLUMNS)}) SELECT {', '.join(_COLUMNS)} FROM calls"
    " ORDER BY id",
    "DROP TABLE calls",
    "ALTER TABLE calls_numbered RENAME TO calls",
]

_NEXT = (
    "max(coalesce((SELECT max(idx) FROM calls) + 1, 0), (SELECT value FROM counters WHERE name = 'total'))"
)
"""The next call's index: one past the newest row's, or the running total kept when no row holds it."""
_SELECT_NEXT = "SELECT " + _NEXT

_INSERT = (
    "INSERT INTO calls (idx, api, model, rule, seed, at, duration_ms, pid, record)"
    f" VALUES (({_SELECT_NEXT}), ?, ?, ?, ?, ?, ?, ?, ? || ({_SELECT_NEXT}) || ?)"
)
"""A call numbered and stored in one statement (an autocommit INSERT takes the write lock before it reads;
both readings of the next index come before the row is in): the record's JSON is given around its index,
which the statement writes in. The cursor's `lastrowid` is the index (RETURNING cost a step more)."""

_PLACEHOLDER = '"index":-1,'
"""What a draft's row JSON holds in place of its index: its first top-level key after `api`, `at`,
`captures` (strings only), `duration_ms` and `frames_sent` (keys sorted), so its first occurrence."""

_PRUNE_NEWEST = "DELETE FROM calls WHERE idx <= (SELECT MAX(idx) FROM calls) - ?"
"""The rows past the newest `maxlen` (the bound, as `_where` reads it) deleted."""

_INSERT_NUMBERED = (
    "INSERT OR REPLACE INTO calls (idx, api, model, rule, seed, at, duration_ms, pid, record)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def sql_glob(pattern: str) -> str:
    """An `fnmatch` pattern as SQLite's GLOB reads it, so both journals filter alike: fnmatch negates a set
    with `[!…]` where GLOB wants `[^…]`, takes a leading `^` in a set literally, and reads a `[` that
    opens no set as itself."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c != "[":
            out.append(c)
            i += 1
            continue
        j = i + 1
        if j < n and pattern[j] == "!":
            j += 1
        if j < n and pattern[j] == "]":
            j += 1
        while j < n and pattern[j] != "]":
            j += 1
        if j >= n:  # no closing bracket: a literal `[`, which GLOB writes as a set of one
            out.append("[[]")
            i += 1
            continue
        body = pattern[i + 1 : j]
        if body.startswith("!"):
            body = "^" + body[1:]
        elif body.startswith("^"):  # literal in fnmatch, a negation in GLOB: move it off the front
            body = body[1:] + "^" if len(body) > 1 else ""
        out.append(f"[{body}]" if body else "^")
        i = j + 1
    return "".join(out)


_WRITTEN = 4096
_PRUNE_EVERY = 32
"""Rows past the bound are deleted every this many calls (a statement per call was a fifth of the cost
of journaling one); queries leave them out in between."""


class Batch:
    """The calls drafted on the event loop in one pass, written together when the next pass starts.

    `wait()` returns once they are in the file, or returns the error that kept them out (each waiter has its
    own future inside the event, so one client leaving cancels nobody else's wait)."""

    __slots__ = ("done", "error", "items")

    def __init__(self) -> None:
        self.items: list[tuple[Builder, CallRecord]] = []
        self.done = asyncio.Event()
        self.error: Exception | None = None

    async def wait(self) -> Exception | None:
        if not self.done.is_set():
            await self.done.wait()
        return self.error


class SQLiteJournal(Journal):
    """The newest `maxlen` records in the SQLite file at `path` (created if missing).

    `synced=False` never waits for the disk (`PRAGMA synchronous=OFF`), for a file that does not outlive
    its server (the workers' temporary journal): synced, the checkpoint every few hundred calls waits for
    two fsyncs, and the worker whose call ran it waits with its event loop (on this machine's disk, 30-45
    µs per call on average; the CPU time is the same).

    `batched=True` (the server's) writes the calls drawn in one pass of a running event loop together (see
    the module's docstring); whoever answers them awaits `unwritten()` first."""

    def __init__(
        self, path: str | os.PathLike[str], maxlen: int = 1_000_000, *, timeout: float = 30.0,
        synced: bool = True, batched: bool = False,
    ) -> None:
        if maxlen < 0:
            raise ValueError(f"journal size must be >= 0, got {maxlen}")
        super().__init__(0)  # the in-memory deque stays empty; rows live in the file
        self.path = Path(path)
        self._maxlen = maxlen
        self._timeout = timeout
        self._synchronous = "NORMAL" if synced else "OFF"
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._written: dict[int, tuple[str, int | None]] = {}
        """index -> the outcome and frames its row was inserted with, for this process's newest calls:
        `finished` rewrites a row only when its call ended otherwise (a JSON answer ends as inserted)."""
        conn = self._conn()
        # Changing the journal mode needs the database to itself; retry through the busy handler.
        conn.execute("PRAGMA journal_mode=WAL")
        with self._write(conn):
            self._create(conn)
        self._numbering = threading.Lock()
        """Held from a call's INSERT to its record reaching the rule's history (and `_written`): this
        process's calls get there in the order of their indices, as the journal's lock keeps them in
        memory. Taken before SQLite's write lock wherever both are held."""
        self._batched = batched
        self._waiting: Batch | None = None
        """The batch the loop's current pass adds to, until its write detaches it."""
        self._newest: Batch | None = None
        """The batch made last: answers wait for it (it is written after every earlier one)."""
        self._waiting_lock = threading.Lock()

    def _create(self, conn: sqlite3.Connection) -> None:
        """Create the tables, or check the ones there (migrating the first format's)."""
        columns = [row[1] for row in conn.execute("PRAGMA table_info(calls)")]
        if not columns:
            conn.execute(_CALLS)
        elif columns == _FIRST_COLUMNS:
            log.warning("synthgpt: migrating the journal %s to this version's format (rows keyed by index)",
                        self.path)
            for statement in _MIGRATE:
                conn.execute(statement)
        elif columns != _COLUMNS:
            raise sqlite3.DatabaseError(
                f"{self.path} has a 'calls' table that is not a synthgpt journal's (columns {columns}):"
                " give --journal another file"
            )
        for statement in _SCHEMA:
            conn.execute(statement)

    # -- connections: one per thread, because a sqlite3 connection is not shared across threads --
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> sqlite3.Connection:
            # IMMEDIATE takes the write lock up front: a deferred transaction that later upgrades can
            # fail with "database is locked" without waiting, which is how rows get lost.
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
            self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")

    def _write(self, conn: sqlite3.Connection | None = None) -> SQLiteJournal._Tx:
        return SQLiteJournal._Tx(conn or self._conn())

    # -- the Journal interface --
    def add(self, build: Callable[[int], CallRecord]) -> CallRecord:
        """Number and store a record: indices are unique across processes and rows are in index order.
        The engine's builder (a `Builder`) is drafted first and numbered by its row's INSERT: one
        statement instead of a transaction bumping a counter row (~25 % of the call's journaling)."""
        if self._maxlen == 0 or not isinstance(build, Builder):
            return self._add_in_transaction(build)
        if self._batched:
            loop = asyncio._get_running_loop()
            if loop is not None:
                return self._add_to_batch(build, loop)
        self._written_out()  # drafted on the loop: they come first, as they came first
        draft = build.draft()
        text = record_json(draft)
        cut = text.index(_PLACEHOLDER) + 8  # after `"index":`
        row = (draft.api, draft.model, draft.rule, str(draft.seed), draft.at, draft.duration_ms, os.getpid(),
               text[:cut], text[cut + 2 :])  # fmt: skip
        conn = self._conn()
        with self._numbering:
            index: int = conn.execute(_INSERT, row).lastrowid  # type: ignore[assignment]
            record = build.number(draft, index)
            self._inserted(conn, record)
        return record

    def _add_to_batch(self, build: Builder, loop: asyncio.AbstractEventLoop) -> CallRecord:
        """Draft the call into this pass's batch (made, and its write scheduled, by its first call). The
        draft's index is -1 until the batch is written, which also puts it in the rule's history."""
        draft = build.draft()
        with self._waiting_lock:
            batch = self._waiting
            if batch is None:
                batch = self._waiting = self._newest = Batch()
                loop.call_soon(self._write_batch, batch)
            batch.items.append((build, draft))
        return draft

    def unwritten(self) -> Batch | None:
        """What an answer drawn on the loop must wait for before it is sent: the newest batch, until it is
        written (earlier ones are written before it)."""
        batch = self._newest
        return None if batch is None or batch.done.is_set() else batch

    def _write_batch(self, batch: Batch) -> None:
        """The loop's callback for `batch`: write what is still waiting (a read in a thread may have
        written it already, under the same lock, so this returns only once it is in the file)."""
        # sqlite3.Error, OSError: the batch that failed holds the error (`_write_waiting` sets it) and its
        # answers are refused; that may be a later batch this callback wrote early, not `batch`
        with contextlib.suppress(Exception):
            self._write_waiting()
        batch.done.set()

    def _written_out(self) -> None:
        """Write the batch still waiting, if any, before what needs it in the file (a read, a call numbered
        at once)."""
        if self._waiting is not None:
            self._write_waiting()

    def _write_waiting(self) -> None:
        with self._numbering:
            with self._waiting_lock:
                batch, self._waiting = self._waiting, None
            if batch is None or not batch.items:
                return
            items, batch.items = batch.items, []
            try:
                self._write_drafts(items)
            except Exception as exc:
                batch.error = exc
                raise

    def _write_drafts(self, items: list[tuple[Builder, CallRecord]]) -> None:
        """Number and store drafts in one transaction (the caller holds `_numbering`): the next index is
        read under the write lock, the rows written by one statement, then each record reaches the rule's
        history in order."""
        conn = self._conn()
        drafts = [draft for _, draft in items]
        try:
            with self._write(conn):
                first = self._next(conn)
                for i, draft in enumerate(drafts):
                    object.__setattr__(draft, "index", first + i)  # the row's JSON holds it
                conn.executemany(_INSERT_NUMBERED, map(self._row, drafts))
                last = first + len(drafts) - 1
                if last // _PRUNE_EVERY > (first - 1) // _PRUNE_EVERY:  # a multiple of it among them
                    conn.execute("DELETE FROM calls WHERE idx <= ?", (last - self._maxlen,))
        except BaseException:
            for draft in drafts:
                object.__setattr__(draft, "index", -1)
            raise
        for build, draft in items:
            build.number(draft, draft.index)
            self._remember(draft)

    def _add_in_transaction(self, build: Callable[[int], CallRecord]) -> CallRecord:
        """A plain function of the index: numbered, built and stored in one transaction."""
        self._written_out()
        with self._numbering, self._write() as conn:  # the lock first, as `add` takes them
            record = build(self._next(conn))
            if self._maxlen == 0:  # no row: the running total keeps the index taken
                conn.execute("UPDATE counters SET value = ? WHERE name = 'total'", (record.index + 1,))
            else:
                self._insert(conn, record)
        return record

    def store_numbered(
        self, records: Sequence[CallRecord], then: Callable[[sqlite3.Connection], object] | None = None
    ) -> None:
        """Store records numbered elsewhere (a row of the same index is replaced) in one transaction, the
        rows past the bound deleted; `then(connection)` runs in the same transaction, after them."""
        self._written_out()
        with self._numbering, self._write() as conn:
            if records and self._maxlen:
                conn.executemany(_INSERT_NUMBERED, map(self._row, records))
                conn.execute(_PRUNE_NEWEST, (self._maxlen,))
            if then is not None:
                then(conn)

    def rows(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows a read of the file gives, in this thread's connection."""
        return self._conn().execute(sql, args).fetchall()

    def next_index(self) -> int:
        self._written_out()
        with self._write() as conn:
            index = self._next(conn)
            conn.execute("UPDATE counters SET value = ? WHERE name = 'total'", (index + 1,))
            return index

    def append(self, record: CallRecord) -> None:
        """Store a record numbered elsewhere (`next_index`); a row of the same index is replaced."""
        self._written_out()
        with self._numbering, self._write() as conn:
            self._insert(conn, record)

    @staticmethod
    def _next(conn: sqlite3.Connection) -> int:
        return int(conn.execute(_SELECT_NEXT).fetchone()[0])

    @staticmethod
    def _row(record: CallRecord) -> tuple[int, str, str, str, str, float, float, int, str]:
        return (record.index, record.api, record.model, record.rule, str(record.seed), record.at,
                record.duration_ms, os.getpid(), record_json(record))  # fmt: skip

    def _insert(self, conn: sqlite3.Connection, record: CallRecord) -> None:
        if self._maxlen == 0:
            return
        conn.execute(_INSERT_NUMBERED, self._row(record))
        self._inserted(conn, record)

    def _inserted(self, conn: sqlite3.Connection, record: CallRecord) -> None:
        self._remember(record)
        if record.index % _PRUNE_EVERY == 0:  # readers skip the few rows past the bound meanwhile
            conn.execute("DELETE FROM calls WHERE idx <= ?", (record.index - self._maxlen,))

    def _remember(self, record: CallRecord) -> None:
        written = self._written
        written[record.index] = (record.outcome, record.frames_sent)
        if len(written) > _WRITTEN:
            del written[next(iter(written))]

    def finished(self, record: CallRecord) -> None:
        """Write how `record`'s call ended into its row (other processes read the file, not the object)."""
        if self._maxlen == 0 or record.index < 0:  # still in a batch: its row is written as it is then
            return
        if self._written.pop(record.index, None) == (record.outcome, record.frames_sent):
            return  # the row already says so: a statement (a third of what journaling a call costs) saved
        # one autocommit statement: it holds the write lock from its start, as BEGIN IMMEDIATE would
        self._conn().execute(
            "UPDATE calls SET record = json_set(record, '$.outcome', ?, '$.frames_sent', ?) WHERE idx = ?",
            (record.outcome, record.frames_sent, record.index),
        )

    @property
    def total(self) -> int:
        self._written_out()
        return self._next(self._conn())

    @property
    def maxlen(self) -> int:
        return self._maxlen

    def query(
        self,
        *,
        rule: str | None = None,
        api: str | None = None,
        model: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[CallRecord]:
        """Records in call order, filtered in SQL (glob patterns, like `fnmatch.fnmatchcase`), paginated."""
        self._written_out()
        where, args = self._where(rule=rule, api=api, model=model)
        sql = f"SELECT record FROM calls{where} ORDER BY idx LIMIT ? OFFSET ?"
        rows = self._conn().execute(sql, (*args, -1 if limit is None else limit, offset)).fetchall()
        return [record_from_dict(json.loads(r[0])) for r in rows]

    def count(self, *, rule: str | None = None, api: str | None = None, model: str | None = None) -> int:
        self._written_out()
        where, args = self._where(rule=rule, api=api, model=model)
        return int(self._conn().execute(f"SELECT COUNT(*) FROM calls{where}", args).fetchone()[0])

    def _where(self, **filters: str | None) -> tuple[str, tuple[str | int, ...]]:
        """The filters, and the bound: rows past the newest `maxlen` are deleted only every few calls."""
        used = [(k, v) for k, v in filters.items() if v is not None]
        clauses = ["idx > (SELECT MAX(idx) FROM calls) - ?", *(f"{k} GLOB ?" for k, _ in used)]
        return " WHERE " + " AND ".join(clauses), (self._maxlen, *(sql_glob(v) for _, v in used))

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> list[CallRecord]:
        items = self.query()
        return items if where is None else [r for r in items if where(r)]

    def clear(self) -> None:
        """Delete every row; the running total (and so the next index) is kept, as in `Journal`."""
        self._written_out()
        with self._write() as conn:
            conn.execute("UPDATE counters SET value = " + _NEXT + " WHERE name = 'total'")
            conn.execute("DELETE FROM calls")

    def __len__(self) -> int:
        return self.count()

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.list())

    def __getitem__(self, i: int) -> CallRecord:
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("journal index out of range")
        return self.query(offset=j, limit=1)[0]

    def close(self) -> None:
        try:
            self._written_out()
        finally:
            if self._newest is not None:
                self._newest.done.set()  # nobody is left to wait for a later pass
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SQLiteJournal({str(self.path)!r}, maxlen={self._maxlen})"
