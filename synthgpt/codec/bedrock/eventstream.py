"""The AWS event stream framing (`application/vnd.amazon.eventstream`), as Bedrock's `converse-stream`
sends it.

Each message is binary: a 12-byte prelude (total length and headers length as big-endian uint32, then the
CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before it. A header is a
one-byte name length, the name, a one-byte value type (7: string) and, for a string, a two-byte length and
the UTF-8 value. Clients check both CRCs and drop the connection on a mismatch.

An event message has `:event-type` (the member name, e.g. `contentBlockDelta`), `:content-type`
(`application/json`) and `:message-type: event`; an error raised mid-stream is `:message-type: exception`
with `:exception-type` instead. `Frame.event` names which: the frame of a name in `EXCEPTIONS` is an
exception, any other an event.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from ..base import Frame
from ..framing import Framing

__all__ = ["EVENTSTREAM", "EXCEPTIONS", "decode_events", "encode_message"]

EXCEPTIONS = frozenset({
    "internalServerException", "modelStreamErrorException", "validationException", "throttlingException",
    "serviceUnavailableException",
})  # fmt: skip
"""The exceptions a Bedrock `ConverseStream` may raise inside the stream (its service model's union)."""

_STRING = 7
_PRELUDE = struct.Struct(">II")
_MAX_HEADER_VALUE = 0xFFFF


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    if len(raw_name) > 0xFF or len(raw_value) > _MAX_HEADER_VALUE:
        raise ValueError(f"event stream header {name!r} is too long")
    sized = struct.pack(">H", len(raw_value)) + raw_value
    return bytes([len(raw_name)]) + raw_name + bytes([_STRING]) + sized


def encode_message(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One event stream message: prelude, prelude CRC, headers, payload, message CRC."""
    raw_headers = b"".join(_header(k, v) for k, v in headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = _PRELUDE.pack(total, len(raw_headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude))
    body = head + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def decode_events(data: bytes) -> list[tuple[str, Any]]:
    """(`:event-type`, JSON payload or None) of each event message in `data`, in order: what a recording
    reads back from a whole stream. Exception messages are skipped, reading stops at a cut tail or a
    non-string header, and CRCs are not checked (the bytes came from a server, not a wire to verify)."""
    events: list[tuple[str, Any]] = []
    at = 0
    while at + 16 <= len(data):
        total, headers_len = _PRELUDE.unpack_from(data, at)
        if total < 16 or at + total > len(data):
            break
        headers = _read_headers(data[at + 12 : at + 12 + headers_len])
        payload = data[at + 12 + headers_len : at + total - 4]
        if headers.get(":message-type") == "event":
            try:
                value = json.loads(payload)
            except ValueError:
                value = None
            events.append((headers.get(":event-type", ""), value))
        at += total
    return events


def _read_headers(raw: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    at = 0
    while at < len(raw):
        name_len = raw[at]
        name = raw[at + 1 : at + 1 + name_len].decode("utf-8", "replace")
        at += 1 + name_len
        kind = raw[at] if at < len(raw) else -1
        at += 1
        if kind != _STRING:  # only string headers appear in Converse streams; anything else ends the reading
            break
        (size,) = struct.unpack_from(">H", raw, at)
        out[name] = raw[at + 2 : at + 2 + size].decode("utf-8", "replace")
        at += 2 + size
    return out


def _render(frame: Frame, index: int) -> bytes:
    name = frame.event or "chunk"
    if name in EXCEPTIONS:
        headers = [(":exception-type", name), (":content-type", "application/json"),
                   (":message-type", "exception")]  # fmt: skip
    else:
        headers = [(":event-type", name), (":content-type", "application/json"), (":message-type", "event")]
    return encode_message(headers, frame.data.encode())


EVENTSTREAM = Framing("application/vnd.amazon.eventstream", _render)
