"""Health and journal routes: `GET /healthz`, `GET /readyz`, `GET` and `DELETE /_synthgpt/calls`.

With several workers each process keeps its own journal: these routes show the worker that answered,
unless `--journal PATH.sqlite` or `--state redis://…` gives them one shared journal (and, with Redis,
`DELETE` resets the call counts of every replica at once).

The journal routes (everything under `/_synthgpt/`) show what every client asked and let anyone empty
the journal, so `AdminGuard` can close them behind a bearer token (`--admin-token`), and `/metrics` with
them (its labels name the models and rules clients used; `--metrics-public` leaves it open for a scraper
that cannot send a token); `/healthz` (liveness: the process answers) and `/readyz` (readiness: the rules
are loaded and the state store answers, else 503 saying which is not) stay open for load balancers and
orchestrators.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..engine import MockGPT
from ..errors import StateUnavailable
from ..journal import CallRecord
from .responses import json_response

if TYPE_CHECKING:
    from ..journal.query import CallQuery

__all__ = [
    "ADMIN_PREFIX",
    "ADMIN_TOKEN_ENV",
    "METRICS_PATHS",
    "AdminGuard",
    "clear_calls",
    "healthz",
    "list_calls",
    "readyz",
    "record_json",
]

ADMIN_PREFIX = "/_synthgpt"
ADMIN_TOKEN_ENV = "SYNTHGPT_ADMIN_TOKEN"
METRICS_PATHS = frozenset({"/metrics"})


def record_json(record: CallRecord) -> dict[str, Any]:
    """One journal record as JSON: what was asked (a summary) and what was answered."""
    req, out = record.request, record.output
    answer: dict[str, Any] = {
        "text": out.text,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in out.tool_calls],
        "finish_reason": out.finish_reason,
        "choices": len(out.choices),
        "usage": {"prompt_tokens": out.usage.prompt_tokens, "completion_tokens": out.usage.completion_tokens},
    }
    if out.error is not None:
        answer["error"] = {"status": out.error.status, "message": out.error.message}
    return {
        "index": record.index,
        "rule": record.rule,
        "api": record.api,
        "model": record.model,
        "seed": record.seed,
        "at": record.at,
        "outcome": record.outcome,
        "frames_sent": record.frames_sent,
        "request": {
            "summary": req.summary(),
            "last_user": req.last_user,
            "messages": len(req.messages),
            "tools": [t.name for t in req.tools],
            "stream": req.stream,
            "n": req.n,
            "retry_count": req.header("x-stainless-retry-count"),
        },
        "output": answer,
    }


async def healthz(request: Request) -> Response:
    return json_response({"status": "ok"})


async def readyz(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    store = request.app.state.state_store
    problems: list[str] = []
    if len(mock.rules) == 0:
        problems.append("no rules are loaded")
    problem = await store.acheck()  # a slow store must not hold up the loop the probe is asking about
    if problem is not None:
        problems.append(f"state store: {problem}")
    body: dict[str, Any] = {"status": "ready" if not problems else "unavailable", "rules": len(mock.rules),
                            "state": store.kind}  # fmt: skip
    if problems:
        body["problems"] = problems
    return json_response(body, 503 if problems else 200)


def _unavailable(exc: StateUnavailable) -> Response:
    error = {"message": str(exc), "type": "server_error", "param": None, "code": "state_unavailable"}
    return json_response({"error": error}, 503)


async def list_calls(request: Request) -> Response:
    """Filter (`rule`, `api`, `model` globs), paginate (`offset`, `limit`) or export (`format=jsonl`):
    see `synthgpt.journal.query`. Built in a worker thread: reading and encoding a thousand records takes
    a few hundred ms, which must not hold up every other request (and /healthz) on the event loop."""
    from ..journal.query import CallQuery, QueryError

    mock: MockGPT = request.app.state.mock
    try:
        query = CallQuery.from_params(request.query_params)
    except QueryError as exc:
        error = {"message": exc.message, "type": "invalid_request_error", "param": exc.param, "code": None}
        return json_response({"error": error}, 400)
    if request.app.state.shared is not None:  # this process's journal writes still in flight land first
        from ..journal.redis import settle

        await settle()
    return await run_in_threadpool(_calls_page, query, mock, request.url.path)


def _calls_page(query: CallQuery, mock: MockGPT, path: str) -> Response:
    from ..journal.query import records_jsonl

    try:
        records, total = query.run(mock.journal)
    except StateUnavailable as exc:
        return _unavailable(exc)
    headers = query.headers(total, path)
    if query.format == "jsonl":
        return Response(records_jsonl(records), media_type="application/x-ndjson", headers=headers)
    return json_response([record_json(r) for r in records], headers=headers)


async def clear_calls(request: Request) -> Response:
    """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
    mock: MockGPT = request.app.state.mock
    if request.app.state.shared is not None:
        from ..journal.redis import settle

        await settle()
    try:  # in a thread: with shared state these are round trips, which must not hold up the loop
        count = await run_in_threadpool(_reset, mock)
    except StateUnavailable as exc:
        return _unavailable(exc)
    return json_response({"deleted": count})


def _reset(mock: MockGPT) -> int:
    count = len(mock.journal)
    mock.reset()
    return count


def is_admin_path(path: str) -> bool:
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


class AdminGuard:
    """ASGI middleware: the `/_synthgpt/` routes answer only requests carrying `Authorization: Bearer
    <token>`; others get a 401 in OpenAI's error shape. The comparison takes the same time however much
    of the token a guess gets right (`hmac.compare_digest`)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        public: frozenset[str] = frozenset(),
        guarded: frozenset[str] = METRICS_PATHS,
    ) -> None:
        if not token:
            raise ValueError("the admin token must not be empty")
        self.app = app
        self._token = token.encode()
        self._public = public
        """Paths a GET may read without the token: the playground page and its assets, which hold no data
        (a browser's navigation cannot send `Authorization`; the page asks for the token and sends it)."""
        self._guarded = guarded
        """Paths outside `/_synthgpt/` that need the token too: `/metrics` (its labels name every model and
        rule clients used), unless `--metrics-public` leaves it open for a scraper."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (is_admin_path(path) or path in self._guarded) and not (
            scope["method"] == "GET" and path in self._public
        ):
            given = _bearer(scope)
            if given is None or not hmac.compare_digest(given, self._token):
                await _unauthorized(given is not None, path in self._guarded)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _bearer(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credential = value.strip().partition(b" ")
            return credential.strip() if scheme.lower() == b"bearer" else None
    return None


def _unauthorized(wrong: bool, metrics: bool = False) -> Response:
    if wrong:
        message = "The admin token is not valid for this server."
        code = "invalid_admin_token"
    else:
        what = "GET /metrics needs" if metrics else f"The {ADMIN_PREFIX}/ routes need"
        message = (
            f"{what} the admin token: send `Authorization: Bearer <token>`, the token given to "
            f"`synthgpt serve --admin-token` (or {ADMIN_TOKEN_ENV})"
            + (", or serve with --metrics-public." if metrics else ".")
        )
        code = "admin_token_required"
    error = {"message": message, "type": "authentication_error", "param": None, "code": code}
    return json_response({"error": error}, 401, {"www-authenticate": 'Bearer realm="synthgpt admin"'})
