"""What every wire module provides, and the frame type the SSE layer sends.

A wire codec (`openai_chat`, `openai_responses`, `anthropic`, `gemini`, … and `embeddings`) turns HTTP JSON
into a ModelRequest and a ModelOutput into either one JSON body or an ordered list of frames. The non-stream
body is the fold of the same frames (tests check it); faults and pacing are applied to the frames by the
shared SSE layer (`sse.py`), which asks the wire module only for its own error frames.

`synthgpt.pipeline.answer` is the one caller: it decodes, resolves and encodes through these methods.
Besides the `WireCodec` methods, a codec may define optional hooks, looked up with `getattr` (a codec
without them keeps working): `response_headers` (`HasResponseHeaders`: its own per-answer headers, else
the OpenAI set), `replayable` (`HasReplayCheck`: False for a body whose answer reads state the codec
keeps, so the server never resends a memoized answer for it) and `frame_parts` (`runs.HasFrameParts`: its
stream as frames and runs of frames, which an unpaced stream is written from without a frame object per
event).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import RequestError
from ..model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest

__all__ = ["Frame", "HasReplayCheck", "HasResponseHeaders", "WireCodec", "render_frame"]


@dataclass(slots=True, unsafe_hash=True)
class Frame:
    """One SSE event. `data` is the exact payload text (JSON, or `[DONE]`); `event` the optional name.

    Treated as immutable (compared and hashed by value) but not `frozen`: a frozen dataclass sets each
    field through `object.__setattr__`, 1.3-2.6 us per frame, and a drawn stream builds fifty of them."""

    data: str
    event: str | None = None
    terminal: bool = False
    """The frame that ends a healthy stream (`[DONE]`, `response.completed`, `message_stop`)."""


def render_frame(frame: Frame) -> bytes:
    # Payloads are single-line JSON, so one `data:` line each suffices.
    if frame.event is None:
        return b"data: " + frame.data.encode() + b"\n\n"
    return b"event: " + frame.event.encode() + b"\ndata: " + frame.data.encode() + b"\n\n"


class WireCodec(Protocol):
    """One API's wire format."""

    api: ApiKind

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        """The neutral request; raises RequestError (with `param`) for anything malformed."""
        ...

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        """The non-stream JSON body."""
        ...

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        """The whole healthy stream, terminal frame included."""
        ...

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        """What this API sends for a mid-stream error after `sent` frames."""
        ...

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        """An HTTP error body in this provider's shape."""
        ...

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> Callable[[], None] | None:
        """What encoding this answer leaves behind besides its bytes (the Responses store entry), to do
        again each time the server resends the answer from its memo; None for a codec that keeps nothing."""
        ...


@runtime_checkable
class HasResponseHeaders(Protocol):
    """Optional: a codec that names its own per-answer headers (request id header, version, …).

    Codecs without this method get the OpenAI set: `x-request-id`, `openai-processing-ms`,
    `openai-version`.
    """

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]: ...


class HasReplayCheck(Protocol):
    """Optional: a codec whose decoding may read state of its own (the Responses store) says which
    bodies do; the answers to those are never resent from the server's memo. Without it: every body is
    answered from the body alone."""

    def replayable(self, body: Any) -> bool: ...
