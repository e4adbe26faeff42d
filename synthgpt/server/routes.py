"""The API routes: one table of (path, codec, methods), one generic handler.

Adding an API is one line in `API_ROUTES`. The handler does the same for every API: read the body under
the size limit (413), parse JSON (400), `codec.decode` (400 naming the param), check the served models
(404), generate, then answer with the rule's error, a stream (SSE via `codec.sse`) or a JSON body.
Every failure is answered in the route's provider shape; nothing unexpected leaks a traceback.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..codec.anthropic_messages import MessagesCodec
from ..codec.base import WireCodec
from ..codec.common import parse_json_body
from ..codec.embeddings import EmbeddingsCodec
from ..codec.openai_chat import ChatCodec
from ..codec.openai_responses import ResponsesCodec
from ..codec.sse import plan_wire
from ..errors import NoRuleMatched, RequestError, SynthGPTError
from ..mock import MockGPT
from ..model import ErrorSpec, ModelOutput, ModelRequest
from .memo import MemoEntry, memo_slot
from .observe import note_api, note_output, note_request
from .pacing import PacedStream, pacer
from .responses import (
    CutJsonBody,
    EventStreamBody,
    codec_headers,
    error_response,
    json_bytes,
    json_response,
    processing_ms,
    request_id,
)

__all__ = ["API_ROUTES", "ApiRoute", "BodyTooLarge", "api_endpoint", "model_not_found", "read_body"]

log = logging.getLogger("synthgpt.server")


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One API endpoint: `path` (Starlette syntax; path params reach `codec.decode` as `params`)."""

    path: str
    codec: WireCodec | type
    """A codec, or a codec class: `create_app` makes one instance of a class per app, shared by its routes
    (codecs with per-app state, like the Responses `previous_response_id` store)."""
    methods: tuple[str, ...] = ("POST",)


_CHAT = ChatCodec()

API_ROUTES: tuple[ApiRoute, ...] = (
    ApiRoute("/v1/chat/completions", _CHAT),
    # Azure OpenAI: the deployment names the model; `?api-version=` is accepted and ignored.
    ApiRoute("/openai/deployments/{deployment}/chat/completions", _CHAT),
    ApiRoute("/v1/responses", ResponsesCodec),
    ApiRoute("/openai/v1/responses", ResponsesCodec),  # Azure OpenAI v1 (`api-key` header accepted)
    ApiRoute("/openai/responses", ResponsesCodec),  # `AzureOpenAI(api_version=…)` posts here
    ApiRoute("/v1/messages", MessagesCodec()),
    ApiRoute("/v1/embeddings", EmbeddingsCodec()),
    ApiRoute("/openai/v1/embeddings", EmbeddingsCodec()),
    ApiRoute("/openai/deployments/{deployment}/embeddings", EmbeddingsCodec()),
)


class BodyTooLarge(Exception):
    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"Request body too large: {size} bytes exceeds the limit of {limit} bytes.")


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing as soon as it is known to exceed `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def model_not_found(model: str) -> ErrorSpec:
    return ErrorSpec(
        status=404,
        message=f"The model `{model}` does not exist or you do not have access to it.",
        type="invalid_request_error",
        code="model_not_found",
    )


def _serves(mock: MockGPT, model: str) -> bool:
    models = mock.rules.models
    return not models or any(fnmatch.fnmatchcase(model, pattern) for pattern in models)


def api_endpoint(codec: WireCodec) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await handle(request, codec)

    endpoint.__name__ = f"{codec.api}_endpoint"
    return endpoint


async def handle(request: Request, codec: WireCodec) -> Response:
    mock: MockGPT = request.app.state.mock  # read per request: a rule reload may swap it
    path: str = request.scope["path"]  # request.url would build a URL object on every request
    raw_key = (path, "")
    note_api(request.scope, codec.api)
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
    except BodyTooLarge as exc:
        spec = ErrorSpec(status=413, message=str(exc), type="invalid_request_error", code="request_too_large")
        return error_response(codec, spec, 413, request_id(mock.seed, *raw_key, exc.size))
    raw_key = (path, hashlib.blake2b(raw, digest_size=16).hexdigest())
    try:
        body = parse_json_body(raw)
    except RequestError as err:
        return error_response(codec, err, 400, request_id(mock.seed, *raw_key))
    pace = pacer()
    if pace.running:  # let running paced streams' frames out before this request's work
        await pace.admit()
    req: ModelRequest | None = None
    try:
        req = codec.decode(body, request.headers, request.path_params)
        note_request(request.scope, req)
        rid = request_id(mock.seed, req.api, req.fingerprint())
        if not _serves(mock, req.model):
            return error_response(codec, model_not_found(req.model), 404, rid)
        slot = memo_slot(request.scope)
        if slot is None or not _plain_generation(mock):
            slot = None
            output = await mock.agenerate(req)
        else:
            output, record, replayable = mock.generate_traced(req)
    except RequestError as exc:
        rid = request_id(mock.seed, *raw_key)
        return error_response(codec, exc, getattr(exc, "status", 400), rid)  # e.g. 404 unknown previous id
    except NoRuleMatched as exc:
        spec = ErrorSpec(status=400, message=str(exc), type="invalid_request_error", code="no_rule_matched")
        return error_response(codec, spec, 400, request_id(mock.seed, *raw_key))
    except SynthGPTError as exc:  # a rule that cannot answer: the rule file's fault, said plainly
        log.warning("rule error answering %s: %s", request.url.path, exc)
        spec = ErrorSpec(status=500, message=str(exc), type="server_error", code="rule_error")
        return error_response(codec, spec, 500, request_id(mock.seed, *raw_key))
    except Exception:
        log.exception("unexpected error answering %s", request.url.path)
        spec = ErrorSpec(status=500, type="server_error")
        return error_response(codec, spec, 500, request_id(mock.seed, *raw_key))
    note_output(request.scope, output)
    response = await _answer(codec, req, output, rid)
    if slot is not None and replayable and _replayable_answer(body, output, response):
        memo, gen, key = slot
        wire = response.wire if isinstance(response, PacedStream) else None
        data = b"" if wire else response.data if isinstance(response, EventStreamBody) else response.body
        entry = MemoEntry(
            response.status_code, response.raw_headers, bytes(data), mock.rules[record.rule], record,
            codec.replay_effect(output, req), wire,
        )  # fmt: skip
        memo.put(gen, key, entry)
    return response


def _plain_generation(mock: MockGPT) -> bool:
    """`agenerate` is the engine's own, not wrapped (by a spy, a test double): tracing it is the same."""
    return "agenerate" not in vars(mock) and type(mock).agenerate is MockGPT.agenerate


def _replayable_answer(body: Any, output: ModelOutput, response: Response) -> bool:
    """An answer sent whole and at once, by a codec whose decoding read no state of its own."""
    if response.status_code != 200 or output.stream.first_delay_ms > 0 or output.error is not None:
        return False
    if type(response) not in (Response, EventStreamBody, PacedStream):
        return False
    # a Responses request continuing an earlier answer depends on what the store still holds
    return not (isinstance(body, dict) and body.get("previous_response_id") is not None)


async def _answer(codec: WireCodec, req: ModelRequest, output: ModelOutput, rid: str) -> Response:
    plan = output.stream
    # The first delay holds back the whole response, status line included: the same time to first byte
    # for a JSON body, an error and a stream (whose headers would otherwise go out at once).
    if plan.first_delay_ms > 0:
        await asyncio.sleep(plan.first_delay_ms / 1000.0)
    if output.error is not None:
        status = output.error.status
        return error_response(codec, output.error, status, rid, first_delay_ms=plan.first_delay_ms)
    headers = codec_headers(codec, rid, processing_ms(rid, plan.first_delay_ms))
    if req.stream:
        frames = codec.frames(output, req)
        headers["cache-control"] = "no-cache"
        headers["x-accel-buffering"] = "no"  # ask reverse proxies not to hold the stream back
        rest = plan if plan.first_delay_ms == 0 else plan.model_copy(update={"first_delay_ms": 0.0})
        wire = plan_wire(frames, rest, codec, output, req)
        if len(wire.writes) == 1 and wire.writes[0].delay_ms == 0 and not wire.aborts:
            return EventStreamBody(wire.writes[0].data, headers)  # unpaced: the whole stream in one write
        return PacedStream(wire, headers)
    if plan.faults:
        cut = plan.fault("truncate") or plan.fault("disconnect")
        if cut is not None:  # no frames to count: the body is cut in half (`responses.CutJsonBody`)
            return CutJsonBody(json_bytes(codec.body(output, req)), headers, drop=cut.kind == "disconnect")
    return json_response(codec.body(output, req), 200, headers)
