"""httpx transports that answer from an ASGI app in this process: no socket, and streamed bodies arrive
chunk by chunk as the app sends them.

httpx's own `ASGITransport` waits for the whole body before returning, so a slow SSE stream would reach
the client in one piece and time-to-first-token could not be tested. Here the app runs as a task that
feeds a queue; the response body reads from that queue. The sync transports run the app on one shared
background event loop (a daemon thread), so they work from plain functions and from async tests alike.

Two flavours of each, because the SDKs split: openai>=3 and anthropic>=2 take an `httpx2` client, older
SDKs and plain code take an `httpx` client. `InProcessTransport` / `AsyncInProcessTransport` are for
`httpx`; `InProcessTransport2` / `AsyncInProcessTransport2` for `httpx2`.

    transport = InProcessTransport2(mock)  # a MockGPT (served by synthgpt.server) or any ASGI app
    client = openai.OpenAI(api_key="sk-test", base_url="http://synthgpt.test/v1",
                           http_client=httpx2.Client(transport=transport))

When the app fails after the response started (the server's `disconnect` fault does that on purpose),
the body read raises `RemoteProtocolError`, as a cut connection does. When it fails before, or answers
500 because it raised, the app's exception is raised so the test shows the real traceback.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, MutableMapping
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

__all__ = [
    "ASGIApp",
    "AsyncInProcessTransport",
    "AsyncInProcessTransport2",
    "InProcessTransport",
    "InProcessTransport2",
    "as_asgi_app",
]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]
T = TypeVar("T")

_CLIENT_ADDR = ("127.0.0.1", 50000)


def as_asgi_app(target: Any) -> ASGIApp:
    """An ASGI app for `target`: a MockGPT is served by `synthgpt.server.create_app`; an app is kept."""
    from ..mock import MockGPT

    if isinstance(target, MockGPT):
        from ..server import create_app

        app: ASGIApp = create_app(target)
        return app
    if not callable(target):
        raise TypeError(f"expected a MockGPT or an ASGI app, got {type(target).__name__}")
    return target  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------ the exchange


class _End:
    """Queue sentinel: the app returned (`error` set if it raised)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class BodyCut(Exception):
    """The app stopped before finishing the body; the flavours turn it into `RemoteProtocolError`."""


class _Exchange:
    """One request/response through the app. Every method runs on the loop that runs the app."""

    def __init__(self, app: ASGIApp, scope: dict[str, Any], body: bytes) -> None:
        self._app = app
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

    async def start(self) -> tuple[int, list[tuple[bytes, bytes]]]:
        """Run the app until the response starts; its status and headers."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        first = await self._queue.get()
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
                item = await self._queue.get()
                if isinstance(item, _End):
                    self._ended = item
        except BodyCut:
            pass
        if self._ended is not None and self._ended.error is not None:
            raise self._ended.error

    async def _next(self) -> bytes | None:
        while not self._complete:
            item = await self._queue.get()
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


def _scope(method: str, url: httpx.URL | Any, raw_headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
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


class _LoopThread:
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


_LOOP = _LoopThread()


# ------------------------------------------------------------------------------------- shared plumbing


class _SyncBody:
    """A sync response body read from an exchange on the background loop."""

    cut_error: type[Exception] = httpx.RemoteProtocolError

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                chunk = _LOOP.run(self._exchange.next_chunk())
            except BodyCut as exc:
                raise self.cut_error(str(exc)) from exc.__cause__
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _LOOP.run(self._exchange.aclose())


class _AsyncBody:
    cut_error: type[Exception] = httpx.RemoteProtocolError

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._exchange.next_chunk()
            except BodyCut as exc:
                raise self.cut_error(str(exc)) from exc.__cause__
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._exchange.aclose()


_Opened = tuple[int, list[tuple[bytes, bytes]], "_Exchange"]


def _open_sync(app: ASGIApp, scope: dict[str, Any], body: bytes) -> _Opened:
    async def go() -> _Opened:
        exchange = _Exchange(app, scope, body)  # made on the loop that will run it
        status, headers = await exchange.start()
        return status, headers, exchange

    return _LOOP.run(go())


async def _open_async(app: ASGIApp, scope: dict[str, Any], body: bytes) -> _Opened:
    exchange = _Exchange(app, scope, body)
    status, headers = await exchange.start()
    return status, headers, exchange


# ------------------------------------------------------------------------------------------ httpx


class _HttpxSyncBody(_SyncBody, httpx.SyncByteStream):
    cut_error = httpx.RemoteProtocolError


class _HttpxAsyncBody(_AsyncBody, httpx.AsyncByteStream):
    cut_error = httpx.RemoteProtocolError


class InProcessTransport(httpx.BaseTransport):
    """A sync `httpx` transport serving `target` (a MockGPT or an ASGI app) in process."""

    def __init__(self, target: Any) -> None:
        self.app = as_asgi_app(target)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        scope = _scope(request.method, request.url, request.headers.raw)
        status, headers, exchange = _open_sync(self.app, scope, body)
        return httpx.Response(status, headers=headers, stream=_HttpxSyncBody(exchange), request=request)


class AsyncInProcessTransport(httpx.AsyncBaseTransport):
    """An async `httpx` transport serving `target` (a MockGPT or an ASGI app) on the caller's loop."""

    def __init__(self, target: Any) -> None:
        self.app = as_asgi_app(target)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope = _scope(request.method, request.url, request.headers.raw)
        status, headers, exchange = await _open_async(self.app, scope, body)
        return httpx.Response(status, headers=headers, stream=_HttpxAsyncBody(exchange), request=request)


# ------------------------------------------------------------------------------------------ httpx2

if TYPE_CHECKING or find_spec("httpx2") is not None:
    import httpx2

    class _Httpx2SyncBody(_SyncBody, httpx2.SyncByteStream):
        cut_error = httpx2.RemoteProtocolError

    class _Httpx2AsyncBody(_AsyncBody, httpx2.AsyncByteStream):
        cut_error = httpx2.RemoteProtocolError

    class InProcessTransport2(httpx2.BaseTransport):
        """A sync `httpx2` transport (openai>=3, anthropic>=2) serving `target` in process."""

        def __init__(self, target: Any) -> None:
            self.app = as_asgi_app(target)

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            body = request.read()
            scope = _scope(request.method, request.url, request.headers.raw)
            status, headers, exchange = _open_sync(self.app, scope, body)
            return httpx2.Response(status, headers=headers, stream=_Httpx2SyncBody(exchange), request=request)

    class AsyncInProcessTransport2(httpx2.AsyncBaseTransport):
        """An async `httpx2` transport (openai>=3, anthropic>=2) serving `target` on the caller's loop."""

        def __init__(self, target: Any) -> None:
            self.app = as_asgi_app(target)

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            scope = _scope(request.method, request.url, request.headers.raw)
            status, headers, exchange = await _open_async(self.app, scope, body)
            stream = _Httpx2AsyncBody(exchange)
            return httpx2.Response(status, headers=headers, stream=stream, request=request)
