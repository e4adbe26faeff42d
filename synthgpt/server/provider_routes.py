"""Provider endpoints that answer without generating: token counts and model catalogues.

They belong to an API (their errors are in its shape) but draw nothing, so they are plain Starlette routes
beside the generic `API_ROUTES` handler rather than codecs: Gemini's `countTokens` counts a request's
prompt exactly as the answer's usage would (`MockGPT.prompt_tokens`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..codec.common import parse_json_body
from ..codec.gemini import GeminiCodec
from ..codec.gemini_request import decode_gemini_request, field, invalid
from ..errors import RequestError
from ..mock import MockGPT
from ..model import ModelRequest
from .responses import codec_headers, error_response, json_response, processing_ms, request_id
from .routes import read_body

__all__ = ["PROVIDER_ROUTES"]

_GEMINI = GeminiCodec()


def _gemini_count_body(body: Any, model: str) -> dict[str, Any]:
    if isinstance(body, dict) and field(body, "generateContentRequest") is not None:
        inner = field(body, "generateContentRequest")
        if isinstance(inner, dict):
            return decode_gemini_request({k: v for k, v in inner.items() if k != "model"}, model)
    if not isinstance(body, dict) or body.get("contents") is None:
        raise invalid("* CountTokensRequest.contents: contents is not specified", "contents")
    return decode_gemini_request({"contents": body["contents"]}, model)


async def gemini_count_tokens(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    model = str(request.path_params["model"])
    rid = request_id(mock.seed, "countTokens", request.url.path)
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
        neutral = _gemini_count_body(parse_json_body(raw), model)
        tokens = mock.prompt_tokens(ModelRequest(**neutral))
    except RequestError as exc:
        return error_response(_GEMINI, exc, 400, rid)
    except Exception:  # BodyTooLarge, or a request the model refuses: Google's shape, never a traceback
        return error_response(_GEMINI, invalid("Request contains an invalid argument."), 400, rid)
    headers = codec_headers(_GEMINI, rid, processing_ms(rid))
    body = {"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]}
    return json_response(body, 200, headers)


PROVIDER_ROUTES: tuple[BaseRoute, ...] = tuple(
    Route(f"/{version}/models/{{model}}:countTokens", gemini_count_tokens, methods=["POST"])
    for version in ("v1beta", "v1")
)
