"""The app's front: the Host check for every request, and the API routes without Starlette's generic path.

A served app is a Starlette app (`SynthgptApp`) whose middleware stack sits behind `Front`:

    request ─▶ Front ─ Host refused? ─▶ 400 (Starlette's TrustedHostMiddleware answers it)
                 │
                 ├─ POST to an API path without parameters (`/v1/chat/completions`, …)
                 │      └─▶ observe (log line, metrics) ─▶ routes.handle          (plain ASGI)
                 │
                 └─ anything else ─▶ Starlette: errors, observe, admin guard, routing, handlers

What the generic path costs per request (a `Headers` object and a host parse, three middleware layers,
the router's walk over some 80 routes, a `Request` and the endpoint wrapper) is a large share of what the
ceiling app spends on a whole answer; the answers are the same bytes either way (`tests/server/
test_server_front.py` sends the same requests through both).

The Host decision is a function of the first `Host` header's value: Starlette's middleware makes it once
per value (the few a server sees), and the front keeps it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .observe import SCOPE_KEY, observed

__all__ = ["Front", "HostCheck"]

ErrorHandler = Callable[[Request, Exception], Awaitable[Response]]
_MAX_HOSTS = 256  # distinct Host values remembered; past it the memory starts over


class HostCheck:
    """Which `Host` headers a served app accepts (TrustedHostMiddleware's patterns and answers)."""

    def __init__(self, allowed_hosts: Sequence[str]) -> None:
        self._trusted = TrustedHostMiddleware(_allowed, allowed_hosts=list(allowed_hosts), www_redirect=False)
        self._decided: dict[bytes | None, bool] = {}

    async def allows(self, scope: Scope) -> bool:
        value: bytes | None = None
        for k, v in scope["headers"]:
            if k == b"host":
                value = v
                break
        ok = self._decided.get(value)
        if ok is None:
            ok = await self._decide(value)
            if len(self._decided) >= _MAX_HOSTS:
                self._decided.clear()
            self._decided[value] = ok
        return ok

    async def _decide(self, value: bytes | None) -> bool:
        probe: dict[str, Any] = {"type": "http", "headers": [] if value is None else [(b"host", value)]}
        sent: list[Message] = []

        async def keep(message: Message) -> None:
            sent.append(message)

        await self._trusted(probe, _no_body, keep)
        return bool(probe.get(_ALLOWED))

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._trusted(scope, receive, send)  # a refused host: the middleware sends its 400


_ALLOWED = "synthgpt.host_allowed"


async def _allowed(scope: Scope, receive: Receive, send: Send) -> None:
    scope[_ALLOWED] = True


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class Front:
    """The outermost ASGI layer of a served app (see the module's notes)."""

    def __init__(
        self,
        inner: ASGIApp,
        api: Mapping[str, ASGIApp],
        hosts: HostCheck | None,
        on_error: ErrorHandler | None,
    ) -> None:
        self.inner = inner
        self.api = dict(api)
        """API path -> its endpoint, for routes without path parameters (POST only)."""
        self.hosts = hosts
        self.on_error = on_error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        hosts = self.hosts
        if hosts is not None and kind in ("http", "websocket") and not await hosts.allows(scope):
            await hosts.refuse(scope, receive, send)
            return
        if kind == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            endpoint = self.api.get(scope["path"])
            if endpoint is not None:
                await self._api(endpoint, scope, receive, send)
                return
        await self.inner(scope, receive, send)

    async def _api(self, endpoint: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """The endpoint, observed as `ObserveMiddleware` does, a failure answered as Starlette's
        `ServerErrorMiddleware` does (the app's 500 handler, if nothing was sent yet; raised again)."""
        try:
            await observed(endpoint, scope, receive, send)
        except Exception as exc:
            if not scope[SCOPE_KEY].status and self.on_error is not None:
                response = await self.on_error(Request(scope), exc)
                await response(scope, receive, send)
            raise
