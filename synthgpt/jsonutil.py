"""The one way synthgpt writes JSON text: on the wire, in answers, in tool arguments and in fingerprints.

Every API must turn the same value into the same text, or the same conversation sent through two APIs
would hash differently: compact separators, UTF-8 kept as is (`"Zürich"`, not `"Z\\u00fcrich"`), key
order kept, floats as Python's `repr` writes them (`1e-05`), NaN and infinities refused.

orjson writes that text ~20x faster than the standard library's encoder, and the same bytes except in
three places, each detected after the fact and answered by the standard encoder instead (so the text never
depends on which encoder ran):
- floats below 1e-4 in magnitude: orjson writes `1e-5` or `0.00001` where `repr` writes `1e-05`, so output
  holding a digit followed by `e-`, or `0.0000`, is written again (also when that text sits in a string:
  only slower, never different);
- NaN and infinities: orjson writes `null` for them. Output with a `null` is read back and compared with
  the value (NaN equals no JSON value), and a mismatch is written again, which refuses it (ValueError);
- what orjson does not write at all (ints beyond 64 bits, non-string keys, lone surrogates, sets,
  dataclasses, datetimes, circular references): TypeError, and the standard encoder writes it or refuses
  it with its usual message. (orjson alone writes `uuid.UUID` and plain `Enum` values, which the standard
  encoder refuses; no answer holds them.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import orjson

__all__ = [
    "canonical_bytes", "canonical_bytes_strict", "canonical_json", "dumps", "dumps_bytes", "dumps_many",
    "sorted_bytes_strict", "tiny_float_text",
]  # fmt: skip


def dumps(value: Any, *, allow_nan: bool = False, nulls: int = 0) -> str:
    """JSON text: compact, UTF-8, key order kept. NaN and infinities are refused (ValueError): they are not
    JSON, and no client could parse the text. `allow_nan=True` writes them as Python does, for text that
    is never sent (a sort key). `nulls`: as for `dumps_bytes`."""
    if allow_nan:
        return _ENCODE(value)
    out = _fast(value, nulls)
    return _ENCODE_FINITE(value) if out is None else out.decode()


def dumps_bytes(value: Any, *, nulls: int = 0) -> bytes:
    """`dumps(value).encode()`, byte for byte, without the detour through `str`.

    `nulls`: how many None values `value` holds, if the caller knows (an answer body its codec built). A
    `null` in the output is otherwise read back to tell a None from a NaN or an infinity (~3 µs for a chat
    body). Each None, NaN and infinity writes one `null` and a string may hold more, so an output with
    exactly `nulls` of them, when `value` holds at least `nulls` None values, has no NaN or infinity in it.
    A count too low only costs the read-back; a count too high would let a NaN through as null."""
    out = _fast(value, nulls)
    return _ENCODE_FINITE(value).encode() if out is None else out


def dumps_many(values: Sequence[Any], *, nulls: int = 0) -> list[str]:
    """`[dumps(v) for v in values]`, the same texts, with orjson's output checked once for all of them.

    A stream's events are many small values: each `dumps` call pays its checks and its layers of calls
    (~1 µs on a 200-byte event), for ~0.3 µs of orjson. Here every value is written by orjson and the
    module's checks run once over the joined output. `nulls`: at most the None values the values hold
    together (as for `dumps_bytes`); when the `null` count is anything else, or a check fails, or orjson
    refuses a value, each value goes through `dumps` as before.
    """
    try:
        outs = [_orjson(v, option=_OPTIONS) for v in values]
    except TypeError:
        return [dumps(v) for v in values]
    # joining hides no match of a text; a match across two texts could only send them all to `dumps`
    joined = b"".join(outs)
    if _tiny_float_text(joined):
        return [dumps(v) for v in values]
    if joined.count(b"null") != nulls:
        return [dumps(v) for v in values]
    return [out.decode() for out in outs]


def _fast(value: Any, nulls: int = 0) -> bytes | None:
    """orjson's text when it is the standard encoder's, else None (see the module's notes and
    `dumps_bytes` for `nulls`)."""
    try:
        out = _orjson(value, option=_OPTIONS)
    except TypeError:  # beyond orjson: the standard encoder writes it or refuses it, with its own message
        return None
    if _tiny_float_text(out):
        return None
    # `find`, not `in`: a bytes `in` first tries its operand as an int and clears the TypeError (~80 ns)
    if (out.count(b"null") != nulls if nulls else out.find(b"null") != -1) and _loads(out) != value:
        return None  # a NaN or an infinity became null (or a tuple: harmless)
    return out


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys (NaN written as Python does, anything else through `str`): the form
    fingerprints and cache keys are taken from."""
    return _CANONICAL(value)


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value).encode()` (keys sorted) for a value of JSON types without NaN or
    infinities, such as a pydantic `mode="json"` dump (it writes them as null): the fingerprint of every
    request is taken from this text, and orjson writes it ~8x faster. The same two checks as `_fast` send
    what orjson writes differently (tiny floats; ints beyond 64 bits, lone surrogates, non-string keys) to
    the standard encoder, which writes it or raises as `canonical_json` does."""
    try:
        out = _orjson(value, option=_SORTED)
    except TypeError:
        out = None
    if out is None or _tiny_float_text(out):
        return _CANONICAL(value).encode()
    return out


def canonical_bytes_strict(value: Any, default: Callable[[Any], Any], floats: bool = True) -> bytes | None:
    """`canonical_bytes` of the JSON-types dump of `value`, written straight from `value` (no dump taken),
    or None when that is not certain: `value` holds built-in JSON types (exact `str`, `int`, `dict`,
    `list`; also `float`, `bool`, None and tuples, which a `mode="json"` dump gives as themselves, a list,
    or null for NaN and infinities: what orjson writes for them) and objects that `default` turns into
    such values (it raises TypeError for any other). Subclasses of the built-in types, and whatever orjson
    does not write, go to `default` and so give None, as do the texts `canonical_bytes` would have the
    standard encoder write again; the caller then takes the dump.

    `floats=False`: the caller knows `value` holds no float. Then the text is the standard encoder's
    whatever it holds (strings are written alike by both, character by character: a test compares every
    code point), and the two scans for what only a float writes differently are skipped (~0.7 µs for a
    400-byte text: `in` on bytes is no memchr)."""
    out = sorted_bytes_strict(value, default)
    if out is None or (floats and _tiny_float_text(out)):
        return None
    return out


def sorted_bytes_strict(value: Any, default: Callable[[Any], Any]) -> bytes | None:
    """orjson's own text of `value` with keys sorted (floats as orjson writes them, NaN and infinities as
    null), with `default` called for everything but exact `str`, `int`, `float`, `bool`, None, `dict`,
    `list` and `tuple` (orjson itself writes only enums, UUIDs and `orjson.Fragment`s besides); None when
    orjson or `default` refuses a value (any exception `default` raises reaches here as a TypeError)."""
    try:
        return _orjson(value, default=default, option=_STRICT)
    except TypeError:
        return None


def _tiny_float_text(out: bytes) -> bool:
    """Whether orjson's `out` may hold a float under 1e-4, which it writes otherwise than `repr` (`0.0000…`
    or a digit before `e-`; see the module's notes). `find` first (cheaper than `in`, see `_fast`): the
    regex is the slow part."""
    return out.find(b"0.0000") != -1 or (out.find(b"e-") != -1 and _EXPONENT(out) is not None)


tiny_float_text = _tiny_float_text
"""Public name of `_tiny_float_text`: for a caller keeping orjson's text of a value it must never take
for the canonical text (a schema cache keyed by it)."""


_orjson = orjson.dumps
# dataclasses and datetimes are not JSON to the standard encoder: orjson hands them to its (absent) default
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_SORTED = _OPTIONS | orjson.OPT_SORT_KEYS
_STRICT = _SORTED | orjson.OPT_PASSTHROUGH_SUBCLASS
_loads = orjson.loads
_EXPONENT = re.compile(rb"e-(?<=[0-9]e-)").search
"""A digit followed by `e-`, found from the literal `e-` (the regex engine skips to each one in C; led by
the digit class it tries every position: 15 µs instead of 2 on a 1 KB stream event naming `claude-…`)."""
# what json.dumps builds on every call with these arguments; built once (encode keeps no state)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode
_ENCODE_FINITE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
