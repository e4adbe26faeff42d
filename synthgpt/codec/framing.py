"""How a stream's frames become bytes when they are not Server-Sent Events.

Every streaming API plans its stream as the same `Frame`s, so faults, pacing and keep-alives work alike on
all of them (`sse.plan_wire`); only the last step differs. A codec whose stream is not SSE names its
`Framing` with a `framing(request)` method (an optional part of `WireCodec`, like `response_headers`):

- `NDJSON`: one JSON document per line (Ollama);
- `JSON_ARRAY`: the documents as the elements of one JSON array, written as they come (Gemini without
  `?alt=sse`): `[` before the first, `,` between them and `]` after the terminal frame, so a stream cut
  before its end is an unterminated array, as a client reading a cut connection sees it;
- the AWS event stream (Bedrock `converse-stream`) in `aws_eventstream.py`.

`render(frame, index)` gets the frame's position among the frames actually sent (after faults), which is
all the array form needs to place its brackets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import Frame, render_frame

__all__ = ["JSON_ARRAY", "NDJSON", "SSE", "Framing", "stream_media_type"]


@dataclass(frozen=True, slots=True)
class Framing:
    """One way of writing frames on the wire."""

    media_type: str
    render: Callable[[Frame, int], bytes]
    """The bytes of `frame`, sent as the `index`-th frame (0-based) of the stream."""
    keepalive: bytes | None = None
    """What keeps an idle connection busy, where the format has such a thing (SSE comments); None: the
    format has none, and a `keepalive_every` plan sends nothing extra."""


def _sse(frame: Frame, index: int) -> bytes:
    return render_frame(frame)


def _ndjson(frame: Frame, index: int) -> bytes:
    return frame.data.encode() + b"\n"


def _json_array(frame: Frame, index: int) -> bytes:
    head = b"[" if index == 0 else b",\r\n"
    return head + frame.data.encode() + (b"]" if frame.terminal else b"")


SSE = Framing("text/event-stream", _sse, b": ping\n\n")
NDJSON = Framing("application/x-ndjson", _ndjson)
JSON_ARRAY = Framing("application/json", _json_array)


def stream_media_type(codec: Any, request: Any) -> str:
    """The content type of `codec`'s stream answering `request`: its framing's, else SSE's."""
    own = getattr(codec, "framing", None)
    return SSE.media_type if own is None else own(request).media_type
