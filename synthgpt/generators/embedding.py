"""Deterministic, semantic-shaped embedding vectors: texts that share words point the same way.

The hashing trick: every feature of a text (each lower-cased word, and the character trigrams of each word
for fuzziness) owns a pseudo-random direction derived from (seed, model, feature) by SHAKE-256; a text's
vector is the weighted sum of its features' directions, normalised to unit length. Random directions in
hundreds of dimensions are nearly orthogonal, so the cosine of two texts grows with the features they
share: a retrieval pipeline under test ranks sensibly, and nothing needs numpy.

A feature's direction for `d` dimensions is the first `d` components of its full direction, so a vector
asked for with `dimensions=d` is the start of the full-size one, renormalised (as text-embedding-3
vectors shorten). A vector depends only on its text, model, dimensions and the engine's seed: never on
the batch it came in, the rule that drew it or the encoding the client asked for.
"""

from __future__ import annotations

import hashlib
import math
import operator
import re
import sys
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .._validation import whole
from ..errors import RequestError, RuleError
from ..limits import Limits
from .core import DrawContext, Generator
from .vector_sums import scaled, weighted_sum

__all__ = ["EmbeddingVectors", "Embeddings", "embed_text", "native_dimensions"]

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_DIMENSIONS = 16384
# Function words carry little meaning; weighting them down keeps unrelated sentences apart.
_STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "how", "i", "in",
     "is", "it", "its", "of", "on", "or", "our", "that", "the", "their", "they", "this", "to", "was", "we",
     "were", "what", "which", "who", "will", "with", "you", "your")
)  # fmt: skip
_WORD_WEIGHT = 1.0
_STOPWORD_WEIGHT = 0.2
_TRIGRAMS_WEIGHT = 0.6
"""Shared by all of one word's trigrams: spelling variants stay close without swamping whole words."""


@dataclass(frozen=True, slots=True)
class EmbeddingVectors:
    """What the Embeddings generator draws: one vector per input text, in input order."""

    vectors: tuple[tuple[float, ...], ...]


_NATIVE_DIMENSIONS = (
    ("gemini-embedding", 3072),
    ("text-embedding-004", 768),
    ("text-embedding-005", 768),
    ("embedding-001", 768),
    ("nomic-embed-text", 768),
    ("mxbai-embed-large", 1024),
    ("all-minilm", 384),
    ("embed-v4", 1536),
    ("embed-english-v3", 1024),
    ("embed-multilingual-v3", 1024),
    ("titan-embed-text-v2", 1024),
)
"""Model-name fragments of other providers' embedding models and their native sizes (first match wins)."""


def native_dimensions(model: str) -> int:
    """The vector size a model answers with when the request does not choose one."""
    for fragment, dims in _NATIVE_DIMENSIONS:
        if fragment in model:
            return dims
    return 3072 if "large" in model else 1536


@lru_cache(maxsize=2048)
def _direction(seed: int, model: str, feature: str, dims: int) -> array[int]:
    # Little-endian int16 components, uniform in [-32768, 32767]; any prefix is the shorter direction.
    # Kept as a compact array so the cache stays a few MiB.
    digest = hashlib.shake_256(f"{seed}\x00{model}\x00{feature}".encode()).digest(2 * dims)
    values = array("h", digest)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _features(text: str) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        out.append(("w:" + word, _STOPWORD_WEIGHT if word in _STOPWORDS else _WORD_WEIGHT))
        padded = f"<{word}>"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        share = _TRIGRAMS_WEIGHT / len(grams)
        if word in _STOPWORDS:
            share *= _STOPWORD_WEIGHT
        out.extend(("t:" + g, share) for g in grams)
    if not out:  # punctuation only: still a stable vector of its own
        out.append(("raw:" + text, 1.0))
    return out


def _to_float32(values: list[float]) -> tuple[float, ...]:
    """Each value rounded to float32, the precision the API serves (the float and base64 encodings carry
    one value): an `array("f")` casts each double to a float in C, as `struct.pack("<f")` does one at a
    time (to nearest, ties to even), ~30x faster for a vector."""
    return tuple(array("f", values))


# XOR-ing an int16's sign bit turns two's complement into offset binary: v -> v + 32768, never negative
_FLIP_SIGN = bytes(b ^ 0x80 for b in range(256))


def _lanes(direction: array[int], dims: int) -> int:
    """A direction as one big int of 64-bit lanes holding `v + 32768`, so adding directions is one add:
    each little-endian int16's two bytes are copied to the low end of an 8-byte lane (the high one with
    its sign bit flipped), by two slice assignments in C."""
    raw = direction.tobytes()
    if sys.byteorder == "big":  # the direction's values are the digest read little-endian
        swapped = array("h", raw)
        swapped.byteswap()
        raw = swapped.tobytes()
    wide = bytearray(8 * dims)
    wide[0::8] = raw[0::2]
    wide[1::8] = raw[1::2].translate(_FLIP_SIGN)
    return int.from_bytes(wide, "little")


def embed_text(text: str, *, model: str, dimensions: int | None = None, seed: int = 0) -> tuple[float, ...]:
    """The unit-norm vector of `text` (float32 values), exactly as the embeddings endpoint returns it."""
    dims = dimensions or native_dimensions(model)
    if not 1 <= dims <= _MAX_DIMENSIONS:
        raise RuleError(f"embedding dimensions must be between 1 and {_MAX_DIMENSIONS}, got {dims}")
    # Directions of equal weight are summed exactly, as integers in 64-bit lanes of one big int (C speed,
    # and a repeated feature is added once, times its count); only one float pass per weight remains.
    sums: dict[float, list[int]] = {}
    for (feature, weight), count in Counter(_features(text)).items():
        group = sums.setdefault(weight, [0, 0])
        group[0] += _lanes(_direction(seed, model, feature, dims), dims) * count
        group[1] += count
    groups: list[tuple[float, list[int], int]] = []
    for weight in sorted(sums):
        total, n = sums[weight]
        lanes = array("Q")
        lanes.frombytes(total.to_bytes(8 * dims, "little"))
        if sys.byteorder == "big":
            lanes.byteswap()
        groups.append((weight, lanes.tolist(), n * 32768))
    acc = weighted_sum(groups, dims)  # the weights in ascending order, each added to every component
    norm = math.sqrt(math.fsum(map(operator.mul, acc, acc)))  # fsum is exact: the same sum, in C
    if norm == 0.0:  # features that cancel exactly: vanishingly rare, but never divide by zero
        acc, norm = [1.0] + [0.0] * (dims - 1), 1.0
    return _to_float32(scaled(acc, norm))


_FLOAT_BYTES = 23  # a float as JSON writes it ("-0.012345678901234567, "), measured
_BASE64_BYTES = 16 / 3  # four bytes of float32, in base64


def _check_answer_size(n: int, dims: int, fmt: str, limits: Limits) -> None:
    """Refuse, before computing a vector, a batch whose answer would be over the answer limit: 2048 inputs
    of 3072 dimensions are 145 MB of JSON and a minute of CPU."""
    size = round(n * dims * (_BASE64_BYTES if fmt == "base64" else _FLOAT_BYTES))
    if size > limits.max_answer_bytes:
        raise RequestError(
            f"This request asks for {n} embeddings of {dims} dimensions as {fmt}: about {size} bytes, over "
            f"this server's answer limit of {limits.max_answer_bytes} bytes (max_answer_bytes). Send fewer "
            "inputs per request, ask for fewer dimensions, or use encoding_format 'base64'.",
            "input",
            code="answer_too_large",
        )


class Embeddings(Generator[EmbeddingVectors]):
    """One vector per input of an embeddings request (or for the last user message of any other request).

    `dimensions` fixes the size; by default the request's `dimensions`, else the model's native size.
    """

    __slots__ = ("dimensions",)

    def __init__(self, dimensions: int | None = None) -> None:
        if dimensions is not None:
            whole("embeddings: dimensions", dimensions)
        if dimensions is not None and not 1 <= dimensions <= _MAX_DIMENSIONS:
            raise RuleError(
                f"embeddings: dimensions must be between 1 and {_MAX_DIMENSIONS}, got {dimensions}"
            )
        self.dimensions = dimensions

    def draw(self, ctx: DrawContext) -> EmbeddingVectors:
        req = ctx.request
        dims = self.dimensions or req.dimensions or native_dimensions(req.model)
        texts = req.inputs or (req.last_user,)
        _check_answer_size(len(texts), dims, str(req.extra.get("encoding_format", "float")), ctx.limits)
        return EmbeddingVectors(
            tuple(embed_text(t, model=req.model, dimensions=dims, seed=ctx.base_seed) for t in texts)
        )

    def __repr__(self) -> str:
        return "embeddings()" if self.dimensions is None else f"embeddings(dimensions={self.dimensions})"
