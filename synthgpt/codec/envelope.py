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
`decode_request` is the whole step, envelope and codec; a request whose decoding reads nothing but its
own bytes, headers and path parameters keeps them as its `Wire`, which is what the journal keeps of it
instead of the decoded request (`journal.memory`), and decodes it again only when the journal is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .common import parse_json_body
from .headers import KeptHeaders, journal_headers

if TYPE_CHECKING:
    from ..model import ModelRequest
    from .base import WireCodec

__all__ = ["Envelope", "Wire", "decode_envelope", "decode_request", "parse_body"]

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


def decode_request(
    codec: WireCodec,
    raw: bytes,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    params: Mapping[str, str],
    stream: bool = False,
) -> tuple[ModelRequest, Any, KeptHeaders]:
    """The request `codec` decodes from a body and its headers (`stream`: the route asks for a stream
    whatever the body says), with the parsed body and the headers it kept; raises RequestError."""
    envelope = decode_envelope(raw, headers)
    body = envelope.body
    if stream and isinstance(body, dict):
        body = {**body, "stream": True}
    return codec.decode(body, envelope.headers, params), body, envelope.headers


class Wire:
    """What a request was decoded from, for a codec whose decoding of it reads nothing else (no Responses
    store): decoding it again gives an equal request. Holding it costs nothing (its bytes were received
    anyway), where packing the decoded request took ~4 µs for a short chat call, ~12 µs with a 1 KB
    response schema and ~100 µs for an agent's 60 messages."""

    __slots__ = ("_nbytes", "codec", "headers", "params", "raw", "stream")

    def __init__(
        self, codec: WireCodec, raw: bytes, headers: KeptHeaders, params: Mapping[str, str], stream: bool
    ) -> None:
        self.codec = codec
        self.raw = raw
        # one object for each distinct set of headers held: a client sends the same few call after call,
        # and a thousand journaled copies of them took ~0.5 MB
        self.headers = _headers_of(headers.pairs)
        self.params = params if params else _NO_PARAMS
        self.stream = stream
        self._nbytes = -1

    @property
    def nbytes(self) -> int:
        """About what holding it costs (the journal's byte bound, asked when a record is packed, by the
        journal and by the rule's history): its body's bytes and its headers', counted even when shared (a
        client may send large ones). Worked out when first asked."""
        size = self._nbytes
        if size < 0:
            size = len(self.raw) + _WIRE_OVERHEAD
            for name, value in self.headers.pairs:
                size += len(name) + len(value) + _HEADER_OVERHEAD
            self._nbytes = size
        return size

    def decode(self) -> ModelRequest:
        return decode_request(self.codec, self.raw, self.headers, self.params, self.stream)[0]


_NO_PARAMS: Mapping[str, str] = {}
_WIRE_OVERHEAD = 96  # the object and its bytes object's header
_HEADER_OVERHEAD = 160  # a header's pair and its two strings' objects


@lru_cache(maxsize=256)  # headers come from clients: the distinct sets kept are bounded
def _headers_of(pairs: tuple[tuple[str, str], ...]) -> KeptHeaders:
    return KeptHeaders(pairs)
