"""The Starlette app factory. No module globals: everything an app needs hangs off `app.state`.

`app.state.mock` is read on every request, so replacing it (or `mock.rules`) takes effect at once:
that is how a rule-file reload swaps the rules under a running server.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import State
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp

from ..codec.base import WireCodec
from ..codec.sse import StreamAborted
from ..engine import MockGPT
from ..model import ErrorSpec
from ..state.aio import shared_answers
from ..state.base import MemoryState, StateStore
from .admin import METRICS_PATHS, AdminGuard, clear_calls, healthz, list_calls, readyz
from .count_tokens import count_tokens_endpoint
from .front import Front, HostCheck
from .memo import DEFAULT_MEMO_ENTRIES, ResponseMemo
from .metrics import Metrics, metrics_endpoint
from .models import dialect_for, get_model, list_models
from .observe import ObserveMiddleware
from .offload import Worker
from .playground import (
    PAGE_PATHS,
    call_detail,
    explain_call,
    journal_state,
    list_rules,
    playground_asset,
    playground_page,
)
from .provider_routes import PROVIDER_ROUTES
from .responses import error_response, request_id
from .routes import API_ROUTES, ApiEndpoint, ApiRoute, route_codecs

__all__ = ["DEFAULT_MAX_BODY_BYTES", "SynthgptApp", "create_app"]

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
_AZURE_PREFIXES = ("/openai", "/openai/v1", "/api/projects/{project}/openai/v1")  # + AI Foundry projects
_MODEL_LISTS = (*_AZURE_PREFIXES, "/v1beta")  # and Gemini's v1beta (its /v1 is OpenAI's path too)

log = logging.getLogger("synthgpt.server")


def create_app(
    mock: MockGPT,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    routes: Sequence[ApiRoute] = API_ROUTES,
    on_startup: Sequence[Callable[[], object]] = (),
    on_shutdown: Sequence[Callable[[], object]] = (),
    memo_entries: int = DEFAULT_MEMO_ENTRIES,
    state: StateStore | None = None,
    admin: bool = True,
    admin_token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    metrics_public: bool = False,
) -> Starlette:
    """An ASGI app answering every route in `routes` (default: all built-in APIs) from `mock`.

    `on_startup` / `on_shutdown` run in the server process around serving (e.g. a rule-file watcher).
    `memo_entries` bounds the memo of encoded answers replayed for repeated requests (`server.memo`;
    0 turns it off). `admin=False` leaves out the `/_synthgpt/` journal routes (they answer 404);
    `admin_token` closes them, and `/metrics` unless `metrics_public`, to requests without
    `Authorization: Bearer <token>` (401).
    `allowed_hosts` (Starlette's `TrustedHostMiddleware` patterns, `*.example.com` or `*`) answers 400 to
    a request whose `Host` header names another host: what a page in a browser sends after rebinding its
    own name to this server's address. None accepts any host (in-process transports use made-up ones).
    `state` is what replicas share (`synthgpt.state`): its Responses store replaces the codec's own, and
    `/readyz` reports whether it answers.
    """
    if max_body_bytes < 1:
        raise ValueError(f"max_body_bytes must be >= 1, got {max_body_bytes}")
    if memo_entries < 0:
        raise ValueError(f"memo_entries must be >= 0, got {memo_entries}")
    shared_store = state.responses() if state is not None else None

    api_routes: list[tuple[BaseRoute, WireCodec]] = []
    direct: dict[str, ApiEndpoint] = {}  # POST routes without path parameters: the front dispatches them
    for r, codec in route_codecs(routes, shared_store):
        endpoint = ApiEndpoint(codec)
        api_routes.append((Route(r.path, endpoint, methods=list(r.methods)), codec))
        if "{" not in r.path and r.methods == ("POST",):
            direct.setdefault(r.path, endpoint)  # the first route of a path answers it, as in routing
    all_routes: list[BaseRoute] = [
        *(route for route, _ in api_routes),
        *PROVIDER_ROUTES,
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", get_model, methods=["GET"]),
        *(Route(p + "/models", list_models, methods=["GET"]) for p in _MODEL_LISTS),
        *(Route(p + "/models/{model_id:path}", get_model, methods=["GET"]) for p in _MODEL_LISTS),
        Route("/v1/messages/count_tokens", count_tokens_endpoint, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]
    if admin:
        all_routes += [
            Route("/_synthgpt/calls", list_calls, methods=["GET"]),
            Route("/_synthgpt/calls", clear_calls, methods=["DELETE"]),
            Route("/_synthgpt/calls/{index:int}", call_detail, methods=["GET"]),
            Route("/_synthgpt/journal", journal_state, methods=["GET"]),
            Route("/_synthgpt/explain", explain_call, methods=["POST"]),
            Route("/_synthgpt/rules", list_rules, methods=["GET"]),
            Route("/_synthgpt", playground_page, methods=["GET"]),
            Route("/_synthgpt/", playground_page, methods=["GET"]),
            Route("/_synthgpt/static/{name}", playground_asset, methods=["GET"]),
        ]
    # a foreign Host is refused by the front, before anything else; the guard before any admin route
    middleware: list[Middleware] = [Middleware(ObserveMiddleware)]  # outermost first: it times the rest
    if admin and admin_token:
        guarded = frozenset() if metrics_public else METRICS_PATHS
        middleware.append(Middleware(AdminGuard, token=admin_token, public=PAGE_PATHS, guarded=guarded))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for hook in on_startup:
            hook()
        try:
            yield
        finally:
            app.state.worker.close()
            for hook in on_shutdown:
                hook()

    def codec_for(request: Request) -> WireCodec:
        for route, codec in api_routes:
            match, _ = route.matches(request.scope)
            if match is not Match.NONE:
                return codec
        return dialect_for(request.headers).codec

    async def not_found(request: Request, exc: Exception) -> Response:
        mock: MockGPT = request.app.state.mock
        spec = ErrorSpec(
            status=404,
            message=f"Unknown request URL: {request.method} {request.url.path}. Check the URL and method.",
            type="invalid_request_error",
            code="unknown_url",
        )
        return error_response(codec_for(request), spec, 404, request_id(mock.seed, "404", request.url.path))

    async def not_allowed(request: Request, exc: Exception) -> Response:
        mock: MockGPT = request.app.state.mock
        allow = exc.headers.get("Allow", "") if isinstance(exc, HTTPException) and exc.headers else ""
        spec = ErrorSpec(
            status=405,
            message=f"Method {request.method} is not allowed for {request.url.path}. Allowed: {allow}.",
            type="invalid_request_error",
            code="method_not_allowed",
            headers={"allow": allow} if allow else {},
        )
        return error_response(codec_for(request), spec, 405, request_id(mock.seed, "405", request.url.path))

    async def server_error(request: Request, exc: Exception) -> Response:
        # Reached only if something escaped a handler: answer in shape, log the details, show none.
        # A stream dropped on purpose passes here too, after its response started (nothing is sent).
        if not isinstance(exc, StreamAborted):
            log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        mock: MockGPT = request.app.state.mock
        spec = ErrorSpec(status=500, type="server_error")
        return error_response(codec_for(request), spec, 500, request_id(mock.seed, "500", request.url.path))

    app = SynthgptApp(
        routes=all_routes,
        exception_handlers={404: not_found, 405: not_allowed, 500: server_error},
        lifespan=lifespan,
        middleware=middleware,
    )
    app.front_api = direct
    app.host_check = HostCheck(allowed_hosts) if allowed_hosts is not None else None
    app.state = AppState()
    app.state.mock = mock
    app.state.max_body_bytes = max_body_bytes
    app.state.memo = ResponseMemo(memo_entries) if memo_entries else None
    app.state.state_store = state if state is not None else MemoryState()
    app.state.shared = shared_answers(state)  # `--state redis`: the routes await Redis (`state.aio`)
    app.state.metrics = Metrics(mock)
    app.state.worker = Worker()  # heavy answers are drawn and encoded there (`server.offload`)
    # each API's codec as its routes use it (the first route's): the playground decodes with them
    app.state.codecs = {codec.api: codec for _, codec in reversed(api_routes)}
    return app


class AppState(State):
    """Starlette's `State` whose attributes are plain instance attributes as well: `State` finds each one
    through `__getattr__`, a Python call per read (~0.35 µs), and a request reads several (the mock, the
    memo, the worker, the limits, the metrics). Its mapping side (`_state`) is kept equal."""

    def __setattr__(self, key: str, value: Any) -> None:
        self._state[key] = value
        object.__setattr__(self, key, value)

    def __delattr__(self, key: str) -> None:
        del self._state[key]
        object.__delattr__(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.__setattr__(key, value)

    def __delitem__(self, key: str) -> None:
        self.__delattr__(key)


class SynthgptApp(Starlette):
    """A Starlette app behind `server.front.Front`: the Host check, and the API routes without path
    parameters dispatched directly (the rest, and every error handler, as Starlette does)."""

    front_api: Mapping[str, ApiEndpoint]
    """API path -> endpoint, for the routes the front dispatches (set by `create_app`)."""
    host_check: HostCheck | None

    def build_middleware_stack(self) -> ASGIApp:
        on_error = self.exception_handlers.get(500) or self.exception_handlers.get(Exception)
        api, hosts = getattr(self, "front_api", {}), getattr(self, "host_check", None)
        return Front(super().build_middleware_stack(), api, hosts, on_error)
