"""Connection limits for `synthgpt serve`: what a slow or hostile client may hold.

uvicorn bounds idle keep-alive connections (`timeout_keep_alive`) and, with `limit_concurrency`, answers
503 beyond a number of open connections; it gives a client all the time it wants to finish sending a
request's headers, so a thousand connections trickling one header byte at a time stay open forever
(slowloris). `HeaderTimeoutProtocol` adds that bound: a connection has `seconds` to send complete
headers, counted from when it opened or its previous response ended; then it gets a 408 and is closed.

Workers of `--workers N` also die with their supervisor (`die_with_parent`): a supervisor killed with
SIGKILL cannot stop them, and they would go on serving the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import threading
from typing import Any

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
    """uvicorn's HTTP protocol (httptools, else h11) with a deadline for each request's headers."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        seconds = float(getattr(config, CONFIG_ATTRIBUTE, DEFAULT_HEADER_TIMEOUT))
        self._header_seconds = seconds
        self._header_timer: asyncio.TimerHandle | None = None
        self._waiting_since: object = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._waiting_since:
            self._disarm()  # a new request's headers are complete: its body and answer are not timed

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._waiting_since = self.cycle
        self._header_timer = self.loop.call_later(self._header_seconds, self._expired)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if self.cycle is self._waiting_since and not self.transport.is_closing():
            self.transport.write(_timeout_response(self._header_seconds))
            self.transport.close()


def die_with_parent(parent: int) -> None:
    """End this process when process `parent` (the supervisor that started it) ends, however it ends.

    Linux: the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG); elsewhere a daemon
    thread polls the parent id. If the parent is already gone (it died while this worker started) the
    process exits at once.
    """
    if sys.platform.startswith("linux"):
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
