"""Building HTTP answers: JSON bytes, deterministic request ids and latency headers, provider-shaped errors.

`openai-processing-ms` is derived from the request id (plus the answer's planned first delay), not
measured: the same request gets the same headers as well as the same body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..codec.base import WireCodec
from ..codec.errors import error_headers
from ..codec.openai_chat import openai_response_headers
from ..errors import RequestError
from ..model import ErrorSpec
from ..seeding import derive_seed, token_from_seed

__all__ = [
    "CutJsonBody",
    "EventStreamBody",
    "HasResponseHeaders",
    "codec_headers",
    "error_response",
    "json_bytes",
    "json_response",
    "processing_ms",
    "request_id",
]

_HEX = "0123456789abcdef"


@runtime_checkable
class HasResponseHeaders(Protocol):
    """A codec that names its own per-answer headers (request id header, version, …).

    Codecs without this method get the OpenAI set: `x-request-id`, `openai-processing-ms`,
    `openai-version`.
    """

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]: ...


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps builds one per call


def json_bytes(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


def request_id(seed: int, *key: object) -> str:
    """`req_` + 32 hex digits derived from the engine seed and what identifies the request."""
    return "req_" + token_from_seed(derive_seed(seed, "request-id", *key), 32, _HEX)


def processing_ms(rid: str, first_delay_ms: float = 0.0) -> int:
    return 40 + derive_seed("processing-ms", rid) % 360 + int(first_delay_ms)


def codec_headers(codec: WireCodec, rid: str, ms: int) -> dict[str, str]:
    # getattr rather than isinstance(codec, HasResponseHeaders): on Python 3.11 a runtime-checkable
    # Protocol check walks the protocol's attributes on every call (~10 us per answer)
    own = getattr(codec, "response_headers", None)
    if own is not None:
        headers: dict[str, str] = own(rid, ms)
        return headers
    return openai_response_headers(rid, ms)


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status_code=status, headers=headers, media_type="application/json")


def error_response(
    codec: WireCodec,
    error: ErrorSpec | RequestError,
    status: int,
    rid: str,
    *,
    first_delay_ms: float = 0.0,
) -> Response:
    """The provider-shaped error answer; an ErrorSpec also brings its retry and rate-limit headers."""
    headers = codec_headers(codec, rid, processing_ms(rid, first_delay_ms))
    if isinstance(error, ErrorSpec):
        headers.update(error_headers(error))
    body = codec.error_body(error, status)
    if body.get("request_id", "") is None:  # providers that echo the request id in error bodies (Anthropic)
        body["request_id"] = rid
    return json_response(body, status, headers)


class EventStreamBody(Response):
    """An SSE stream whose bytes are all due at once (no pacing, no delay, no cut), sent as one body.

    What StreamingResponse would put on the wire for it, without its per-answer task group (listening
    for a disconnect that cannot matter any more) and its three sends. There is no Content-Length, so
    the server still sends it chunked, like every other stream.
    """

    def __init__(self, data: bytes, headers: Mapping[str, str]) -> None:
        self.data = data
        self.status_code = 200
        self.media_type = "text/event-stream"
        self.background = None
        self.init_headers(headers)  # no `body` attribute: init_headers adds no content-length

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.data, "more_body": False})


class CutJsonBody(Response):
    """A JSON answer cut in half: what a `truncate` or `disconnect` fault does to a non-streaming request.

    There are no frames to count, so the fault's frame count does not apply: the first half of the body's
    bytes is sent (at least one). `truncate` ends the response cleanly, its Content-Length that of the
    half, so the client gets a complete HTTP answer whose JSON does not parse. `disconnect` announces the
    whole length, sends the half and drops the connection, as a server dying mid-answer would.
    """

    def __init__(self, body: bytes, headers: Mapping[str, str], *, drop: bool) -> None:
        self.kept = body[: max(1, len(body) // 2)]
        self.drop = drop
        self.status_code = 200
        self.media_type = "application/json"
        self.background = None
        self.body = body if drop else self.kept  # the Content-Length announced
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from ..codec.sse import StreamAborted

        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.kept, "more_body": self.drop})
        if self.drop:
            raise StreamAborted(0)
