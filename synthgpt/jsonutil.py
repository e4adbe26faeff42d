"""The one way synthgpt writes JSON text: on the wire, in answers, in tool arguments and in fingerprints.

Every API must turn the same value into the same text, or the same conversation sent through two APIs
would hash differently: compact separators, UTF-8 kept as is (`"Zürich"`, not `"Z\\u00fcrich"`), key
order kept, floats as Python's `repr` writes them (`1e-05`), NaN and infinities refused.

orjson writes that text ~20x faster than the standard library's encoder, and the same bytes except in
three places, each detected after the fact, so the text never depends on which encoder ran:
- floats below 1e-4 in magnitude: orjson writes `0.00001` or `1e-7` where `repr` writes `1e-05` and
  `1e-07`. Output holding a digit followed by `e-`, or `0.0000`, has those two forms rewritten into
  `repr`'s (`repr_floats`): a float's text is orjson's shortest round trip, as `repr`'s, so only the form
  differs. Where such text also sits in a string (where it must stay as it is), or a form is left that the
  rewrite does not know, the value is written again by the standard encoder. An embedding vector nearly
  always holds such a float, and a token's logprob often does: the standard encoder took ~0.7 ms for a
  vector of 1,536 and ~0.3 ms for a chat body with 5 alternatives per token, orjson and the rewrite
  ~0.12 and ~0.14 ms;
- NaN and infinities: orjson writes `null` for them. Output with a `null` is read back and compared with
  the value (NaN equals no JSON value), and a mismatch is written again, which refuses it (ValueError);
- what orjson does not write at all (ints beyond 64 bits, non-string keys, lone surrogates, sets,
  dataclasses, datetimes, circular references): TypeError, and the standard encoder writes it or refuses
  it with its usual message. (orjson alone writes `uuid.UUID` and plain `Enum` values, which the standard
  encoder refuses; no answer holds them.)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

__all__ = [
    "canonical_bytes", "canonical_bytes_strict", "canonical_json", "dumps", "dumps_bytes", "dumps_many",
    "fitted", "plain_json", "repr_floats", "sorted_bytes_strict", "tiny_float_text",
]  # fmt: skip


def fitted(data: bytes | bytearray | memoryview) -> bytes:
    """`data` as bytes of its own size, for a text that is kept: orjson's bytes keep the buffer they were
    written in (by tracemalloc, a 60-byte text held 4 KB, an 814-byte answer 8 KB, a 3 KB one 32 KB), and
    `bytes(b)` of a bytes object is the object itself."""
    return bytes(memoryview(data))


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
        rewritten = list(map(_repr_form, outs))
        if any(o is None for o in rewritten):
            return [dumps(v) for v in values]
        outs = [o for o in rewritten if o is not None]  # (none is: mypy's narrowing)
        joined = b"".join(outs)
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
    rewritten = _repr_form(out)
    if rewritten is None:
        return None
    out = rewritten
    # `find`, not `in`: a bytes `in` first tries its operand as an int and clears the TypeError (~80 ns)
    if (out.count(b"null") != nulls if nulls else out.find(b"null") != -1) and _loads(out) != value:
        return None  # a NaN or an infinity became null (or a tuple: harmless)
    return out


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys (NaN written as Python does, anything else through `str`): the form
    fingerprints and cache keys are taken from.

    orjson writes it when `value` holds exact JSON types only (`plain_json`: then its text is the
    standard encoder's, tiny floats rewritten by `repr_floats`); the standard encoder writes anything else.
    A request's tools are written this way to count their tokens, every request: ~8 µs each by the
    standard encoder, which an agent declaring twenty tools paid twenty times."""
    if plain_json(value):
        try:
            out: bytes | None = _orjson(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # ints beyond 64 bits, lone surrogates, nesting past orjson's limit
            out = None
        if out is not None:
            out = _repr_form(out)
        if out is not None:
            return out.decode()
    return _CANONICAL(value)


def plain_json(value: Any, *, tuples: bool = True) -> bool:
    """Whether `value` holds only exact `dict` (of `str` keys), `list`, `tuple` (unless not `tuples`),
    `str`, `int`, finite `float`, `bool` and None: what orjson and the standard encoder write alike (orjson
    writes an enum's value where `str` gives its name, and NaN as null). Without tuples, no two such values
    have the same orjson text."""
    todo = [value]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is dict:
            for key, inner in item.items():
                if type(key) is not str:
                    return False
                todo.append(inner)
        elif kind is list or (kind is tuple and tuples):
            todo.extend(item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif not (kind is str or kind is int or kind is bool or item is None):
            return False
    return True


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
    if out is not None:
        out = _repr_form(out)
    return _CANONICAL(value).encode() if out is None else out


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
    return _repr_form(out) if out is not None and floats else out


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


def _repr_form(out: bytes) -> bytes | None:
    """orjson's `out` with its tiny floats in `repr`'s form (`repr_floats`), None when that is not certain;
    a text without any (most answers) told by `_tiny_float_text` first, which is cheaper."""
    return repr_floats(out) if _tiny_float_text(out) else out


def repr_floats(out: bytes) -> bytes | None:
    """orjson's compact `out` with each float under 1e-4 written as `repr` writes it, or None when that is
    not certain here (then the standard encoder writes the value).

    orjson writes such a float as `0.00001` (exponent -5) or `1.5e-6` (a one-digit exponent) where `repr`
    writes `1e-05` and `1.5e-06`. Both write the shortest text that reads back as the float, so `repr(float(
    text))` of orjson's text is the standard encoder's. Each `0.0000` that starts a number and each `e-`
    after a digit and before one digit is found with `bytes.find`; one outside a string (told by the count
    of quotes before it, an escaped quote being `\\"`: exact while the text holds no escaped backslash,
    else None) is rewritten. A text with more than 4,096 such marks is left to the standard encoder
    (`_MAX_MARKS`): the loop here costs ~1 µs a mark."""
    # quotes are counted by one byte when the text holds no backslash at all (a one-byte search is memchr;
    # a two-byte one reads every byte); else escaped quotes are counted off, and an escaped backslash
    # would make that count wrong
    escapes = out.find(b"\\") != -1
    if escapes and out.find(b"\\\\") != -1:
        return None
    find, count, size = out.find, out.count, len(out)
    pieces: list[bytes] = []
    last = 0  # where the text not yet copied starts
    counted = 0  # quotes are counted up to here
    quotes = 0
    marks = 0
    decimal, exponent = find(b"0.0000"), find(b"e-")
    while decimal != -1 or exponent != -1:
        if exponent == -1 or (decimal != -1 and decimal < exponent):
            at = decimal
            decimal = find(b"0.0000", at + 6)
            # orjson's form starts a number (not `10.00001`, written alike) with a significant digit next
            if (at and out[at - 1] in _DIGIT_OR_DOT) or at + 6 >= size or out[at + 6] not in _NONZERO:
                continue
            start = at - 1 if at and out[at - 1] == _MINUS else at
            found = _DIGITS(out, at + 6)
            end = found.end() if found is not None else at + 6
        else:
            at = exponent
            exponent = find(b"e-", at + 2)
            # a float's exponent of one digit (two or more are written alike; a string's `re-run` is none)
            if not at or out[at - 1] not in _DIGITS_ONLY or at + 2 >= size or out[at + 2] not in _NONZERO:
                continue
            end = at + 3
            if end < size and out[end] in _DIGITS_ONLY:
                continue
            low = max(0, at - _NUMBER_REACH)
            start = max(out.rfind(b",", low, at), out.rfind(b":", low, at), out.rfind(b"[", low, at)) + 1
        marks += 1
        if marks > _MAX_MARKS:
            return None
        quotes += count(b'"', counted, at) - (count(b'\\"', counted, at) if escapes else 0)
        counted = at
        if quotes % 2:  # inside a string: its text stays as it is
            continue
        try:
            text = repr(float(out[start:end])).encode()
        except ValueError:
            return None
        pieces.append(out[last:start])
        pieces.append(text)
        last = end
    if not pieces:
        return out
    pieces.append(out[last:])
    return b"".join(pieces)


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
# `repr_floats`: byte values it tells apart, the digits after a number's `0.0000`, how far back a number's
# start may be (a float's text is at most 24 bytes), and how many marks it looks at before leaving the
# text to the standard encoder
_DIGIT_OR_DOT: Final = frozenset(b"0123456789.")
_DIGITS_ONLY: Final = frozenset(b"0123456789")
_NONZERO: Final = frozenset(b"123456789")
_MINUS: Final = ord("-")
_DIGITS = re.compile(rb"[0-9]*").match
_NUMBER_REACH: Final = 32
_MAX_MARKS: Final = 4096
# what json.dumps builds on every call with these arguments; built once (encode keeps no state)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode
_ENCODE_FINITE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
