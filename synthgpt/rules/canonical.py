"""The canonical form of a request, its digest, and the matcher `canonical(digest)` built on them.

`synthgpt record` writes one rule per recorded request, matched by `canonical: <digest>`: the request as
synthgpt's own codec decoded it (the neutral `ModelRequest` every rule sees), reduced to what decides the
answer. Two requests with the same canonical form get the same recorded answer, whatever route, client,
key or bookkeeping fields they came with. What counts and what is ignored is documented in docs/record.md;
the one list of ignored provider fields is `IGNORED_EXTRA`.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from ..errors import RuleError
from ..model import ModelRequest
from ..seeding import canonical_json
from .matchers import Captures, Matcher

__all__ = ["DIGEST_LENGTH", "IGNORED_EXTRA", "Canonical", "canonical", "canonical_digest", "canonical_form"]

IGNORED_EXTRA = frozenset(
    {
        "user",  # who asks (OpenAI's end-user id): never the answer
        "metadata",  # tags for the caller's own bookkeeping (OpenAI, Anthropic)
        "store",  # whether the provider keeps the answer
        "safety_identifier",
        "prompt_cache_key",  # cache routing hints
        "service_tier",  # latency class, not content
        "background",
    }
)
"""Provider fields of `ModelRequest.extra` left out of the canonical form: they identify the caller or steer
the provider's bookkeeping, not what the model says. Every other `extra` field (temperature, top_p, seed,
stop sequences, logprobs, …) counts."""

DIGEST_LENGTH = 32
"""Hex digits of a digest (128 bits of SHA-256): no two requests of a recording share one by chance."""
_DIGEST = re.compile(rf"^[0-9a-f]{{{DIGEST_LENGTH}}}$")


def canonical_form(request: ModelRequest) -> dict[str, Any]:
    """What decides the answer to `request`, as plain JSON data (sorted when digested).

    Counted: the API, the model, the messages (roles, text, non-text part references, tool calls and
    results), the tools and tool choice, the response schema, the output limit, `n`, the stream flag,
    parallel tool calls, the reasoning settings, embedding inputs and dimensions, and the provider fields
    of `extra` other than `IGNORED_EXTRA`. Ignored: headers (API keys, request ids, client versions),
    `stream_options`, and the fields of `IGNORED_EXTRA`.
    """
    form: dict[str, Any] = request.model_dump(
        mode="json", by_alias=True, exclude={"headers", "stream_options"}
    )
    form["extra"] = {k: v for k, v in form["extra"].items() if k not in IGNORED_EXTRA}
    return form


_LAST = threading.local()  # the last request digested in this thread, with its digest


def canonical_digest(request: ModelRequest) -> str:
    """The SHA-256 of the canonical form (its canonical JSON), as `DIGEST_LENGTH` hex digits.

    A rule set of recordings asks every `canonical` matcher about one request in turn: the digest of the
    request last asked about is kept (per thread), so it is computed once per request, not once per rule.
    """
    last = getattr(_LAST, "pair", None)
    if last is not None and last[0] is request:
        digest: str = last[1]
        return digest
    text = canonical_json(canonical_form(request))
    digest = hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]
    _LAST.pair = (request, digest)  # holds the request until the next one: requests are frozen
    return digest


class Canonical(Matcher):
    """The request's canonical form has this digest (`synthgpt record` writes these)."""

    __slots__ = ("digest",)

    def __init__(self, digest: str) -> None:
        self.digest = digest

    def match(self, request: ModelRequest) -> Captures | None:
        return {} if canonical_digest(request) == self.digest else None

    def __repr__(self) -> str:
        return f"canonical({self.digest!r})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Canonical, self.digest)


def canonical(digest: str) -> Matcher:
    """The request's canonical form (docs/record.md) has this digest: 32 lower-case hex digits, as
    `synthgpt record` writes them and `synthgpt record --digest REQUEST.json` prints them."""
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise RuleError(
            f"canonical: a digest is {DIGEST_LENGTH} lower-case hex digits (as `synthgpt record` writes it), "
            f"got {digest!r}"
        )
    return Canonical(digest)
