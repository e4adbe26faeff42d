"""Wire formats: one subpackage per API (`openai_chat/`, `openai_responses/`, `anthropic/`, `gemini/`,
`ollama/`, `cohere/`, `bedrock/`; OpenAI embeddings in `embeddings.py`), each a `request` decoder and an
`encode` codec, plus the stream layer they share (see `base.py`, `sse.py` and, for
streams that are not SSE, `framing.py`)."""

from __future__ import annotations

from .anthropic.encode import MessagesCodec
from .base import Frame, WireCodec, render_frame
from .bedrock.encode import BedrockCodec
from .cohere.encode import CohereCodec
from .embeddings import EmbeddingsCodec
from .framing import Framing
from .gemini.embed import GeminiEmbedCodec
from .gemini.encode import GeminiCodec
from .ollama.encode import OllamaCodec, OllamaEmbedCodec
from .openai_chat.encode import ChatCodec
from .openai_responses.encode import ResponseNotFound, ResponsesCodec
from .openai_responses.store import ResponseStore
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
