"""The one decoding step every API shares: a request's body bytes read once into JSON, its headers once.

`decode_envelope(raw, headers)` is what `pipeline.accept` runs before any codec sees the request:

- the body is parsed by `common.parse_json_body`: orjson (~10-30x the stdlib's speed), with the stdlib
  parser's wording for every refusal (invalid UTF-8 with the byte offset, NaN and ±Infinity, a number no
  double holds, a lone surrogate escape, the depth limit). Every route that reads a JSON body (the token
  counters, the playground) goes through that one function. No check of a large body is one long C call:
  a 16 MB body is parsed and checked in ~0.15 s, in pieces the event loop's thread can take the GIL
  between (`server.offload.LARGE_BODY_BYTES` moves it off the loop).
- the headers are decoded by `headers.journal_headers` (names lower-cased, credentials dropped).

The codecs' `request.py` modules then read the fields with the shared readers (`codec.fields`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .common import parse_json_body
from .headers import KeptHeaders, journal_headers

__all__ = ["Envelope", "decode_envelope", "parse_body"]

parse_body = parse_json_body
"""The body's JSON (see `common.parse_json_body`: every route that reads a JSON body uses it)."""


@dataclass(slots=True)
class Envelope:
    """A request's JSON body and the headers a ModelRequest keeps of it. Read only, by convention (not
    frozen: a frozen dataclass's `__init__` costs three times a plain one's, on every request)."""

    body: Any
    headers: KeptHeaders
    """What a codec's `decode` gets as its headers: `journal_headers` of them costs nothing."""


def decode_envelope(raw: bytes, headers: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> Envelope:
    """The body parsed (RequestError when it is not JSON) and the headers decoded, credentials dropped."""
    kept = headers if isinstance(headers, KeptHeaders) else KeptHeaders(journal_headers(headers))
    return Envelope(parse_body(raw), kept)
