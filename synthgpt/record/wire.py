"""A recorded stream's bytes back into its events: SSE, NDJSON, a JSON array, the AWS event stream (read
by `codec.bedrock.eventstream.decode_events`, beside its writer).

Readers get whole streams (the proxy passes the bytes on as they come and reads them once the stream
ended), so these parse complete data and skip what cannot be read: a truncated stream records the events
that arrived whole.
"""

from __future__ import annotations

import json
from typing import Any

from ..codec.bedrock.eventstream import decode_events as eventstream_events

__all__ = ["eventstream_events", "json_array_events", "ndjson_events", "sse_events"]


def _json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def sse_events(data: bytes) -> list[Any]:
    """The JSON of each event's `data:` lines (comments, `[DONE]` and unreadable events skipped)."""
    events: list[Any] = []
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    for block in text.split("\n\n"):
        lines = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if not lines or lines == ["[DONE]"]:
            continue
        value = _json("\n".join(lines))
        if value is not None:
            events.append(value)
    return events


def ndjson_events(data: bytes) -> list[Any]:
    return [v for line in data.splitlines() if line.strip() and (v := _json(line)) is not None]


def json_array_events(data: bytes) -> list[Any]:
    """Gemini's stream without `?alt=sse`: one JSON array written element by element."""
    value = _json(data)
    return value if isinstance(value, list) else []
