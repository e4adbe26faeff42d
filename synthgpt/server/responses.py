"""Starlette responses for `pipeline.Answered`: a JSON body, one-write SSE, or a paced stream.

The bytes, headers and request ids are the pipeline's (`synthgpt.pipeline`); this module only puts them
in a Response object. The helpers re-exported here (`request_id`, `json_bytes`, …) live in the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..codec.base import HasResponseHeaders, WireCodec
from ..errors import RequestError
from ..model import ErrorSpec, Fault
from ..pipeline import (
    Answered,
    body_cut,
    codec_headers,
    cut_half,
    error_answer,
    json_bytes,
    processing_ms,
    request_id,
)
from .pacing import PacedStream

__all__ = [
    "CutJsonBody",
    "EventStreamBody",
    "HasResponseHeaders",
    "JsonBody",
    "codec_headers",
    "error_response",
    "json_bytes",
    "json_response",
    "processing_ms",
    "raw_headers",
    "request_id",
    "to_response",
]


def to_response(answered: Answered) -> Response:
    """The Response that sends `answered`: unpaced streams in one write, paced ones on their schedule."""
    wire = answered.wire
    if wire is None:
        cut = body_cut(answered)
        if cut is not None:  # no frames to count: the body is cut in half (`CutJsonBody`)
            return CutJsonBody(answered.body, answered.headers, cut)
        return JsonBody(answered.body, answered.status, answered.headers)
    if len(wire.writes) == 1 and wire.writes[0].delay_ms == 0 and not wire.aborts:
        # unpaced: the whole stream at once
        return EventStreamBody(wire.writes[0].data, answered.headers, frames=len(wire.frames))
    return PacedStream(wire, answered.headers)


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
    """The provider-shaped error answer (`pipeline.error_answer`) as a Response."""
    return to_response(error_answer(codec, error, status, rid, first_delay_ms=first_delay_ms))


def raw_headers(
    headers: Mapping[str, str], status: int, length: int | None, media_type: str
) -> list[tuple[bytes, bytes]]:
    """The raw headers Starlette's `Response.init_headers` builds for `headers`, a body of `length` bytes
    (None: no `body`, sent chunked) and `media_type`: the same pairs in the same order.

    Built per answer, so without its generic steps: the names an answer carries are the codecs' dozen,
    lower-cased and encoded once each (`_NAMES`), and the content type is one of a few constant pairs."""
    names = _NAMES
    raw: list[tuple[bytes, bytes]] = []
    given = False  # a content-length or content-type among `headers`: Starlette adds neither of its own
    for k, v in headers.items():
        name = names.get(k)
        if name is None:
            name = k.lower().encode("latin-1")
            if len(names) >= 1024:  # names come from the codecs and the rules: bounded anyway
                names.clear()
            names[k] = name
        if name in _CONTENT:
            given = True
        raw.append((name, v.encode("latin-1")))
    if given:
        keys = [k for k, _ in raw]
        with_length = b"content-length" not in keys
        with_type = b"content-type" not in keys
    else:
        with_length = with_type = True
    if length is not None and with_length and not (status < 200 or status in (204, 304)):
        raw.append((b"content-length", b"%d" % length))
    if with_type:
        raw.append(_content_type(media_type))
    return raw


_NAMES: dict[str, bytes] = {}
"""Header name as a codec or a rule gives it -> its lower-cased latin-1 bytes."""
_CONTENT = frozenset((b"content-length", b"content-type"))


@lru_cache(maxsize=16)
def _content_type(media_type: str) -> tuple[bytes, bytes]:
    """Starlette's content-type pair for `media_type` (a `text/` type gets its charset)."""
    if media_type.startswith("text/") and "charset=" not in media_type.lower():
        media_type += "; charset=" + Response.charset
    return b"content-type", media_type.encode("latin-1")


class JsonBody(Response):
    """`Response(body, status, headers, media_type="application/json")`, the same raw headers in the same
    order, without Starlette's generic constructor (content rendering, a key scan per header)."""

    media_type = "application/json"

    def __init__(self, body: bytes, status: int, headers: Mapping[str, str]) -> None:
        self.body = body
        self.status_code = status
        self.background = None
        self.raw_headers = raw_headers(headers, status, len(body), "application/json")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body})


class EventStreamBody(Response):
    """An SSE stream whose bytes are all due at once (no pacing, no delay, no cut), sent as one body.

    What StreamingResponse would put on the wire for it, without its per-answer task group (listening
    for a disconnect that cannot matter any more) and its three sends. There is no Content-Length, so
    the server still sends it chunked, like every other stream.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        data: bytes,
        headers: Mapping[str, str],
        on_end: Callable[[int, bool], None] | None = None,
        frames: int = 0,
    ) -> None:
        self.data = data
        self.on_end = on_end
        """Told `(frames, cancelled)` once the body was handed over (or its sending failed)."""
        self.frames = frames
        self.status_code = 200
        self.background = None
        # no `body` attribute: no content-length (as `init_headers` would have it)
        self.raw_headers = raw_headers(headers, 200, None, "text/event-stream")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cancelled = True
        start = {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        try:
            await send(start)
            await send({"type": "http.response.body", "body": self.data, "more_body": False})
            cancelled = False
        finally:
            if self.on_end is not None:
                self.on_end(0 if cancelled else self.frames, cancelled)


class CutJsonBody(Response):
    """A JSON answer cut in half: what a `truncate` or `disconnect` fault does to a non-streaming request.

    There are no frames to count, so the fault's frame count does not apply: the first half of the body's
    bytes is sent (at least one). `truncate` ends the response cleanly, its Content-Length that of the
    half, so the client gets a complete HTTP answer whose JSON does not parse. `disconnect` announces the
    whole length, sends the half and drops the connection, as a server dying mid-answer would.
    """

    def __init__(self, body: bytes, headers: Mapping[str, str], fault: Fault) -> None:
        self.kept = cut_half(body)
        self.fault = fault
        self.drop = drop = fault.kind == "disconnect"
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
