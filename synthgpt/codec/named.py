"""The built-in codecs by name, so that a request's `Wire` can be written down in one process and decoded
again in another (the SQLite and Redis journals' rows keep a served request as its body, headers, path
parameters and the name of the codec that decoded it).

A codec's name stands for its class and its settings (`GeminiCodec(stream=True)` is `gemini-stream`). A
codec of any other class, a user's subclass included, has no name: its requests are written out whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from ..errors import RequestError
from .anthropic.encode import MessagesCodec
from .bedrock.encode import BedrockCodec
from .cohere.encode import CohereCodec
from .embeddings import EmbeddingsCodec
from .envelope import Wire
from .gemini.embed import GeminiEmbedCodec
from .gemini.encode import GeminiCodec
from .headers import KeptHeaders
from .ollama.encode import OllamaCodec, OllamaEmbedCodec
from .openai_chat.encode import ChatCodec
from .openai_responses.encode import ResponsesCodec

if TYPE_CHECKING:
    from ..model import ModelRequest
    from .base import WireCodec

__all__ = ["CODEC_NAMES", "codec_named", "request_from_row", "wire_name", "wire_row"]

_CODECS: tuple[tuple[str, type, Mapping[str, bool]], ...] = (
    ("chat", ChatCodec, {}),
    ("responses", ResponsesCodec, {}),
    ("messages", MessagesCodec, {}),
    ("embeddings", EmbeddingsCodec, {}),
    ("gemini", GeminiCodec, {"stream": False}),
    ("gemini-stream", GeminiCodec, {"stream": True}),
    ("gemini-embed", GeminiEmbedCodec, {"batch": False}),
    ("gemini-batch-embed", GeminiEmbedCodec, {"batch": True}),
    ("ollama", OllamaCodec, {"generate": False}),
    ("ollama-generate", OllamaCodec, {"generate": True}),
    ("ollama-embed", OllamaEmbedCodec, {"legacy": False}),
    ("ollama-embed-legacy", OllamaEmbedCodec, {"legacy": True}),
    ("cohere", CohereCodec, {}),
    ("bedrock", BedrockCodec, {"stream": False}),
    ("bedrock-stream", BedrockCodec, {"stream": True}),
)
"""(name, class, the settings it is made with, each an attribute of the same name)."""

CODEC_NAMES = tuple(name for name, _, _ in _CODECS)

_BY_CLASS: dict[type, tuple[tuple[str, Mapping[str, bool]], ...]] = {}
for _name, _cls, _settings in _CODECS:
    _BY_CLASS[_cls] = (*_BY_CLASS.get(_cls, ()), (_name, _settings))


def wire_name(codec: object) -> str | None:
    """`codec`'s name, or None for a codec of a class not listed (its type exactly: a subclass may decode
    otherwise)."""
    for name, settings in _BY_CLASS.get(type(codec), ()):
        if all(getattr(codec, attr, None) == value for attr, value in settings.items()):
            return name
    return None


@cache  # the names are a fixed, short list
def codec_named(name: str) -> WireCodec:
    """A codec that decodes as the one named did (a Responses codec with a store of one: a request that
    has a wire never reads the store). ValueError for a name not listed."""
    for known, cls, settings in _CODECS:
        if known == name:
            codec: WireCodec = cls(store_size=1) if cls is ResponsesCodec else cls(**settings)
            return codec
    raise ValueError(
        f"no codec is named {name!r} (known: {', '.join(CODEC_NAMES)}): the journal was written by another"
        " version of synthgpt"
    )


def wire_row(wire: Wire) -> dict[str, Any] | None:
    """`wire` as a journal row holds it (JSON values), or None when its codec has no name. The body is a
    string, not the JSON it holds: SQLite's `json_set` (`SQLiteJournal.finished`) rewrites a row's JSON
    and could change a number's text."""
    name = wire_name(wire.codec)
    if name is None:
        return None
    params = wire.params
    return {"codec": name, "body": wire.raw.decode(), "headers": wire.headers.pairs,
            "params": params if type(params) is dict else dict(params), "stream": wire.stream}  # fmt: skip


def request_from_row(row: Mapping[str, Any]) -> ModelRequest:
    """The request a `wire_row` was written from, decoded again; ValueError when it no longer decodes (a
    row written by another version of synthgpt)."""
    headers = KeptHeaders(tuple(map(tuple, row["headers"])))
    wire = Wire(codec_named(row["codec"]), row["body"].encode(), headers, row["params"], row["stream"])
    try:
        return wire.decode()
    except RequestError as exc:
        raise ValueError(f"a journaled request no longer decodes ({exc.message}): the journal was written by"
                         " another version of synthgpt") from None  # fmt: skip
