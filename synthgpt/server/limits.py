"""Connection limits for `synthgpt serve`: what a slow or hostile client may hold.

uvicorn bounds idle keep-alive connections (`timeout_keep_alive`) and, with `limit_concurrency`, answers
503 beyond a number of open connections; it gives a client all the time it wants to finish sending a
request's headers, so a thousand connections trickling one header byte at a time stay open forever
(slowloris). `HeaderTimeoutProtocol` adds that bound: a connection has `seconds` to send complete
headers, counted from when it opened or its previous response ended; then it gets a 408 and is closed.
Its socket writes are gathered per pass of the event loop (`server.writes`).

Workers of `--workers N` also die with their supervisor (`die_with_parent`): a supervisor killed with
SIGKILL cannot stop them, and they would go on serving the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import weakref
from typing import Any

from .writes import SCOPE_KEY as WRITES_KEY
from .writes import BatchedWrites

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_LIMIT_CONCURRENCY",
    "DEFAULT_TIMEOUT_KEEP_ALIVE",
    "HeaderTimeoutProtocol",
    "die_with_parent",
    "fit_open_files",
]

DEFAULT_LIMIT_CONCURRENCY = 1000
"""Open connections (per worker) beyond which a request gets 503: far above what a test suite or a load
test opens against a mock. `serve` raises the process's open-file limit to fit it (`fit_open_files`)."""
DEFAULT_TIMEOUT_KEEP_ALIVE = 5
DEFAULT_HEADER_TIMEOUT = 10.0


def fit_open_files(connections: int) -> None:
    """Raise the soft open-file limit (often 1024) so `connections` sockets plus the server's own files fit:
    past it, accepting fails and every client waits in the backlog, the healthy ones too."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = connections + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        target = want if hard == resource.RLIM_INFINITY else min(want, hard)
        with contextlib.suppress(OSError, ValueError):  # a container may forbid it: serve anyway
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _timeout_response(seconds: float) -> bytes:
    body = f"Request headers not complete within {seconds:g} s (--header-timeout).\n".encode()
    return (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def _http_protocol() -> type[Any]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools ships with uvicorn[standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


CONFIG_ATTRIBUTE = "synthgpt_header_timeout"
"""Set on the uvicorn Config: the protocol class must be importable by name (workers unpickle it), so the
timeout travels with the config instead."""


class HeaderTimeoutProtocol(_http_protocol()):  # type: ignore[misc]
    """uvicorn's HTTP protocol (httptools, else h11) with a deadline for each request's headers.

    No timer per response (a `call_later` armed at every response's end and cancelled by the next
    request's first bytes cost ~2 µs of each answer): a connection notes when it began to wait, and one
    sweep per event loop (`_Sweep`) looks, a few times per timeout, for those that waited too long.
    """

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        seconds = float(getattr(config, CONFIG_ATTRIBUTE, DEFAULT_HEADER_TIMEOUT))
        self._header_seconds = seconds
        self._idle_at = 0.0
        """When the connection began to wait for a request's headers (opened, or its last answer ended)."""
        self._sweep: _Sweep | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # the connection's writes gathered per loop pass (`server.writes`): a third of a replay's CPU
        super().connection_made(BatchedWrites(transport, self.loop))  # type: ignore[arg-type]
        self._wait()
        self._sweep = _sweep_for(self.loop)
        self._sweep.add(self)

    def on_headers_complete(self) -> None:
        self.scope[WRITES_KEY] = self.transport  # what a paced stream tells to write at once (server.writes)
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._wait()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._sweep is not None:
            self._sweep.conns.discard(self)
        super().connection_lost(exc)

    def _wait(self) -> None:
        # Only a time: holding the finished request's cycle until the next one ends (to tell that a new
        # one began) cost ~8 µs per request served, and the pipelined request already under way when its
        # predecessor ended would have looked like a wait.
        self._idle_at = self.loop.time()

    def _check(self, now: float) -> None:
        # Waiting for headers: no request yet, or the last one answered (uvicorn makes a new cycle when a
        # request's headers are complete, so one still being answered means they came).
        cycle = self.cycle
        if (
            (cycle is None or cycle.response_complete) and now - self._idle_at >= self._header_seconds
            and not self.transport.is_closing()
        ):  # fmt: skip
            self.transport.write(_timeout_response(self._header_seconds))
            self.transport.close()


class _Sweep:
    """The connections of one event loop, checked every `tick` seconds (an eighth of the shortest header
    timeout among them, at most 1 s: a slow client's 408 comes at most that late), while there are any."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.tick = 1.0
        self.conns: set[HeaderTimeoutProtocol] = set()
        self._handle: asyncio.TimerHandle | None = None

    def add(self, conn: HeaderTimeoutProtocol) -> None:
        self.tick = min(self.tick, conn._header_seconds / 8)
        self.conns.add(conn)
        if self._handle is None:
            self._handle = self.loop.call_later(self.tick, self._run)

    def _run(self) -> None:
        self._handle = None
        now = self.loop.time()
        for conn in list(self.conns):
            conn._check(now)
        if self.conns:
            self._handle = self.loop.call_later(self.tick, self._run)


_SWEEPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweep] = weakref.WeakKeyDictionary()


def _sweep_for(loop: asyncio.AbstractEventLoop) -> _Sweep:
    sweep = _SWEEPS.get(loop)
    if sweep is None:
        sweep = _SWEEPS[loop] = _Sweep(loop)
    return sweep


def die_with_parent(parent: int) -> None:
    """End this process when process `parent` (the supervisor that started it) ends, however it ends.

    Linux: the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG); elsewhere a daemon
    thread polls the parent id. If the parent is already gone (it died while this worker started) the
    process exits at once.
    """
    if sys.platform.startswith("linux"):
        import ctypes  # here, in workers only: ~0.4 MB a single server does not keep

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0:  # 1 = PR_SET_PDEATHSIG
                if os.getppid() != parent:
                    os._exit(1)
                return
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
            pass

    def watch() -> None:  # pragma: no cover - Linux uses prctl above
        while os.getppid() == parent:
            threading.Event().wait(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="synthgpt-parent-watch", daemon=True).start()
