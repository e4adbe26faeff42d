"""`POST /v1/messages/count_tokens`: Anthropic's token count of a Messages request, without an answer.

anthropic's `messages.count_tokens` and langchain-anthropic's `get_num_tokens_from_messages` call it. The
count is synthgpt's own, the same the engine reports as `usage.input_tokens` for that request, so a client
budgeting with it sees the usage it predicted. The body is a Messages request without `max_tokens`.
"""

from __future__ import annotations

import hashlib

from starlette.requests import Request
from starlette.responses import Response

from ..codec.anthropic_messages import MessagesCodec
from ..codec.common import parse_json_body
from ..errors import RequestError
from ..mock import MockGPT
from ..model import ErrorSpec
from .responses import codec_headers, error_response, json_response, processing_ms, request_id
from .routes import BodyTooLarge, _serves, model_not_found, read_body

__all__ = ["count_tokens_endpoint"]

_CODEC = MessagesCodec()
_COUNT_ONLY = ("stream", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "metadata")


async def count_tokens_endpoint(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    path: str = request.scope["path"]
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
    except BodyTooLarge as exc:
        spec = ErrorSpec(status=413, message=str(exc), type="invalid_request_error", code="request_too_large")
        return error_response(_CODEC, spec, 413, request_id(mock.seed, path, exc.size))
    key = (path, hashlib.blake2b(raw, digest_size=16).hexdigest())
    try:
        body = parse_json_body(raw)
        if not isinstance(body, dict):
            raise RequestError("Input should be a valid dictionary", None)
        for name in _COUNT_ONLY:  # fields of a create call that count_tokens does not take
            if name in body:
                raise RequestError(f"{name}: Extra inputs are not permitted", name)
        req = _CODEC.decode({**body, "max_tokens": 1}, request.headers, request.path_params)
    except RequestError as exc:
        return error_response(_CODEC, exc, 400, request_id(mock.seed, *key))
    rid = request_id(mock.seed, "count_tokens", req.fingerprint())
    if not _serves(mock, req.model):
        return error_response(_CODEC, model_not_found(req.model), 404, rid)
    return json_response(
        {"input_tokens": mock.prompt_tokens(req)}, 200, codec_headers(_CODEC, rid, processing_ms(rid))
    )
