"""Ollama: `request` decodes `/api/chat`, `/api/generate` and `/api/embed`, `encode` renders JSON
answers and NDJSON streams."""

from __future__ import annotations

from .encode import OllamaCodec, OllamaEmbedCodec

__all__ = ["OllamaCodec", "OllamaEmbedCodec"]
