"""The journal `serve --workers N` keeps when no `--journal` is given: each worker holds its own calls in
memory, numbered from one counter the workers share, and they are gathered into a SQLite file when any
worker is asked to read the journal.

A worker answering a call does what one server does (`Journal.add`, in memory, ~10 µs of a chat call)
and takes the call's index from a counter in a small mapped file (`SharedCounter`, ~1 µs under a file
lock), so indices are unique across the workers and in the order the calls were made. Writing every
call into the shared SQLite file as it was answered (`SQLiteJournal`, batched) cost ~30 µs more of each
call, and held every answer back until its batch was written; reads of the journal are rare (a test's
assertions, the playground, a scrape of `/metrics`), so the workers now write only then:

    reader (any worker, any thread)                  every other worker (its listening thread)
    ───────────────────────────────                  ─────────────────────────────────────────
    token = the counter's next gather token
    send the token to each worker's socket   ──▶     write its calls not yet in the file and note
    write its own calls not yet in the file           (its pid, the token) in `gathered`, in one
    wait until each live worker's `gathered`  ◀──     transaction
    row holds the token (at most `wait_s`)
    read the file

Each worker listens on a Unix datagram socket in the file's directory (`<file>.w<pid>.sock`), from a
thread of its own that sleeps in `recv` in between: nothing runs on the event loop, so two workers
reading at once cannot wait for each other's loop. A worker gone (its socket refuses) is skipped and its
socket removed; one that does not answer within `wait_s` is logged and the read goes on without its
newest calls. So a client that has an answer finds its call whichever worker it asks next, as with the
file written per call. A worker that stops writes its calls first; one that is killed takes the calls it
had not written with it (the file written per call kept them).

`clear` marks the counter's value as cleared in the file (`counters.cleared`), and deletes the rows:
every later write leaves out the calls below the mark, whichever worker holds them. The bound is the
file's (`maxlen` newest rows) and each worker's memory (`maxlen` newest of its own calls, `max_bytes`).

The file is the workers' temporary one (`serve` deletes it at exit). A `--journal PATH.sqlite` of the
user's is written per call, as before: other programs may read it while the server runs.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import logging
import mmap
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .memory import DEFAULT_JOURNAL_BYTES, CallRecord, Journal, unpack
from .sqlite import SQLiteJournal

__all__ = ["SharedCounter", "WorkersJournal"]

log = logging.getLogger("synthgpt.journal")

_GATHERED = "CREATE TABLE IF NOT EXISTS gathered (pid INTEGER PRIMARY KEY, token INTEGER NOT NULL)"
_CLEARED = "INSERT OR IGNORE INTO counters (name, value) VALUES ('cleared', 0)"
_DROP_CLEARED = "DELETE FROM calls WHERE idx < (SELECT value FROM counters WHERE name = 'cleared')"
_POLL_S = 0.001
_MAX_SOCKET_PATH = 104  # bytes of a Unix socket's path: 108 on Linux, 104 on macOS (with its final NUL)


class SharedCounter:
    """Two numbers in a file mapped by every worker: the next call's index and the last gather's token,
    each taken and advanced under the file's lock (`flock`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # whoever opens it first sizes it, once
            try:
                if os.fstat(self._fd).st_size < 16:
                    os.ftruncate(self._fd, 16)  # zeros: index 0, token 0
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._map = mmap.mmap(self._fd, 16)
        except BaseException:
            os.close(self._fd)
            raise
        self._values = memoryview(self._map).cast("q")

    def _take(self, slot: int) -> int:
        fd, values = self._fd, self._values
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            value: int = values[slot]
            values[slot] = value + 1
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return value

    def take_index(self) -> int:
        """The next call's index, taken."""
        return self._take(0)

    def next_token(self) -> int:
        """A new gather's token, greater than every earlier one."""
        return self._take(1) + 1

    @property
    def indices(self) -> int:
        """How many indices were taken: the next call's index."""
        value: int = self._values[0]
        return value

    def close(self) -> None:
        self._values.release()
        self._map.close()
        os.close(self._fd)


class WorkersJournal(Journal):
    """This worker's calls in memory (a `Journal` numbered by a `SharedCounter`), every worker's in the
    SQLite file at `path` once gathered (the module's notes). `start()` listens for other workers'
    gathers: call it in the worker, once it serves (not in a process that only builds the engine)."""

    def __init__(
        self, path: str | os.PathLike[str], maxlen: int = 1000, max_bytes: int = DEFAULT_JOURNAL_BYTES,
        *, wait_s: float = 10.0,
    ) -> None:  # fmt: skip
        if maxlen < 1:
            raise ValueError(f"a workers' journal keeps calls: its size must be >= 1, got {maxlen}")
        super().__init__(maxlen, max_bytes)
        self.path = Path(path)
        self.wait_s = wait_s
        self._file = SQLiteJournal(path, maxlen, synced=False)
        self._file.store_numbered([], lambda conn: (conn.execute(_GATHERED), conn.execute(_CLEARED)))
        self._counter = SharedCounter(f"{self.path}.next")
        self._written = -1
        """The newest index of this worker's calls in the file (its calls are numbered in order)."""
        self._writing = -1
        """The newest index of this worker's calls taken to be written (in the file once `_written` is it)."""
        self._late: builtins.list[CallRecord] = []
        """Calls that ended while their rows were on their way into the file: rewritten once they are."""
        self._late_lock = threading.Lock()
        self._flushing = threading.Lock()  # one write of this worker's calls at a time, with its token
        self._listener: socket.socket | None = None

    # -- numbering --
    def add(self, build: Callable[[int], CallRecord]) -> CallRecord:
        with self._lock:
            return self._add(build, self._counter.take_index())

    def next_index(self) -> int:
        return self._counter.take_index()

    @property
    def total(self) -> int:
        return self._counter.indices

    # -- listening for other workers' gathers --
    def _socket_path(self, pid: int) -> str:
        return f"{self.path}.w{pid}.sock"

    def start(self) -> None:
        """Listen for gathers on this worker's socket, in a thread of its own (daemon: it holds nothing
        that must be saved at exit; the file is the workers' temporary one)."""
        if self._listener is not None:
            return
        path = self._socket_path(os.getpid())
        if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
            raise OSError(f"the workers' journal {self.path} lies too deep for a Unix socket beside it: set"
                          " TMPDIR to a shorter directory, or give --journal PATH.sqlite")  # fmt: skip
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by an earlier process of this pid
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(path)
        self._listener = listener
        threading.Thread(target=self._listen, args=(listener,), name="synthgpt-journal", daemon=True).start()

    def _listen(self, listener: socket.socket) -> None:
        while True:
            data = listener.recv(32)
            if not data:  # `stop`'s empty datagram
                listener.close()
                return
            try:
                self._write_own(int(data))
            except Exception:  # a full disk, a file removed under it: the reader's wait times out
                log.exception("synthgpt: this worker could not write its calls into %s", self.path)

    def stop(self) -> None:
        """Write this worker's calls into the file and stop listening (a closed socket does not wake a
        thread waiting in `recv`: an empty datagram does, and the thread closes it)."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        try:
            self._write_own(None)  # a worker that leaves (not one killed) leaves its calls
        except Exception:
            log.exception("synthgpt: this worker could not write its calls into %s", self.path)
        path = self._socket_path(os.getpid())
        with contextlib.suppress(OSError), _sender() as sender:
            sender.sendto(b"", path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    # -- gathering --
    def _write_own(self, token: int | None) -> None:
        """Write this worker's calls not yet in the file, with `token` noted as answered (None: a write
        of its own, which answers no gather)."""
        with self._flushing:
            with self._lock:
                fresh = [r for r in self._records if r.index > self._written]
                if fresh:
                    self._writing = fresh[-1].index
            records = [unpack(r) for r in fresh]  # rebuilt outside the journal's lock
            pid = os.getpid()

            def noted(conn: sqlite3.Connection) -> None:
                conn.execute(_DROP_CLEARED)  # calls a `clear` of any worker came after
                if token is not None:
                    conn.execute("INSERT OR REPLACE INTO gathered (pid, token) VALUES (?, ?)", (pid, token))

            self._file.store_numbered(records, noted)
            with self._late_lock:
                self._written = self._writing
                late, self._late = self._late, []
            for record in late:
                self._file.finished(record)

    def gather(self) -> None:
        """Every worker's calls into the file (the module's notes)."""
        token = self._counter.next_token()
        waiting = self._ask_others(token)  # first: the others make their rows while this worker makes its own
        self._write_own(None)
        deadline = time.monotonic() + self.wait_s
        while waiting:
            answered = dict(self._file.rows("SELECT pid, token FROM gathered"))
            waiting = [p for p in waiting if answered.get(p, -1) < token and _alive(p)]
            if not waiting:
                return
            if time.monotonic() >= deadline:
                log.warning("synthgpt: workers %s did not write their calls within %g s: the journal is read"
                            " without their newest", ", ".join(map(str, waiting)), self.wait_s)  # fmt: skip
                return
            time.sleep(_POLL_S)

    def _ask_others(self, token: int) -> list[int]:
        """Send `token` to every other worker's socket: the pids asked (a refused socket's worker is gone:
        its socket is removed)."""
        prefix, own, asked = f"{self.path.name}.w", os.getpid(), []
        with _sender() as sender:
            for entry in os.scandir(self.path.parent):
                pid = _pid_of(entry.name, prefix)
                if pid is None or pid == own:
                    continue
                try:
                    sender.sendto(str(token).encode(), entry.path)
                except (ConnectionRefusedError, FileNotFoundError):  # nobody listens there any more
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)
                    continue
                asked.append(pid)
        return asked

    def finished(self, record: CallRecord) -> None:
        """A call written into the file while it was streaming has its row rewritten as it ended (one on
        its way into the file, once it is there); one not written yet is written as it ended."""
        index = record.index
        if index > self._writing:  # its delivery, set before this, is what a write will read
            return
        if index > self._written:
            with self._late_lock:
                if index > self._written:  # still on its way: the write rewrites it after its own
                    self._late.append(record)
                    return
        self._file.finished(record)

    # -- reading: every worker's calls, from the file --
    def query(
        self,
        *,
        rule: str | None = None,
        api: str | None = None,
        model: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> builtins.list[CallRecord]:
        self.gather()
        return self._file.query(rule=rule, api=api, model=model, offset=offset, limit=limit)

    def count(self, *, rule: str | None = None, api: str | None = None, model: str | None = None) -> int:
        self.gather()
        return self._file.count(rule=rule, api=api, model=model)

    def list(self, where: Callable[[CallRecord], bool] | None = None) -> builtins.list[CallRecord]:
        self.gather()
        return self._file.list(where)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, i: int) -> CallRecord:
        self.gather()
        return self._file[i]

    def clear(self) -> None:
        """Forget every worker's calls: those made before now are left out of every later write."""
        with self._flushing:
            mark = self._counter.indices
            self._file.store_numbered([], lambda conn: (
                conn.execute("UPDATE counters SET value = ? WHERE name = 'cleared'", (mark,)),
                conn.execute("DELETE FROM calls"),
            ))  # fmt: skip
            super().clear()

    def close(self) -> None:
        self.stop()
        self._file.close()
        self._counter.close()

    def __repr__(self) -> str:
        return f"WorkersJournal({str(self.path)!r}, maxlen={self.maxlen})"


def _pid_of(name: str, prefix: str) -> int | None:
    """The pid in a worker's socket's name (`<file>.w<pid>.sock`, `prefix` its part before the pid); None for
    any other file."""
    pid = name.removeprefix(prefix).removesuffix(".sock")
    return int(pid) if pid.isdigit() and name == f"{prefix}{pid}.sock" else None


def _sender() -> socket.socket:
    """A socket to send datagrams from (one per gather: they are rare)."""
    return socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now holds the pid: not a worker of ours
        return False
    return True
