"""A real HTTP server on a free loopback port, in a background thread: for clients that cannot take an
in-process transport (other languages, browsers, subprocesses).

    with LiveServer(mock) as server:
        subprocess.run(["node", "client.js", server.url + "/v1"])

The listening socket is bound (port 0) before the server starts, so there is no race for the port and
`url` is known at once; `stop()` waits for the server thread to end.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

from .transport import as_asgi_app

__all__ = ["LiveServer"]


class LiveServer:
    def __init__(self, target: Any, *, host: str = "127.0.0.1", start_timeout: float = 15.0) -> None:
        self.app = as_asgi_app(target)
        self.target = target
        self.host = host
        self._start_timeout = start_timeout
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (add `/v1` for an OpenAI base URL)."""
        if not self.port:
            raise RuntimeError("the server is not running: call start() first")
        return f"http://{self.host}:{self.port}"

    def start(self) -> LiveServer:
        import uvicorn

        from ..server.run import quiet_aborted_streams

        quiet_aborted_streams()  # a `disconnect` fault is on purpose, not an error to log

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        self._sock = sock
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                self._server.run(sockets=[sock])
            except BaseException as exc:  # reported by start() instead of dying silently in the thread
                errors.append(exc)

        self._thread = threading.Thread(target=run, name=f"synthgpt-server-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not self._server.started:
            if errors or not self._thread.is_alive():
                self.stop()
                raise RuntimeError(f"the synthgpt server did not start: {errors[0] if errors else 'exited'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the synthgpt server did not start within {self._start_timeout}s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LiveServer(url={self.url if self.port else None!r})"
