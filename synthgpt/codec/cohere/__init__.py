"""Cohere v2 chat: `request` decodes `/v2/chat`, `encode` renders JSON answers and its SSE events."""

from __future__ import annotations

from .encode import CohereCodec

__all__ = ["CohereCodec"]
