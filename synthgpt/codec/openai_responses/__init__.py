"""OpenAI Responses API: `request` decodes `input`/`instructions`, `events` builds the typed event
stream, `hosted` the built-in tools' items, `store` keeps responses for `previous_response_id`, and
`encode` ties them into the codec."""

from __future__ import annotations

from .encode import ResponsesCodec
from .store import ResponseStore

__all__ = ["ResponseStore", "ResponsesCodec"]
