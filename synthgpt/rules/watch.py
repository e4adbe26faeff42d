"""Reload rule files when they change (`synthgpt serve --watch`).

A daemon thread polls the modification time and size of every file the rules were read from (includes
too). On a change the files are loaded again: a good load is handed to `on_reload`; a broken edit keeps
the last good rules and reports `PATH:LINE:COL: message` lines through `on_error` (or the log).
Polling needs no extra dependency and behaves the same on every platform and file system.

A file that was not empty and now is, is what an editor's truncating save leaves for a moment: it counts
as a broken edit (the last good rules stay, and that is said) until it has stayed empty for `empty_grace`
seconds; only then are its (no) rules loaded.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .loader import LoadedRules, RuleFileError, load_files

__all__ = ["RuleWatcher"]

log = logging.getLogger("synthgpt.rules")

_Stamp = tuple[int, int] | None


class RuleWatcher:
    """Watches rule files; call `start()` once, `stop()` to end the thread (also a context manager)."""

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        on_reload: Callable[[LoadedRules], None],
        on_error: Callable[[str], None] | None = None,
        interval: float = 0.5,
        empty_grace: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.paths = [str(p) for p in paths]
        self.on_reload = on_reload
        self.on_error = on_error
        self.interval = interval
        self.empty_grace = empty_grace
        self._clock = clock
        self._good_stamps: dict[Path, _Stamp] = {}
        self._empty_since: dict[Path, float] = {}
        self.last_good: LoadedRules | None = None
        self.last_error: str | None = None
        self._stamps: dict[Path, _Stamp] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> RuleWatcher:
        """Take a first look at the files (without calling back) and start polling."""
        if self._thread is not None:
            raise RuntimeError("the watcher is already started")
        with self._lock:
            self._stamps = self._stamp_all(self._watched(None))
            try:
                self.last_good = load_files(self.paths)
                self._stamps = self._good_stamps = self._stamp_all(self._watched(self.last_good))
            except RuleFileError:
                pass  # the caller loaded (and reported) the files itself; the next good edit reloads
        self._thread = threading.Thread(target=self._run, name="synthgpt-rule-watcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, self.interval * 4))
            self._thread = None

    def __enter__(self) -> RuleWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def poll(self) -> bool:
        """Check once and reload if anything changed; True when the rules were reloaded."""
        with self._lock:
            current = self._stamp_all(self._stamps.keys() | set(self._watched(None)))
            if current == self._stamps and not self._empty_since:
                return False
            self._stamps = current
            if self._emptied(current):
                return False
            try:
                loaded = load_files(self.paths)
            except RuleFileError as exc:
                self._report("\n".join(str(e) for e in exc.errors))
                return False
            self._stamps = self._good_stamps = self._stamp_all(self._watched(loaded))
            self.last_good = loaded
            self.last_error = None
        try:
            self.on_reload(loaded)
        except Exception:  # a failing callback must not kill the watcher
            log.exception("rule reload callback failed")
            return False
        log.info("reloaded rules from %s (%d rules)", ", ".join(self.paths), len(loaded.ruleset))
        return True

    # -- internals --
    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # pragma: no cover - keep watching whatever happens
                log.exception("rule watcher poll failed")

    def _emptied(self, current: dict[Path, _Stamp]) -> bool:
        """Whether a file that held rules is empty, and not yet for `empty_grace` seconds (then it is
        reported, and the rules are kept)."""
        now = self._clock()
        empty = {f for f, st in current.items() if st is not None and st[1] == 0}
        for f in list(self._empty_since):
            if f not in empty:
                del self._empty_since[f]  # written again: the save is complete
        fresh = [f for f in sorted(empty) if (self._good_stamps.get(f) or (0, 0))[1] > 0]
        waiting = [f for f in fresh if now - self._empty_since.setdefault(f, now) < self.empty_grace]
        if not waiting:
            self._empty_since.clear()  # loaded as they are now: empty for good
            return False
        self._report("\n".join(
            f"{f}: the file is empty (a save in progress?); keeping the last good rules. If it stays empty "
            f"for {self.empty_grace:g} s, it is loaded as it is: no rules."
            for f in waiting
        ))  # fmt: skip
        return True

    def _report(self, message: str) -> None:
        if message == self.last_error:
            return  # the same broken state: say it once
        self.last_error = message
        if self.on_error is not None:
            self.on_error(message)
        else:
            log.error("rule files not reloaded, keeping the last good rules:\n%s", message)

    def _watched(self, loaded: LoadedRules | None) -> list[Path]:
        files = [Path(p) for p in self.paths]
        if loaded is not None:
            files += [f for f in loaded.files if f not in files]
        return files

    @staticmethod
    def _stamp_all(files: Iterable[Path]) -> dict[Path, _Stamp]:
        out: dict[Path, _Stamp] = {}
        for f in files:
            try:
                st = f.stat()
                out[f] = (st.st_mtime_ns, st.st_size)
            except OSError:
                out[f] = None
        return out
