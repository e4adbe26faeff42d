"""Wire formats: one codec per API, plus the SSE layer they share (see `base.py` and `sse.py`)."""

from __future__ import annotations

from .anthropic_messages import MessagesCodec
from .base import Frame, WireCodec, render_frame
from .embeddings import EmbeddingsCodec
from .openai_chat import ChatCodec
from .openai_responses import ResponseNotFound, ResponsesCodec
from .response_store import ResponseStore
from .sse import KEEPALIVE, StreamAborted, WirePlan, Write, chunk_text, iter_bytes, plan_wire, stream_bytes

__all__ = [
    "KEEPALIVE",
    "ChatCodec",
    "EmbeddingsCodec",
    "Frame",
    "MessagesCodec",
    "ResponseNotFound",
    "ResponseStore",
    "ResponsesCodec",
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
