"""Wire formats: one module per API, plus the SSE layer they share (see `base.py` and `sse.py`)."""

from __future__ import annotations

from .base import Frame, WireCodec, render_frame
from .openai_chat import ChatCodec
from .sse import KEEPALIVE, StreamAborted, WirePlan, Write, chunk_text, iter_bytes, plan_wire, stream_bytes

__all__ = [
    "KEEPALIVE",
    "ChatCodec",
    "Frame",
    "StreamAborted",
    "WireCodec",
    "WirePlan",
    "Write",
    "chunk_text",
    "iter_bytes",
    "plan_wire",
    "render_frame",
    "stream_bytes",
]
