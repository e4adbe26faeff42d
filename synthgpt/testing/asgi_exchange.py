"""One HTTP request through an ASGI app, with the response fed to a queue as the app sends it.

The building block of the in-process transports (`transport.py`): `Exchange` runs the app as a task,
hands its body writes out one by one, turns a crash after the response started into `BodyCut` and a
silence longer than the read timeout into `ReadTimedOut`. `BACKGROUND` is the event loop (in a daemon
thread) that sync transports run apps on.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from typing import Any, TypeVar

from ..errors import BodyCut, ReadTimedOut

__all__ = ["BACKGROUND", "ASGIApp", "BodyCut", "Exchange", "LoopThread", "ReadTimedOut", "http_scope"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]
T = TypeVar("T")

_CLIENT_ADDR = ("127.0.0.1", 50000)


# ------------------------------------------------------------------------------------------ the exchange


class _End:
    """Queue sentinel: the app returned (`error` set if it raised)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class Exchange:
    """One request/response through the app. Every method runs on the loop that runs the app."""

    def __init__(self, app: ASGIApp, scope: dict[str, Any], body: bytes, read_timeout: float | None) -> None:
        self._app = app
        self._read_timeout = read_timeout
        self._scope = scope
        self._body: bytes | None = body
        self._queue: asyncio.Queue[Message | _End] = asyncio.Queue()
        self._disconnected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._buffered: list[bytes] = []
        self._complete = False
        self._ended: _End | None = None

    async def _receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._disconnected.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        if self._disconnected.is_set():
            raise OSError("client disconnected")  # what ASGI servers do on send after a disconnect
        self._queue.put_nowait(message)

    async def _run(self) -> None:
        error: BaseException | None = None
        try:
            await self._app(self._scope, self._receive, self._send)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported through the queue to whoever reads the response
            error = exc
        finally:
            self._queue.put_nowait(_End(error))

    async def _get(self) -> Message | _End:
        """The app's next message, waiting at most the read timeout, as a socket read would."""
        if self._read_timeout is None:
            return await self._queue.get()
        try:
            return await asyncio.wait_for(self._queue.get(), self._read_timeout)
        except TimeoutError:
            await self.aclose()
            waited = f"{self._read_timeout:g}s"
            raise ReadTimedOut(f"no data from the app within the read timeout ({waited})") from None

    async def start(self) -> tuple[int, list[tuple[bytes, bytes]]]:
        """Run the app until the response starts; its status and headers."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        first = await self._get()
        if isinstance(first, _End):
            if first.error is not None:
                raise first.error
            raise RuntimeError("the ASGI app returned without sending a response")
        if first.get("type") != "http.response.start":
            raise RuntimeError(f"the ASGI app sent {first.get('type')!r} before 'http.response.start'")
        status = int(first["status"])
        headers = [(bytes(k), bytes(v)) for k, v in first.get("headers", [])]
        if status == 500:
            # Starlette's error middleware answers 500 and then re-raises: read to the end so a crash
            # surfaces as its own exception, not as a bare 500.
            await self._read_to_end()
        return status, headers

    async def _read_to_end(self) -> None:
        try:
            while (chunk := await self._next()) is not None:
                self._buffered.append(chunk)
            while self._ended is None:
                item = await self._get()
                if isinstance(item, _End):
                    self._ended = item
        except BodyCut:
            pass
        if self._ended is not None and self._ended.error is not None:
            raise self._ended.error

    async def _next(self) -> bytes | None:
        while not self._complete:
            item = await self._get()
            if isinstance(item, _End):
                self._ended = item
                raise BodyCut("peer closed connection without sending complete message body") from item.error
            if item.get("type") != "http.response.body":
                continue
            self._complete = not item.get("more_body", False)
            chunk = bytes(item.get("body", b""))
            if chunk:
                return chunk
        return None

    async def next_chunk(self) -> bytes | None:
        """The next piece of the body as the app sent it; None at the end."""
        if self._buffered:
            return self._buffered.pop(0)
        return await self._next()

    async def aclose(self) -> None:
        self._disconnected.set()
        task = self._task
        if task is None or task.done():
            return
        if not self._complete:
            task.cancel()  # the client stopped reading early: stop producing
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise


def http_scope(method: str, url: Any, raw_headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        # 2.3: Starlette then listens on `receive` for the disconnect that closing the response sends.
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "headers": [(k.lower(), v) for k, v in raw_headers],
        "scheme": url.scheme,
        "path": url.path,
        "raw_path": url.raw_path.split(b"?")[0],
        "query_string": url.query,
        "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
        "client": _CLIENT_ADDR,
        "root_path": "",
        "extensions": {},
    }


# ---------------------------------------------------------------------------------- the background loop


class LoopThread:
    """One event loop in a daemon thread, shared by every sync transport, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="synthgpt-transport", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.stop)
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure()).result()

    def stop(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()


BACKGROUND = LoopThread()
"""The loop sync transports run apps on."""
