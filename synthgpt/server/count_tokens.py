"""`POST /v1/messages/count_tokens`: Anthropic's token count of a Messages request, without an answer.

anthropic's `messages.count_tokens` and langchain-anthropic's `get_num_tokens_from_messages` call it. The
count is synthgpt's own, the same the engine reports as `usage.input_tokens` for that request, so a client
budgeting with it sees the usage it predicted. The body is a Messages request without `max_tokens` (and
the other fields of a create call only). Failures are answered like the Messages route's
(`pipeline.refuse`); nothing is drawn or journaled.
"""

from __future__ import annotations

import hashlib

from starlette.requests import Request
from starlette.responses import Response

from ..codec.anthropic.encode import MessagesCodec
from ..codec.common import parse_json_body
from ..engine import MockGPT
from ..errors import BodyTooLarge, RequestError
from ..pipeline import codec_headers, model_not_found, processing_ms, refuse, request_id, serves
from .responses import error_response, json_response, to_response
from .routes import read_body

__all__ = ["count_tokens_endpoint"]

_CODEC = MessagesCodec()
_CREATE_ONLY = ("stream", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "metadata")


async def count_tokens_endpoint(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    path: str = request.scope["path"]
    raw = b""
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
        body = parse_json_body(raw)
        if not isinstance(body, dict):
            raise RequestError("Input should be a valid dictionary", None)
        for name in _CREATE_ONLY:
            if name in body:
                raise RequestError(f"{name}: Extra inputs are not permitted", name)
        req = _CODEC.decode({**body, "max_tokens": _stand_in(body)}, request.headers, request.path_params)
    except (BodyTooLarge, RequestError) as exc:
        return to_response(refuse(mock, _CODEC, exc, path, hashlib.blake2b(raw, digest_size=16).hexdigest()))
    rid = request_id(mock.seed, "count_tokens", req.fingerprint())
    if not serves(mock, req.model):
        return error_response(_CODEC, model_not_found(req.model), 404, rid)
    headers = codec_headers(_CODEC, rid, processing_ms(rid))
    return json_response({"input_tokens": mock.prompt_tokens(req)}, 200, headers)


def _stand_in(body: dict[str, object]) -> int:
    """The `max_tokens` the decoder is given (a create call needs one; a count has none): above any
    thinking budget, which a create call's `max_tokens` must be, so the budget's own checks still apply."""
    thinking = body.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    return budget + 1 if type(budget) is int and budget >= 1 else 1
