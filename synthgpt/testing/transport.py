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
500 because it raised, the app's exception is raised so the test shows the real traceback. The
request's read timeout (what the SDKs pass as `timeout=`) applies between the app's writes, as it does
between socket reads: a `!MOCK_DELAY:5000!` answer to a client with `timeout=1` raises `ReadTimeout`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import httpx

from .asgi_exchange import BACKGROUND, ASGIApp, BodyCut, Exchange, ReadTimedOut, http_scope

__all__ = [
    "ASGIApp",
    "AsyncInProcessTransport",
    "AsyncInProcessTransport2",
    "InProcessTransport",
    "InProcessTransport2",
    "as_asgi_app",
]



def as_asgi_app(target: Any) -> ASGIApp:
    """An ASGI app for `target`: a MockGPT is served by `synthgpt.server.create_app`; an app is kept."""
    from ..engine import MockGPT

    if isinstance(target, MockGPT):
        from ..server import create_app

        app: ASGIApp = create_app(target)
        return app
    if not callable(target):
        raise TypeError(f"expected a MockGPT or an ASGI app, got {type(target).__name__}")
    return target  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------- shared plumbing


@dataclass(frozen=True, slots=True)
class _Errors:
    """The exceptions one httpx flavour raises for a cut body and a read timeout."""

    cut: type[Exception]
    timeout: type[Exception]


@contextmanager
def _as_http_errors(errors: _Errors) -> Iterator[None]:
    try:
        yield
    except BodyCut as exc:
        raise errors.cut(str(exc)) from exc.__cause__
    except ReadTimedOut as exc:
        raise errors.timeout(str(exc)) from None


def _read_timeout(extensions: Mapping[str, Any]) -> float | None:
    timeout = extensions.get("timeout")
    value = timeout.get("read") if isinstance(timeout, Mapping) else None
    return float(value) if value is not None else None


class _SyncBody:
    """A sync response body read from an exchange on the background loop."""

    errors: _Errors

    def __init__(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        while True:
            with _as_http_errors(self.errors):
                chunk = BACKGROUND.run(self._exchange.next_chunk())
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            BACKGROUND.run(self._exchange.aclose())


class _AsyncBody:
    errors: _Errors

    def __init__(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            with _as_http_errors(self.errors):
                chunk = await self._exchange.next_chunk()
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._exchange.aclose()


_Opened = tuple[int, list[tuple[bytes, bytes]], Exchange]


def _open_sync(app: ASGIApp, request: Any, errors: _Errors) -> _Opened:
    scope = http_scope(request.method, request.url, request.headers.raw)
    body, timeout = request.read(), _read_timeout(request.extensions)

    async def go() -> _Opened:
        exchange = Exchange(app, scope, body, timeout)  # made on the loop that will run it
        status, headers = await exchange.start()
        return status, headers, exchange

    with _as_http_errors(errors):
        return BACKGROUND.run(go())


async def _open_async(app: ASGIApp, request: Any, errors: _Errors) -> _Opened:
    scope = http_scope(request.method, request.url, request.headers.raw)
    exchange = Exchange(app, scope, await request.aread(), _read_timeout(request.extensions))
    with _as_http_errors(errors):
        status, headers = await exchange.start()
    return status, headers, exchange


# ------------------------------------------------------------------------------------------ httpx

_HTTPX = _Errors(httpx.RemoteProtocolError, httpx.ReadTimeout)


class _HttpxSyncBody(_SyncBody, httpx.SyncByteStream):
    errors = _HTTPX


class _HttpxAsyncBody(_AsyncBody, httpx.AsyncByteStream):
    errors = _HTTPX


class InProcessTransport(httpx.BaseTransport):
    """A sync `httpx` transport serving `target` (a MockGPT or an ASGI app) in process."""

    def __init__(self, target: Any) -> None:
        self.app = as_asgi_app(target)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        status, headers, exchange = _open_sync(self.app, request, _HTTPX)
        return httpx.Response(status, headers=headers, stream=_HttpxSyncBody(exchange), request=request)


class AsyncInProcessTransport(httpx.AsyncBaseTransport):
    """An async `httpx` transport serving `target` (a MockGPT or an ASGI app) on the caller's loop."""

    def __init__(self, target: Any) -> None:
        self.app = as_asgi_app(target)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        status, headers, exchange = await _open_async(self.app, request, _HTTPX)
        return httpx.Response(status, headers=headers, stream=_HttpxAsyncBody(exchange), request=request)


# ------------------------------------------------------------------------------------------ httpx2

if TYPE_CHECKING or find_spec("httpx2") is not None:
    import httpx2

    _HTTPX2 = _Errors(httpx2.RemoteProtocolError, httpx2.ReadTimeout)

    class _Httpx2SyncBody(_SyncBody, httpx2.SyncByteStream):
        errors = _HTTPX2

    class _Httpx2AsyncBody(_AsyncBody, httpx2.AsyncByteStream):
        errors = _HTTPX2

    class InProcessTransport2(httpx2.BaseTransport):
        """A sync `httpx2` transport (openai>=3, anthropic>=2) serving `target` in process."""

        def __init__(self, target: Any) -> None:
            self.app = as_asgi_app(target)

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            status, headers, exchange = _open_sync(self.app, request, _HTTPX2)
            return httpx2.Response(status, headers=headers, stream=_Httpx2SyncBody(exchange), request=request)

    class AsyncInProcessTransport2(httpx2.AsyncBaseTransport):
        """An async `httpx2` transport (openai>=3, anthropic>=2) serving `target` on the caller's loop."""

        def __init__(self, target: Any) -> None:
            self.app = as_asgi_app(target)

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            status, headers, exchange = await _open_async(self.app, request, _HTTPX2)
            stream = _Httpx2AsyncBody(exchange)
            return httpx2.Response(status, headers=headers, stream=stream, request=request)
