"""Health and journal routes: `GET /healthz`, `GET /_synthgpt/calls`, `DELETE /_synthgpt/calls`.

With several workers each process keeps its own journal: these routes show the worker that answered,
unless `--journal PATH.sqlite` gives them one shared journal.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..journal import CallRecord
from ..mock import MockGPT
from .responses import json_response

__all__ = ["clear_calls", "healthz", "list_calls", "record_json"]


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
    records, total = query.run(mock.journal)
    headers = query.headers(total, request.url.path)
    if query.format == "jsonl":
        return Response(records_jsonl(records), media_type="application/x-ndjson", headers=headers)
    return json_response([record_json(r) for r in records], headers=headers)


async def clear_calls(request: Request) -> Response:
    """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
    mock: MockGPT = request.app.state.mock
    count = len(mock.journal)
    mock.reset()
    return json_response({"deleted": count})
