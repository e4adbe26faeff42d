"""Health and journal routes: `GET /healthz`, `GET /readyz`, `GET` and `DELETE /_synthgpt/calls`.

With several workers each process keeps its own journal: these routes show the worker that answered,
unless `--journal PATH.sqlite` or `--state redis://…` gives them one shared journal (and, with Redis,
`DELETE` resets the call counts of every replica at once).

`/healthz` is liveness (the process answers HTTP); `/readyz` is readiness for a load balancer or a
Kubernetes probe: the rules are loaded and the state store answers, else 503 saying which is not.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import StateUnavailable
from ..journal import CallRecord
from ..mock import MockGPT
from .responses import json_response

__all__ = ["clear_calls", "healthz", "list_calls", "readyz", "record_json"]


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
    problem = store.check()
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
    see `synthgpt.journal.query`."""
    from ..journal.query import CallQuery, QueryError, records_jsonl

    mock: MockGPT = request.app.state.mock
    try:
        query = CallQuery.from_params(request.query_params)
    except QueryError as exc:
        error = {"message": exc.message, "type": "invalid_request_error", "param": exc.param, "code": None}
        return json_response({"error": error}, 400)
    try:
        records, total = query.run(mock.journal)
    except StateUnavailable as exc:
        return _unavailable(exc)
    headers = query.headers(total, request.url.path)
    if query.format == "jsonl":
        return Response(records_jsonl(records), media_type="application/x-ndjson", headers=headers)
    return json_response([record_json(r) for r in records], headers=headers)


async def clear_calls(request: Request) -> Response:
    """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
    mock: MockGPT = request.app.state.mock
    try:
        count = len(mock.journal)
        mock.reset()
    except StateUnavailable as exc:
        return _unavailable(exc)
    return json_response({"deleted": count})
