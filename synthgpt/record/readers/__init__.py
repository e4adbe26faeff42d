"""Per-API readers: an upstream answer (a JSON body or a whole stream's bytes) as a `Recorded`.

`read_answer(codec, request, data, content_type)` picks the reader by the codec that decoded the request,
so a recording reads every answer with the same notion of "which API" the server answers with.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...codec.anthropic.encode import MessagesCodec
from ...codec.bedrock.encode import BedrockCodec
from ...codec.cohere.encode import CohereCodec
from ...codec.embeddings import EmbeddingsCodec
from ...codec.gemini.embed import GeminiEmbedCodec
from ...codec.gemini.encode import GeminiCodec
from ...codec.ollama.encode import OllamaCodec, OllamaEmbedCodec
from ...codec.openai_chat.encode import ChatCodec
from ...codec.openai_responses.encode import ResponsesCodec
from ...model import ModelRequest
from ..recorded import Recorded
from ..wire import eventstream_events, json_array_events, ndjson_events, sse_events
from .anthropic import messages_body, messages_stream
from .bedrock import converse_body, converse_stream
from .cohere import cohere_body, cohere_stream
from .gemini import gemini_body, gemini_embed_body, gemini_stream
from .ollama import ollama_embed_body, ollama_lines
from .openai import chat_body, chat_stream, embeddings_body, responses_body, responses_stream

__all__ = ["read_answer"]

Reader = tuple[Callable[[Any], Recorded], Callable[[bytes, str], Recorded] | None]


def _sse(read: Callable[[list[Any]], Recorded]) -> Callable[[bytes, str], Recorded]:
    return lambda data, _: read(sse_events(data))


def _gemini_stream(data: bytes, content_type: str) -> Recorded:
    events = sse_events(data) if "event-stream" in content_type else json_array_events(data)
    return gemini_stream(events)


_READERS: dict[type, Reader] = {
    ChatCodec: (chat_body, _sse(chat_stream)),
    ResponsesCodec: (responses_body, _sse(responses_stream)),
    MessagesCodec: (messages_body, _sse(messages_stream)),
    EmbeddingsCodec: (embeddings_body, None),
    GeminiCodec: (gemini_body, _gemini_stream),
    GeminiEmbedCodec: (gemini_embed_body, None),
    OllamaCodec: (
        lambda body: ollama_lines([body], stream=False),
        lambda data, _: ollama_lines(ndjson_events(data), stream=True),
    ),
    OllamaEmbedCodec: (ollama_embed_body, None),
    CohereCodec: (cohere_body, _sse(cohere_stream)),
    BedrockCodec: (converse_body, lambda data, _: converse_stream(eventstream_events(data))),
}


def read_answer(codec: object, request: ModelRequest, data: bytes, content_type: str) -> Recorded | None:
    """The answer `data` (a 2xx body) as a recording; None when it cannot be read (not JSON, an API
    without a reader)."""
    reader = _READERS.get(type(codec))
    if reader is None:
        return None
    body_reader, stream_reader = reader
    if request.stream and stream_reader is not None:
        return stream_reader(data, content_type)
    try:
        body = json.loads(data)
    except ValueError:
        return None
    return body_reader(body)
