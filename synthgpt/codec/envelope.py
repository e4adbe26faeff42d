"""The one decoding step every API shares: a request's body bytes read once into JSON, its headers once.

`decode_envelope(raw, headers)` is what `pipeline.accept` runs before any codec sees the request:

- the body is parsed by orjson (a C parser, ~10-30x the stdlib's speed on request bodies), and every
  body orjson refuses is parsed again by the stdlib path (`common.parse_json_body`) so that each refusal
  keeps its wording: invalid UTF-8 (with the byte offset), NaN and ±Infinity, a number no double holds, a
  lone surrogate escape. orjson also reads an integer wider than 64 bits as a float, where the request's
  own checks must see the integer: a body holding a run of 19 digits takes the stdlib path too. No check
  of a large body is one long C call: a 16 MB body is parsed and checked in ~0.15 s, in pieces the event
  loop's thread can take the GIL between (`server.offload.LARGE_BODY_BYTES` moves it off the loop).
- the depth limit (`MAX_JSON_DEPTH`) is checked from a byte count first: a body with few brackets
  cannot nest deeply, so only the rare bracket-heavy body is walked.
- the headers are decoded by `headers.journal_headers` (names lower-cased, credentials dropped).

The codecs' `request.py` modules then read the fields with the shared readers (`codec.fields`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .common import MAX_JSON_DEPTH, json_depth, parse_json_body
from .headers import KeptHeaders, journal_headers

__all__ = ["Envelope", "decode_envelope", "parse_body"]

_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
"""Every digit byte to `0`, every other byte to a space."""
_WIDE_INTEGER = b"0" * 19
"""19 digits in a row: maybe an integer orjson would read as a float (2**63 has 19 digits). Looked for in
the translated body: two C passes that a regex takes 4-10x as long for (0.7 s on a 16 MB body, holding
the GIL all along)."""


def parse_body(raw: bytes) -> Any:
    """A request body as JSON, or RequestError (no param) worded as `common.parse_json_body` words it."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json_body(raw)  # refused (or a BOM): the stdlib path says why, or takes it
    if _WIDE_INTEGER in raw.translate(_DIGITS):
        return parse_json_body(raw)
    # brackets bound the depth from above: only a body with many of them is walked
    if (
        isinstance(body, dict | list)
        and raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH
        and json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH
    ):
        return parse_json_body(raw)  # raises the depth refusal
    return body


@dataclass(frozen=True, slots=True)
class Envelope:
    """A request's JSON body and the headers a ModelRequest keeps of it."""

    body: Any
    headers: KeptHeaders
    """What a codec's `decode` gets as its headers: `journal_headers` of them costs nothing."""


def decode_envelope(raw: bytes, headers: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> Envelope:
    """The body parsed (RequestError when it is not JSON) and the headers decoded, credentials dropped."""
    return Envelope(parse_body(raw), KeptHeaders(journal_headers(headers)))
