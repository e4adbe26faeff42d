"""The metrics of several workers (`serve --workers N`): each writes its own into prometheus_client's
multiprocess files, and `MultiProcessCollector` sums them over all workers when any of them is scraped.

prometheus_client's metric objects would take a lock, ask the pid and call through three methods for each
value, six values an answer (~11 us of CPU an answer, measured). `SharedMetrics` writes the same entries
(names, labels, help, every bucket; so the same exposition) into files of this process's own, one lock an
answer and each value added to in place in the mapped file: ~1.3 us more than one process's plain numbers.

When another worker sees an answer: as before, the answer's values are written when `observe` counts it,
after the answer's last `send` returned, in the same pass of the event loop (nothing awaits in between):
a client that got the last byte and asks another worker's `/metrics` at once could, in principle, be
microseconds ahead of that write (the window there was before). The values are not held back to be written
later, in one go, for that reason: that would widen the window to the rest of the loop's pass, in which
other answers are made. Nothing is held in memory either, so nothing is to be flushed at exit: what is
written is in the file (the kernel keeps a shared map's pages), also when the process is killed.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from bisect import bisect_left
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.mmap_dict import MmapedDict, mmap_key

from .metrics import BUCKETS, HELP, JOURNAL_HELP, MULTIPROC_ENV
from .metrics_export import BOUNDS

if TYPE_CHECKING:
    from ..engine import MockGPT
    from .observe import Observed

__all__ = ["SharedMetrics"]


class SharedMetrics:
    """One app's answers, added to this process's `_Files` (the module's notes). The journal's size (a
    `livesum` gauge, when each worker has a journal of its own) stays prometheus_client's, set when it
    changed."""

    def __init__(self, mock: MockGPT, shared_journal: bool) -> None:
        _open_files()  # a directory that cannot take them fails the app's start, not its answers
        self._files: _Files | None = None
        # where each series' value is in `_files` (its doubles' index), found once per label set
        self._requests: dict[tuple[str, str, str, int], int] = {}
        self._faults: dict[tuple[str, str], int] = {}
        self._frames: dict[str, int] = {}
        self._timing: dict[str, _Timing] = {}
        self.journal: Gauge | None = None
        self._journal_size = -1
        if not shared_journal:
            r = CollectorRegistry(auto_describe=False)  # the value lives in the files; r is never read
            self.journal = Gauge("synthgpt_journal_calls", JOURNAL_HELP, registry=r,
                                 multiprocess_mode="livesum")  # fmt: skip
            self._journal_size = len(mock.journal)
            self.journal.set(self._journal_size)

    def count(self, key: tuple[str, str, str, int], obs: Observed, faults: tuple[str, ...],
              mock: MockGPT) -> None:  # fmt: skip
        api = obs.api
        files = _files or _open_files()
        with files.lock:
            if files is not self._files:  # the first answer, or the first in a forked child: new files
                self._forget(files)
            requests = self._requests.get(key)
            if requests is None:
                requests = self._requests[key] = files.counters.entry(_REQUESTS, *key[:3], str(key[3]))
            timing = self._timing.get(api)
            if timing is None:
                timing = self._timing[api] = _Timing(files.histograms, api)
            if faults or obs.frames:
                self._count_stream(files, api, faults, obs.frames)
            counters = files.counters.values  # after any new entry: a file that grew is mapped anew
            counters[requests] += 1.0
            histograms = files.histograms.values
            value = obs.duration_s
            histograms[timing.answer_sum] += value
            histograms[timing.answer[bisect_left(BUCKETS, value)]] += 1.0  # the first bound >= value
            value = obs.first_byte_s
            histograms[timing.first_byte_sum] += value
            histograms[timing.first_byte[bisect_left(BUCKETS, value)]] += 1.0
        if self.journal is not None:
            size = len(mock.journal)
            if size != self._journal_size:  # a journal at its cap keeps its size: nothing to write
                self._journal_size = size
                self.journal.set(size)

    def _count_stream(self, files: _Files, api: str, faults: tuple[str, ...], frames: int) -> None:
        """The faults and frames of an answer (under `files.lock`); the same entries, in the same order, as
        prometheus_client's counters would make."""
        for kind in faults:
            at = self._faults.get((api, kind))
            if at is None:
                at = self._faults[(api, kind)] = files.counters.entry(_FAULTS, api, kind)
            files.counters.values[at] += 1.0
        if frames:
            at = self._frames.get(api)
            if at is None:
                at = self._frames[api] = files.counters.entry(_FRAMES, api)
            files.counters.values[at] += frames

    def _forget(self, files: _Files) -> None:
        self._files = files
        self._requests.clear()
        self._faults.clear()
        self._frames.clear()
        self._timing.clear()


_Counter = tuple[str, tuple[str, ...], str]  # name, label names, help
_REQUESTS: _Counter = ("synthgpt_requests", ("api", "model", "rule", "status"), HELP["requests"])
_FAULTS: _Counter = ("synthgpt_faults", ("api", "kind"), HELP["faults"])
_FRAMES: _Counter = ("synthgpt_stream_frames", ("api",), HELP["frames"])


class _Timing:
    """Where one API's two histograms are: each a `_sum` and a count per bucket, not cumulative (the
    collector adds them up), as prometheus_client's Histogram keeps them in multiprocess mode."""

    __slots__ = ("answer", "answer_sum", "first_byte", "first_byte_sum")

    def __init__(self, histograms: _Doubles, api: str) -> None:
        # every entry now, in prometheus_client's order: an empty bucket is exposed too, samples in that order
        self.answer_sum, self.answer = self._entries(histograms, "synthgpt_answer_seconds", api)
        self.first_byte_sum, self.first_byte = self._entries(histograms, "synthgpt_first_byte_seconds", api)

    @staticmethod
    def _entries(histograms: _Doubles, name: str, api: str) -> tuple[int, list[int]]:
        total = histograms.add(mmap_key(name, name + "_sum", ["api"], [api], HELP[name]))
        return total, [histograms.add(mmap_key(name, name + "_bucket", ["api", "le"], [api, le], HELP[name]))
                       for le in BOUNDS]  # fmt: skip


_INITIAL_SIZE = 1 << 16  # bytes, as prometheus_client's files start
_HEADER = struct.Struct("i")  # the bytes used, then 4 bytes of padding (native order, as MmapedDict's)


class _Doubles:
    """One file of this process in the multiprocess directory, laid out as prometheus_client's `MmapedDict`
    writes it and `MultiProcessCollector` reads it (see `MmapedDict`'s docstring): the bytes used, then
    entries of a key's length, the key (JSON, `mmap_key`) padded to 8 bytes, a value and a timestamp
    (doubles; the timestamp stays 0, as counters and histograms leave it).

    `values` is the whole map seen as doubles: an entry's value is `values[index]`, added to in place.
    The value is 8-byte aligned, so a store is one machine write: a reader never sees half of it (a
    `struct.pack_into` would zero it first). Not thread-safe: written under `_Files.lock`.
    """

    def __init__(self, path: str) -> None:
        self._file = open(path, "a+b")  # noqa: SIM115  # open for the life of the process, as prometheus_client's
        self.index: dict[str, int] = {}
        size = os.fstat(self._file.fileno()).st_size
        if size:  # left by an earlier process of this pid: continued, as prometheus_client continues it
            entries = MmapedDict.read_all_values_from_file(path)  # type: ignore[no-untyped-call]
            self.index = {key: pos // 8 for key, _, _, pos in entries}
        else:
            size = _INITIAL_SIZE
            self._file.truncate(size)
        self._map(size)
        self.used: int = _HEADER.unpack_from(self._mmap, 0)[0] or 8
        _HEADER.pack_into(self._mmap, 0, self.used)

    def close(self) -> None:
        self.values.release()
        self._mmap.close()
        self._file.close()

    def _map(self, size: int) -> None:
        self._mmap = mmap.mmap(self._file.fileno(), size)
        self.values = memoryview(self._mmap).cast("d")

    def entry(self, counter: _Counter, *labels: str) -> int:
        """The index of a counter's value, with these label values (a new entry, at 0, if need be)."""
        name, label_names, help_text = counter
        return self.add(mmap_key(name, name + "_total", list(label_names), list(labels), help_text))

    def add(self, key: str) -> int:
        """The index of `key`'s value; a new entry, at 0, if it has none yet."""
        at = self.index.get(key)
        if at is not None:
            return at
        encoded = key.encode()
        padded = encoded + b" " * (8 - (len(encoded) + 4) % 8)
        entry = struct.pack(f"i{len(padded)}sdd", len(encoded), padded, 0.0, 0.0)  # MmapedDict's format
        end = self.used + len(entry)
        if end > len(self._mmap):
            size = len(self._mmap)
            while end > size:
                size *= 2
            self.values.release()  # lets the old map close; the entries stay in the file
            self._mmap.close()
            self._file.truncate(size)
            self._map(size)
        self._mmap[self.used:end] = entry
        self.used = end
        _HEADER.pack_into(self._mmap, 0, end)  # the entry counts for readers once it is whole
        at = self.index[key] = end // 8 - 2
        return at


class _Files:
    """This process's counters and histograms, in files named as `MultiProcessCollector` expects
    (`counter_*.db`, `histogram_*.db`) but not as prometheus_client's own (`counter_PID.db`): its values
    could be writing those, in this process, under a lock of their own."""

    def __init__(self, directory: str, pid: int) -> None:
        self.lock = threading.Lock()
        self.counters = _Doubles(os.path.join(directory, f"counter_synthgpt-{pid}.db"))
        self.histograms = _Doubles(os.path.join(directory, f"histogram_synthgpt-{pid}.db"))

    def close(self) -> None:
        self.counters.close()
        self.histograms.close()


_files: _Files | None = None
_opening = threading.Lock()


def _open_files() -> _Files:
    global _files
    with _opening:
        if _files is None:
            _files = _Files(os.environ[MULTIPROC_ENV], os.getpid())
        return _files


def _forget_files() -> None:
    """In a forked child: its values start at 0 in files of its own pid (prometheus_client's do too)."""
    global _files, _opening
    if _files is not None:
        _files.close()  # the child's copy of the map and file; the parent's stay open
    _files = None
    _opening = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows, where nothing forks
    os.register_at_fork(after_in_child=_forget_files)
