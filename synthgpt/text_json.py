"""JSON read from a request's text: a tool call's arguments, a tool result, a trigger's arguments, a schema
pasted into a prompt.

Any client writes that text, and the standard parser recurses once per level of nesting: text nested a
few thousand levels deep raised RecursionError where every caller expected ValueError for text that is
not JSON, and the request was answered with a 500. Here it is a `json.JSONDecodeError` like any other.
(Request bodies are parsed elsewhere, with a depth limit of their own: `codec.common.parse_json_body`.)
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["decode_in_text", "loads_text"]

_DECODER = json.JSONDecoder()


def loads_text(text: str) -> Any:
    """`json.loads(text)`; JSONDecodeError (a ValueError) for text nested too deeply to read."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _too_deep(text) from None


def decode_in_text(text: str, at: int) -> tuple[Any, int]:
    """`json.JSONDecoder().raw_decode(text, at)`: the JSON value starting at `at` and where it ends;
    JSONDecodeError for text nested too deeply to read, its `pos` the text's end (how far the parser may
    have read before giving up)."""
    try:
        return _DECODER.raw_decode(text, at)
    except RecursionError:
        raise _too_deep(text) from None


def _too_deep(text: str) -> json.JSONDecodeError:
    return json.JSONDecodeError("the JSON is nested too deeply to read", text, len(text))
