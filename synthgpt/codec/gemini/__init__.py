"""Google Gemini (`generativelanguage`): `request` decodes contents, schemas and tools as the
google-genai client sends them, `encode` renders `generateContent` answers and streams, `embed`
answers `embedContent`/`batchEmbedContents`."""

from __future__ import annotations

from .embed import GeminiEmbedCodec
from .encode import GeminiCodec

__all__ = ["GeminiCodec", "GeminiEmbedCodec"]
