"""`jsonutil.dumps` is orjson where orjson writes the standard encoder's bytes, and the standard encoder
everywhere else: the text of an answer never depends on which of them ran."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
import random
import struct
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.jsonutil import canonical_bytes, canonical_json, dumps, dumps_bytes, dumps_many, repr_floats
from synthgpt.pipeline import json_bytes, json_bytes_in_pieces

_STD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class _Colour(enum.Enum):
    RED = "red"


class _Text(str):
    pass


def _floats() -> list[float]:
    r = random.Random(7)
    out = [r.uniform(-1, 1) for _ in range(3000)] + [r.gauss(0, 0.01) for _ in range(3000)]
    out += [round(r.uniform(-5, 5), r.randint(0, 8)) for _ in range(2000)]
    for _ in range(3000):
        x = struct.unpack("d", struct.pack("Q", r.getrandbits(64)))[0]
        if math.isfinite(x):
            out.append(x)
    out += [m * 10.0**e for e in range(-320, 300) for m in (1.0, 1.5, 9.999, 1.2345678901234567)]
    return [x for x in out if math.isfinite(x)]


def test_every_float_is_written_as_repr_writes_it() -> None:
    values = _floats()
    for x in values:
        assert dumps(x) == _STD(x) == repr(x)
    assert dumps_bytes(values) == _STD(values).encode()  # an embedding vector, whole


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-05, "1e-05"),  # orjson alone: 0.00001
        (-2.5e-07, "-2.5e-07"),  # orjson alone: -2.5e-7
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        ([0.5, 1e-05, None], "[0.5,1e-05,null]"),
        ({"temperature": 0.7, "top_p": 1.0}, '{"temperature":0.7,"top_p":1.0}'),
    ],
)
def test_float_format_is_pinned(value: Any, text: str) -> None:
    assert dumps(value) == text
    assert json_bytes(value) == json_bytes_in_pieces(value) == text.encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("shape", ["bare", "list", "dict", "beside_null"])
def test_nan_and_infinities_are_refused(bad: float, shape: str) -> None:
    value: Any = {
        "bare": bad,
        "list": [1.0, bad],
        "dict": {"logprob": bad},
        "beside_null": {"a": None, "b": [bad]},  # orjson writes both as null: the read-back tells them apart
    }[shape]
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps(value)
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        json_bytes(value)
    assert dumps(value, allow_nan=True) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        "Zürich \u2028\u2029 😀 \ufeff",
        "".join(map(chr, range(128))),  # every control character escaped as the standard encoder does
        {"k": None, "t": (1, None)},  # a tuple is a list; null beside it read back
        {1: 2, 2.5: None},  # non-string keys: orjson refuses, the standard encoder writes
        2**70,  # beyond 64 bits
        {"text": "re-enter 3e-5 0.00001"},  # looks like a float orjson writes differently: same text
        [[]] * 3 + [{}],
    ],
)
def test_same_text_as_the_standard_encoder(value: Any) -> None:
    assert dumps(value) == _STD(value)
    assert dumps_bytes(value) == _STD(value).encode()


def test_what_is_not_json_is_refused_with_the_standard_message() -> None:
    import datetime

    for bad in ({1, 2}, datetime.date(2026, 1, 1), object()):
        with pytest.raises(TypeError, match="is not JSON serializable"):
            dumps({"x": bad})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps(loop)


def test_canonical_bytes_is_the_canonical_json_text() -> None:
    """Fingerprints hash `canonical_bytes`: it must be `canonical_json(...).encode()` byte for byte."""
    values: list[Any] = [
        {"b": 1, "a": [None, True, 0.5], "é": "Zürich \u2028 \x00\x1f \"q\" \\ 😀"},
        {"tiny": 1e-05, "small": 0.00001234, "huge": 1e22, "neg": -0.0, "z": {"y": {"x": []}}},
        _floats()[::50],
        {"wide": 10**30, "n": 2**63, "m": -(2**63) - 1},
    ]
    for value in values:
        assert canonical_bytes(value) == canonical_json(value).encode()
    with pytest.raises(UnicodeEncodeError):
        canonical_bytes({"lone": "\ud800"})
    assert canonical_bytes({1: "int key"}) == b'{"1":"int key"}'  # what the standard encoder writes


def _none_count(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(_none_count(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_none_count(v) for v in value)
    return 0


_AWKWARD_NULLS: list[Any] = [
    {"a": None, "b": math.nan},  # a NaN beside the None it would pass for
    {"a": None, "b": None, "c": math.inf},
    {"null": None, "x": -math.inf},  # a key holding `null`
    {"text": "null null", "a": None, "b": math.nan},  # strings holding `null`
    {"text": "null", "a": None},
    [None, [None, {"k": None}], "nullnull", 1e-05, 0.5, math.nan],
    [None, [None, {"k": None}], "nullnull", 1e-05, 0.5],
    {"a": None, "b": (1, None)},  # a tuple, which orjson writes as a list
    {"t": "Zürich \u2028 😀", "n": None, "f": -0.0},
]


@pytest.mark.parametrize("value", _AWKWARD_NULLS)
def test_a_count_of_nulls_gives_the_same_bytes_or_the_same_refusal(value: Any) -> None:
    # `nulls` only spares a read-back: any count up to the value's None values gives dumps' text or refusal
    try:
        expected: bytes | None = _STD(value).encode()
    except ValueError:
        expected = None
    for nulls in range(_none_count(value) + 1):
        if expected is None:
            with pytest.raises(ValueError):
                dumps_bytes(value, nulls=nulls)
        else:
            assert dumps_bytes(value, nulls=nulls) == expected
            assert json_bytes(value, nulls) == expected


def test_dumps_many_gives_each_value_its_dumps_text_or_the_same_refusal() -> None:
    # any selection of values, with any count of nulls up to their None values, written together
    pool: list[Any] = [*_AWKWARD_NULLS, {"k": 1}, "plain", 2**70, {1: None}, [0.5, 1e-05], {"e": "re-do"}, []]
    rng = random.Random(5)
    for _ in range(1500):
        values = rng.sample(pool, rng.randrange(0, 5))
        try:
            expected: list[str] | None = [_STD(v) for v in values]
        except ValueError:
            expected = None
        for nulls in range(sum(map(_none_count, values)) + 1):
            if expected is None:
                with pytest.raises(ValueError):
                    dumps_many(values, nulls=nulls)
            else:
                assert dumps_many(values, nulls=nulls) == expected
    with pytest.raises(TypeError, match="is not JSON serializable"):
        dumps_many([{"a": 1}, {"x": {1, 2}}])


def test_the_exponent_check_finds_a_digit_before_e_minus_as_the_plain_regex_does() -> None:
    import re

    from synthgpt.jsonutil import _EXPONENT

    plain = re.compile(rb"[0-9]e-").search
    rng = random.Random(9)
    for _ in range(20000):
        text = bytes(rng.choice(b"0123456789e-x.E+") for _ in range(rng.randrange(0, 12)))
        assert (_EXPONENT(text) is None) == (plain(text) is None), text
    assert dumps({"model": "claude-3-5", "v": 1e-05}) == '{"model":"claude-3-5","v":1e-05}'


# -- tiny floats rewritten into the form `repr` writes (`repr_floats`) ---------------------------------------

_TRICKY_TEXTS = [
    "1e-7", "0.00001", ":1e-7,", '{"a":0.00001}', "x 2.5e-6]", "re-run", "e-", "0.0000", "10.00001",
    'a "quoted" 3e-5', "tab\there", "Zürich 1e-8", "\\", "\\\\", 'end\\"', "",
]  # fmt: skip


def _tiny_values() -> st.SearchStrategy[Any]:
    tiny = st.floats(min_value=1e-320, max_value=1e-4, allow_nan=False).flatmap(
        lambda x: st.sampled_from([x, -x])
    )
    leaf = st.one_of(
        tiny, st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(_TRICKY_TEXTS),
        st.text(alphabet='0123456789.e-+ "\\:,[]{}x', max_size=12), st.none(), st.integers(-10, 10**6),
    )  # fmt: skip
    return st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(_TRICKY_TEXTS), inner,
                                                                   max_size=4),
        max_leaves=20,
    )  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(_tiny_values())
def test_tiny_floats_are_written_as_repr_writes_them_and_strings_are_left_alone(value: Any) -> None:
    expected = _STD(value).encode()
    assert dumps_bytes(value, nulls=_none_count(value)) == expected
    rewritten = repr_floats(orjson.dumps(value))
    assert rewritten is None or rewritten == expected  # None: the standard encoder writes it


def test_a_vector_and_a_logprobs_body_are_rewritten_not_written_again() -> None:
    """What the rewrite is for: an embedding vector nearly always holds a float under 1e-4 and a token's
    logprob often does; orjson's text rewritten is the standard encoder's, without falling back to it."""
    from synthgpt.generators.embedding import embed_text
    from synthgpt.logprobs import token_logprobs

    vector = list(embed_text("tide pools", model="text-embedding-3-small"))
    entries = token_logprobs('Tide pools hold "anemones", crabs and snails.', 7, 5)
    for value in ({"data": [{"embedding": vector}]}, {"content": entries}):
        out = orjson.dumps(value)
        assert out.find(b"0.0000") != -1 or out.find(b"e-") != -1  # orjson's forms are in it
        assert repr_floats(out) == _STD(value).encode()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([1e-5, "1e-7", -2.5e-7], '[1e-05,"1e-7",-2.5e-07]'),
        ({"t": 'a \\"q\\" 0.00001', "v": 9.9e-05}, '{"t":"a \\\\\\"q\\\\\\" 0.00001","v":9.9e-05}'),
        ([10.00001, 1e-10, 1e-100, 0.0001], "[10.00001,1e-10,1e-100,0.0001]"),
    ],
)
def test_the_rewrite_touches_numbers_only(value: Any, text: str) -> None:
    assert _STD(value) == text
    assert dumps(value) == text


_STD_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode


def _canonical_values() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        _tiny_values(), st.floats(), st.sampled_from([None, "null", ":null", 2**70, -(2**63) - 1, True, 1.0]),
        st.sampled_from([datetime.date(2026, 1, 2), decimal.Decimal("1.5"), _Colour.RED, _Text("sub")]),
    )  # fmt: skip
    keys = st.sampled_from(["a", "b", "é", "null", "Z", "aa", "\u2028", "😀"])
    return st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4) | st.dictionaries(st.integers(0, 3), inner, max_size=2),
        max_leaves=16,
    )  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(_canonical_values())
def test_canonical_json_is_the_standard_encoder_s_sorted_text_whichever_writes_it(value: Any) -> None:
    """orjson writes it where that is certain (exact JSON types, no null value, tiny floats rewritten):
    NaN and the infinities, enums, dates, subclasses, wide ints and int keys go to the standard encoder."""
    assert canonical_json(value) == _STD_CANONICAL(value)


def test_a_kept_text_holds_its_size() -> None:
    """orjson's bytes keep the buffer they were written in; `fitted` copies them to their size."""
    import tracemalloc

    import orjson

    from synthgpt.jsonutil import fitted

    values = [{"role": "tool", "tool_call_id": f"c{i}", "content": "ok " * i} for i in range(200)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        written = [orjson.dumps(v) for v in values]
        as_written = tracemalloc.get_traced_memory()[0] - base
        kept = [fitted(text) for text in written]
        del written
        as_kept = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    size = sum(map(len, kept))
    assert as_written > 4 * size  # what this test is about: if orjson sizes its bytes one day, it is moot
    assert as_kept < 1.5 * size + 200 * 40, (as_kept, size)  # a bytes object's header each
    assert kept == [orjson.dumps(v) for v in values] and type(kept[0]) is bytes
