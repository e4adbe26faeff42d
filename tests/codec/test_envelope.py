"""The shared envelope decoder: orjson's parse, the stdlib's wording for every refusal, headers once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.codec.common import MAX_JSON_DEPTH, depth_at_most, json_depth, parse_json_stdlib
from synthgpt.codec.envelope import decode_envelope, parse_body
from synthgpt.codec.headers import KeptHeaders, journal_headers, kept_raw_headers
from synthgpt.errors import RequestError

BODIES: list[bytes] = [
    b'{"n": 123456789012345678901234567890}',  # orjson would read a float
    b'{"n": -9223372036854775809, "m": 18446744073709551615}',
    b'{"t": "digits 12345678901234567890 in a string"}',
    b'\xef\xbb\xbf{"bom": true}',
    b'{"a": 1e-400, "b": -0.0, "c": 1.7976931348623157e308, "d": 0.1}',
    b'{"dup": 1, "dup": 2}',
    b'{"emoji": "\\ud83d\\ude00", "raw": "\xc3\xa9"}',
    b"[" * 128 + b"]" * 128,
    # the brackets are counted on the body's shape (`common._SHAPES`): both kinds, and only as a bound
    b'{"a":' * 64 + b"[" * 64 + b"1" + b"]" * 64 + b"}" * 64,  # 128 deep, mixed
    b'"' + b"[{" * 200 + b'"',  # a string holding brackets: no depth at all
    b'{"s": "' + b"{" * 300 + b'", "t": ["' + b"[" * 300 + b'"]}',
    b"[" * 128 + b"]" * 128 + b" " * 10,
    b"[1234567890123456789, -9223372036854775808, 1e5, 2E+5]",  # 19 digits: the stdlib reads them
    b'{"a": 123456789012345678}',  # 18 digits: orjson's
    "{\"text\": \"😀 café \u2028 日本\"}".encode(),  # UTF-8 text, a line separator raw
]


@pytest.mark.parametrize("raw", BODIES)
def test_the_same_json_as_the_stdlib_path(raw: bytes) -> None:
    got, want = parse_body(raw), parse_json_stdlib(raw)
    assert got == want and json.dumps(got) == json.dumps(want)


REFUSED: list[bytes] = [
    b"", b"{", b"\xff\xfe", b'{"a": NaN}', b'{"a": -Infinity}', b'{"n": 1e999}', b'"\\ud800"',
    b"[" * 129 + b"]" * 129, b"[" * 2000 + b"]" * 2000, b'{"a": 1} x',
    b'{"a":' * 65 + b"[" * 64 + b"1" + b"]" * 64 + b"}" * 65, b'{"a":' * 129 + b"1" + b"}" * 129,
    b"[" + b"1" * 250 + b"e99]", b"[" + b"9" * 400 + b".5]", b'{"n": 5E+0400}', b'{"n": -1.5e00309}',
]  # fmt: skip


@pytest.mark.parametrize("raw", REFUSED)
def test_every_refusal_worded_as_before(raw: bytes) -> None:
    with pytest.raises(RequestError) as want:
        parse_json_stdlib(raw)
    with pytest.raises(RequestError) as got:
        parse_body(raw)
    assert (got.value.message, got.value.param) == (want.value.message, want.value.param)


def test_headers_are_decoded_once_credentials_dropped() -> None:
    headers: Any = [("Authorization", "Bearer sk-x"), ("X-Case", "a"), ("x-case", "b"), ("Cookie", "s=1")]
    envelope = decode_envelope(b"{}", headers)
    assert isinstance(envelope.headers, KeptHeaders)
    assert envelope.headers.pairs == (("x-case", "a"), ("x-case", "b"))
    assert journal_headers(envelope.headers) is envelope.headers.pairs  # decoding again costs nothing
    assert envelope.headers["X-CASE"] == "b" and "authorization" not in envelope.headers
    assert dict(envelope.headers) == {"x-case": "b"} and len(envelope.headers) == 1


RAW_HEADERS: list[list[tuple[bytes, bytes]]] = [
    [],
    [(b"host", b"127.0.0.1:8000"), (b"content-length", b"12"), (b"authorization", b"Bearer sk-x"),
     (b"content-type", b"application/json"), (b"x-stainless-lang", b"python")],
    [(b"X-Api-Key", b"k"), (b"X-Case", b"a"), (b"x-case", b"b"), (b"Cookie", b"s=1"), (b"x-auth-token", b"t"),
     (b"X-Portkey-Api-Key", b"p"), (b"anthropic-version", b"2023-06-01"), (b"x-\xe9", b"caf\xe9 \xff")],
    [(b"ocp-apim-subscription-key", b"k"), (b"x-amz-security-token", b"t"), (b"x-session-id", b"s"),
     (b"user-agent", b"OpenAI/Python 1.0"), (b"user-agent", b"again")],
]  # fmt: skip


@pytest.mark.parametrize("raw", RAW_HEADERS)
def test_raw_headers_are_kept_as_starlettes_headers_are(raw: list[tuple[bytes, bytes]]) -> None:
    """The routes decode the raw ASGI list in one pass: the pairs a `Headers` object would have given."""
    from starlette.datastructures import Headers

    for _ in range(2):  # the second time from the cache of names
        kept = kept_raw_headers(raw)
        assert isinstance(kept, KeptHeaders)
        assert kept.pairs == journal_headers(Headers(raw=raw))
        assert decode_envelope(b"{}", kept).headers is kept  # taken as decoded


@pytest.mark.parametrize("offset", [-19, -10, -1, 0, 1])
def test_a_wide_integer_across_a_scan_piece_boundary_is_read_as_an_integer(offset: int) -> None:
    """A large body is scanned for 19-digit runs piece by piece (the GIL is let go between pieces): a run
    cut by a piece's end must still send the body to the stdlib path, which keeps the integer whole."""
    from synthgpt.codec import common

    wide = 12345678901234567890123
    head = b'{"pad":"' + b"x" * (common._SCAN_PIECE + offset - 8 - len(b'","n":')) + b'","n":'
    raw = head + str(wide).encode() + b"}"
    assert len(head) == common._SCAN_PIECE + offset
    assert parse_body(raw)["n"] == wide


@pytest.mark.parametrize(
    "raw",
    [b"[" + b"1" * 250 + b"e99]", b"[" + b"9" * 400 + b".5]", b'{"n": 5E+0400}', b'{"n": -1.5e00309}'],
)
def test_a_number_too_large_for_a_double_is_refused_whatever_its_shape(raw: bytes) -> None:
    """orjson refuses these and the stdlib path must too: 250 digits with a two-digit exponent overflow
    a double as surely as `1e999`, where a pattern looking for 300 digits or a three-digit exponent let
    `inf` through into the request."""
    with pytest.raises(RequestError, match="is not a JSON number a double can hold"):
        parse_body(raw)


@pytest.mark.parametrize(
    ("raw", "wide"),
    [(b'{"e": "tree123", "n": 12345678901234567890123}', 12345678901234567890123), (b"[1e5, 2]", None)],
)
def test_number_shapes_that_need_the_stdlib_path_are_still_read_exactly(raw: bytes, wide: int | None) -> None:
    body = parse_body(raw)
    assert body == parse_json_stdlib(raw)
    if wide is not None:
        assert body["n"] == wide


def test_the_shapes_table_is_the_digits_table_with_both_opening_brackets_as_one() -> None:
    from synthgpt.codec.common import _DIGITS, _SHAPES

    assert [b for b in range(256) if _SHAPES[b] != _DIGITS[b]] == [ord("["), ord("{")]
    assert _SHAPES[ord("[")] == _SHAPES[ord("{")] == ord("[") and _DIGITS[ord("[")] != ord("0")


def _depth(value: Any) -> int:
    """The nesting of parsed JSON, recursively: the reference `json_depth` walks without recursion."""
    if isinstance(value, dict):
        value = list(value.values())
    elif not isinstance(value, list):
        return 0
    return 1 + max(map(_depth, value), default=0)


@pytest.mark.parametrize(
    "value",
    [
        0, "s", None, [], {}, [[]], [1, [2, [3]], {"a": {"b": []}}], {"a": [{"b": [{"c": 1}]}], "d": 2},
        [[1]] * 5000 + [[[[[]]]]], [{"role": "user", "content": "hi"}] * 10_000, [[[[[[]]]]]], [[]] * 3,
    ],
)  # fmt: skip
def test_json_depth_is_the_nesting_of_arrays_and_objects(value: Any) -> None:
    assert json_depth(value, MAX_JSON_DEPTH) == _depth(value)


@pytest.mark.parametrize("levels", [128, 129, 130, 5000])
def test_json_depth_counts_no_further_than_one_past_its_stop(levels: int) -> None:
    value: Any = 1
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    assert json_depth(value, MAX_JSON_DEPTH) == min(levels, MAX_JSON_DEPTH + 1)


def _nested() -> st.SearchStrategy[Any]:
    text = st.text(alphabet='[]{}"\\,:ab1 é', max_size=6)
    leaf = st.one_of(text, st.integers(-5, 5), st.none(), st.booleans())
    return st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=24,
    )


@settings(max_examples=1500, deadline=None)
@given(_nested(), st.integers(0, 20), st.booleans())
def test_the_depth_told_from_the_text_is_the_parsed_body_s(body: Any, limit: int, compact: bool) -> None:
    """`depth_at_most` reads the nesting off the text (strings cut out at their quotes, the innermost
    containers removed a level per pass): it must agree with the walk of the parsed body, or say None."""
    raw = json.dumps(body, separators=(",", ":") if compact else None, ensure_ascii=False).encode()
    told = depth_at_most(raw, limit)
    if told is not None:
        assert told == (json_depth(body, limit) <= limit)
    if b'\\"' not in raw and not _bracket_in_a_string(body):
        assert told is not None  # the cheap way answers every body without an escaped quote or such string


def _bracket_in_a_string(value: Any) -> bool:
    if isinstance(value, str):
        return any(c in value for c in "[]{}")
    if isinstance(value, dict):
        return any(_bracket_in_a_string(k) or _bracket_in_a_string(v) for k, v in value.items())
    return isinstance(value, list) and any(map(_bracket_in_a_string, value))


def test_many_tools_are_not_walked_to_be_shown_shallow() -> None:
    """Twenty tools hold some 150 arrays and objects, past the 128 the bracket count lets through."""
    prop = {"type": "array", "items": {"type": "string"}}
    tool = {"type": "function", "function": {"name": "t", "parameters": {
        "type": "object", "properties": {"a": prop, "b": {"type": "string", "enum": ["x", "y"]}},
        "required": ["a"]}}}  # fmt: skip
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool] * 20})
    assert raw.count("[") + raw.count("{") > 128
    assert depth_at_most(raw.encode(), 128) is True
