"""OpenAI Chat Completions (and Azure OpenAI chat): `request` decodes a body into the neutral
request, `encode` renders the neutral output as a completion or a chunk stream, `reasoning` adds the
`reasoning_content` some OpenAI-compatible servers send."""

from __future__ import annotations

from .encode import ChatCodec

__all__ = ["ChatCodec"]
