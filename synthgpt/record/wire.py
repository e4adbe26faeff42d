"""A recorded stream's bytes back into its events: SSE, NDJSON, a JSON array, the AWS event stream.

Readers get whole streams (the proxy passes the bytes on as they come and reads them once the stream
ended), so these parse complete data and skip what cannot be read: a truncated stream records the events
that arrived whole.
"""

from __future__ import annotations

import json
import struct
from typing import Any

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


def eventstream_events(data: bytes) -> list[tuple[str, Any]]:
    """(`:event-type`, JSON payload) of each event message; exception messages and a cut tail skipped."""
    events: list[tuple[str, Any]] = []
    at = 0
    while at + 16 <= len(data):
        total, headers_len = struct.unpack_from(">II", data, at)
        if total < 16 or at + total > len(data):
            break
        headers = _headers(data[at + 12 : at + 12 + headers_len])
        payload = data[at + 12 + headers_len : at + total - 4]
        if headers.get(":message-type") == "event":
            events.append((headers.get(":event-type", ""), _json(payload)))
        at += total
    return events


def _headers(raw: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    at = 0
    while at < len(raw):
        name_len = raw[at]
        name = raw[at + 1 : at + 1 + name_len].decode("utf-8", "replace")
        at += 1 + name_len
        kind = raw[at] if at < len(raw) else -1
        at += 1
        if kind != 7:  # only string headers appear in Converse streams; anything else ends the reading
            break
        (size,) = struct.unpack_from(">H", raw, at)
        out[name] = raw[at + 2 : at + 2 + size].decode("utf-8", "replace")
        at += 2 + size
    return out
