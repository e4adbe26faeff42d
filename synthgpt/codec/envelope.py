"""The one decoding step every API shares: a request's body bytes read once into JSON, its headers once.

`decode_envelope(raw, headers)` is what `pipeline.accept` runs before any codec sees the request:

- the body is parsed by orjson (a C parser, ~10-30x the stdlib's speed on request bodies), and every
  body orjson refuses is parsed again by the stdlib path (`common.parse_json_body`) so that each refusal
  keeps its wording: invalid UTF-8 (with the byte offset), NaN and ±Infinity, a number no double holds, a
  lone surrogate escape. orjson also reads an integer wider than 64 bits as a float, where the request's
  own checks must see the integer: a body holding a run of 19 digits takes the stdlib path too.
- the depth limit (`MAX_JSON_DEPTH`) is checked from a byte count first: a body with few brackets
  cannot nest deeply, so only the rare bracket-heavy body is walked.
- the headers are decoded by `headers.journal_headers` (names lower-cased, credentials dropped).

The codecs' `request.py` modules then read the fields with the shared readers (`codec.fields`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .common import MAX_JSON_DEPTH, json_depth, parse_json_body
from .headers import KeptHeaders, journal_headers

__all__ = ["Envelope", "decode_envelope", "parse_body"]

_WIDE_INTEGER = re.compile(rb"[0-9]{19}")
"""19 digits in a row: maybe an integer orjson would read as a float (2**63 has 19 digits)."""


def parse_body(raw: bytes) -> Any:
    """A request body as JSON, or RequestError (no param) worded as `common.parse_json_body` words it."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json_body(raw)  # refused (or a BOM): the stdlib path says why, or takes it
    if _maybe_wide_integer(raw, body):
        return parse_json_body(raw)
    # brackets bound the depth from above: only a body with many of them is walked
    if (
        isinstance(body, dict | list)
        and raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH
        and json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH
    ):
        return parse_json_body(raw)  # raises the depth refusal
    return body


_SCAN_BYTES = 64 * 1024
_WIDEST_FLOAT = 2.0**63


def _maybe_wide_integer(raw: bytes, body: Any) -> bool:
    """Whether `body` may hold an integer orjson read as a float. A small body is scanned for a run of
    digits (a C scan, ~1 µs); a large one is walked for a float of 2**63 or more instead, in bytecode:
    the scan held the GIL 0.35 s on a 16 MB body, stalling every other connection (issue 11)."""
    if len(raw) < _SCAN_BYTES:
        return _WIDE_INTEGER.search(raw) is not None
    todo = [body]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif type(item) is float and not -_WIDEST_FLOAT < item < _WIDEST_FLOAT:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Envelope:
    """A request's JSON body and the headers a ModelRequest keeps of it."""

    body: Any
    headers: KeptHeaders
    """What a codec's `decode` gets as its headers: `journal_headers` of them costs nothing."""


def decode_envelope(raw: bytes, headers: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> Envelope:
    """The body parsed (RequestError when it is not JSON) and the headers decoded, credentials dropped."""
    return Envelope(parse_body(raw), KeptHeaders(journal_headers(headers)))
