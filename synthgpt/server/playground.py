"""The playground and journal viewer: a page at `/_synthgpt/` and the admin routes it reads.

    GET  /_synthgpt/                 the page (HTML, with its script and style from /_synthgpt/static/)
    POST /_synthgpt/explain          {"api": "chat", "request": {…}, "seed": 7}: trace and answer
    GET  /_synthgpt/rules            the loaded rules with their source file and line, the seed, the clock
    GET  /_synthgpt/calls/{index}    one journaled call whole: its request and the answer as sent
    GET  /_synthgpt/journal          {"total", "kept", "maxlen"}: cheap to ask every second (the page's
                                     live journal re-reads the calls only when these change)

Everything is served from the package (no CDN, no build step) under a strict content security policy;
the page writes every journaled value as text, never as markup.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..codec.common import parse_json_body
from ..engine import MockGPT
from ..errors import BodyTooLarge, RequestError
from ..journal import CallJournal, CallRecord
from .admin import record_json
from .explain_view import NEUTRAL, explain_wire
from .responses import json_response
from .routes import read_body
from .wire_view import WIRE_APIS, scratch_codec, wire_answer

__all__ = [
    "PAGE_PATHS",
    "call_detail",
    "explain_call",
    "find_call",
    "journal_state",
    "list_rules",
    "playground_asset",
    "playground_page",
]

_ASSETS = {  # name -> media type: the only files served, so no path ever reaches the file system
    "playground.html": "text/html; charset=utf-8",
    "playground.js": "text/javascript; charset=utf-8",
    "playground.css": "text/css; charset=utf-8",
}
PAGE_PATHS = frozenset({"/_synthgpt", "/_synthgpt/", *(f"/_synthgpt/static/{name}" for name in _ASSETS)})
"""The page and its assets hold no journal data: a guard requiring the admin token lets a browser load them
(a navigation cannot send `Authorization`); the page then asks for the token and sends it on every read."""
_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


def _bad(message: str, param: str | None, status: int = 400) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return json_response({"error": error}, status)


def _asset(name: str) -> Response:
    data = resources.files("synthgpt.server").joinpath("static", name).read_bytes()
    return Response(data, headers={**_HEADERS, "content-type": _ASSETS[name]})


async def playground_page(request: Request) -> Response:
    if not request.url.path.endswith("/"):  # relative links in the page resolve against the folder
        return RedirectResponse(request.url.path + "/", 308)
    return _asset("playground.html")


async def playground_asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in _ASSETS:
        return _bad(f"No such asset: {name!r}.", "name", 404)
    return _asset(name)


async def list_rules(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    rules: list[dict[str, Any]] = []
    for r in mock.rules:
        rules.append({
            "name": r.name,
            "source": r.source,
            "match": repr(r.matcher),
            "answer": _short(repr(r.generator)),
            "times": r.times,
            "calls": r.call_count,
            "stream": None if r.stream is None else r.stream.model_dump(mode="json", exclude_defaults=True),
            "error": None if r.error is None else r.error.status,
        })  # fmt: skip
    body = {"seed": mock.seed, "clock": repr(mock.clock), "models": list(mock.rules.models), "rules": rules,
            "apis": [*WIRE_APIS, NEUTRAL]}  # fmt: skip
    return json_response(body)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def explain_call(request: Request) -> Response:
    """`{"api": …, "request": …, "seed": …}`: see `synthgpt.server.explain_view.explain_wire`."""
    mock: MockGPT = request.app.state.mock
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
        body = parse_json_body(raw)
    except BodyTooLarge as exc:
        return _bad(str(exc), None, 413)
    except RequestError as exc:
        return _bad(exc.message, exc.param)
    if not isinstance(body, dict):
        return _bad('The body must be a JSON object: {"api": …, "request": {…}, "seed": …}.', None)
    api = body.get("api", "chat")
    if api not in (*WIRE_APIS, NEUTRAL):
        choices = ", ".join(repr(a) for a in (*WIRE_APIS, NEUTRAL))
        return _bad(f"Invalid 'api': expected one of {choices}, got {api!r}.", "api")
    if "request" not in body:
        return _bad("Missing required parameter: 'request' (the request body to explain).", "request")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        return _bad(f"Invalid 'seed': expected a whole number >= 0, got {seed!r}.", "seed")
    decoder = request.app.state.codecs.get(api)  # the app's: a Responses body may cite its stored answers
    return json_response(explain_wire(mock, api, body["request"], seed=seed, decoder=decoder))


def find_call(journal: CallJournal, index: int) -> CallRecord | None:
    """The journaled call numbered `index`, if still kept. Indices are consecutive, the oldest kept being
    `total - kept`, so the position is known; a journal where that is not so (a file several workers
    share) is searched."""
    kept = len(journal)
    pos = index - (journal.total - kept)
    if 0 <= pos < kept:
        page = journal.query(offset=pos, limit=1)
        if page and page[0].index == index:
            return page[0]
    matching = journal.list(lambda r: r.index == index)
    return matching[0] if matching else None


async def call_detail(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    index: int = request.path_params["index"]
    # off the event loop, as every read of the journal: a file the workers share is gathered first
    record = await run_in_threadpool(find_call, mock.journal, index)
    if record is None:
        kept = mock.journal.maxlen
        return _bad(f"No call {index} in the journal (it keeps the newest {kept}).", "index", 404)
    out = record_json(record)
    out["seed"] = str(record.seed)  # 64-bit: more than a JavaScript number holds
    out["duration_ms"] = record.duration_ms
    out["captures"] = dict(record.captures)
    out["neutral"] = record.request.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    # re-encoded: deterministic, and the server's store is left alone
    codec = scratch_codec(record.api, record.request)
    out["answer"] = wire_answer(codec, record.output, record.request, mock.seed).to_json()
    return json_response(out)


async def journal_state(request: Request) -> Response:
    journal: CallJournal = request.app.state.mock.journal
    kept = await run_in_threadpool(len, journal)  # off the event loop (see `call_detail`)
    return json_response({"total": journal.total, "kept": kept, "maxlen": journal.maxlen})
