"""Wire formats: one codec per API, plus the stream layer they share (see `base.py`, `sse.py` and, for
streams that are not SSE, `framing.py`)."""

from __future__ import annotations

from .anthropic_messages import MessagesCodec
from .base import Frame, WireCodec, render_frame
from .bedrock import BedrockCodec
from .cohere import CohereCodec
from .embeddings import EmbeddingsCodec
from .framing import Framing
from .gemini import GeminiCodec
from .gemini_embed import GeminiEmbedCodec
from .ollama import OllamaCodec, OllamaEmbedCodec
from .openai_chat import ChatCodec
from .openai_responses import ResponseNotFound, ResponsesCodec
from .response_store import ResponseStore
from .sse import KEEPALIVE, StreamAborted, WirePlan, Write, chunk_text, iter_bytes, plan_wire, stream_bytes

__all__ = [
    "KEEPALIVE",
    "BedrockCodec",
    "ChatCodec",
    "CohereCodec",
    "EmbeddingsCodec",
    "Frame",
    "Framing",
    "GeminiCodec",
    "GeminiEmbedCodec",
    "MessagesCodec",
    "OllamaCodec",
    "OllamaEmbedCodec",
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
