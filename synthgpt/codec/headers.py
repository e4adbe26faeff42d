"""The one place request headers are decoded: what every API's decoder keeps of them.

A request's headers live on in its `ModelRequest`, hence in the journal (`GET /_synthgpt/calls`, its
JSONL export, the SQLite file) and in rule histories. Credentials must never get that far: a journal is
read by whoever can reach the admin routes or the file, and SDKs send a real API key whenever a test
forgot to swap it for a dummy one. So every codec's `decode` passes the headers through
`journal_headers`, which lower-cases the names and drops anything that authenticates a client.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["CREDENTIAL_HEADERS", "KeptHeaders", "is_credential", "journal_headers", "kept_raw_headers"]

CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "api-key",  # Azure OpenAI
        "x-api-key",  # Anthropic
        "x-goog-api-key",
        "ocp-apim-subscription-key",  # Azure API Management in front of Azure OpenAI
        "x-amz-security-token",
    }
)
"""Header names (lower case) that carry credentials in the APIs synthgpt serves and their gateways."""

_CREDENTIAL_WORDS = ("api-key", "apikey", "token", "secret", "password", "session", "credential")
"""A custom gateway's header is dropped too when its name says what it holds (`x-portkey-api-key`,
`x-auth-token`, …): leaving one out of the journal costs nothing, journaling one leaks it."""


def is_credential(name: str) -> bool:
    """Whether a header (any case) carries a credential and is never recorded."""
    lname = name.lower()
    return lname in CREDENTIAL_HEADERS or any(word in lname for word in _CREDENTIAL_WORDS)


_KEPT: dict[str, str | None] = {}
"""Header name as sent -> the lower-cased name to keep, or None for a credential. Every request sends the
same dozen names, so each is judged once (a bounded cache: a client inventing names cannot grow it)."""
_KEPT_MAX = 4096


class KeptHeaders(Mapping[str, str]):
    """Headers already decoded by `journal_headers` (what `codec.envelope` hands every codec): decoding
    them again returns the same pairs at no cost. A mapping by lower-cased name; the last value wins."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.pairs = pairs

    def __getitem__(self, name: str) -> str:
        name = name.lower()
        for k, v in reversed(self.pairs):
            if k == name:
                return v
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self.pairs))

    def __len__(self) -> int:
        return len(dict(self.pairs))


def journal_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Request headers as a `ModelRequest` keeps them: names lower-cased, credentials left out."""
    if isinstance(headers, KeptHeaders):
        return headers.pairs
    items = headers.items() if isinstance(headers, Mapping) else headers
    kept = _KEPT
    out = []
    for k, v in items:
        try:
            name = kept[k]
        except KeyError:
            name = _learn(kept, k, k)
        if name is not None:
            out.append((name, v))
    return tuple(out)


def _learn(kept: dict[Any, str | None], key: Any, text: str) -> str | None:
    """How a header name not seen yet is kept (None: a credential, left out), remembered under `key`."""
    name = None if is_credential(text) else text.lower()
    if len(kept) >= _KEPT_MAX:  # names come from clients: keep the table bounded
        kept.clear()
    kept[key] = name
    return name


_RAW_KEPT: dict[bytes, str | None] = {}
"""`_KEPT` for names as ASGI sends them (bytes)."""


def kept_raw_headers(raw: Iterable[tuple[bytes, bytes]]) -> KeptHeaders:
    """`KeptHeaders(journal_headers(Headers(raw=raw)))` in one pass over an ASGI scope's raw header list
    (names and values latin-1, as Starlette's `Headers` decodes them): what the API routes hand
    `pipeline.accept`, without a `Headers` object and a list of decoded pairs made on the way."""
    kept = _RAW_KEPT
    out = []
    for k, v in raw:
        try:
            name = kept[k]
        except KeyError:
            name = _learn(kept, k, k.decode("latin-1"))
        if name is not None:
            out.append((name, v.decode("latin-1")))
    return KeptHeaders(tuple(out))
