"""The fingerprint is written from the request's fields (`model._fingerprinted_fields`) instead of from a
pydantic dump when it can be: proof that it then writes the dump's very text, and gives way to the dump
whenever it cannot be sure (floats, values beyond JSON, subclasses, lone surrogates, long requests)."""

from __future__ import annotations

import datetime
import enum
import json
import uuid
from typing import Any

import pytest

from synthgpt.jsonutil import _CANONICAL, canonical_bytes_strict
from synthgpt.model import (
    FrozenDict,
    Message,
    ModelRequest,
    _fingerprinted_fields,
    _item_lists,
    built,
)
from synthgpt.seeding import derive_seed
from tests.codec import decode_corpus


def _dumped(req: ModelRequest) -> bytes:
    """The text the fingerprint hashed before it was written from the fields."""
    return req._fingerprinted_json()


def test_every_decoded_request_writes_the_dumps_text() -> None:
    """Every request the corpus decodes (every API, hostile values included) is written from its fields,
    to the dump's bytes."""
    mock, codecs = decode_corpus.MockGPT(seed=0), decode_corpus._codecs()
    written = 0
    for route, raw in decode_corpus.corpus():
        _, req = decode_corpus.outcome(mock, codecs, route, raw)
        if req is None:
            continue
        fast = _fingerprinted_fields(req)
        assert fast is not None, (route, raw[:200])  # decoded requests are plain JSON values
        assert fast == _dumped(req), (route, raw[:200])
        written += 1
    assert written > 1000


class _Colour(enum.Enum):
    RED = "red"
    TINY = 1e-7


class _Str(str):
    pass


_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "x": {"type": "number", "minimum": 1e-05, "maximum": 1e16}}}}}  # fmt: skip

EXTRAS: list[dict[str, Any]] = [
    {},
    {"temperature": 0.7, "top_p": 1.0, "seed": 3, "user": "u", "store": False, "stop": None},
    {"temperature": 1e-05},  # repr writes 1e-05, orjson 1e-5
    {"temperature": 0.00001234},
    {"big": 1e16, "huge": 1.5e300, "neg": -2.5e-7},
    {"nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf")},
    {"wide": 2**70, "negative_wide": -(2**64)},
    {"text": "1e-05 and 0.00001 as text", "unicode": "Zürich \u2028 \x7f \x00 \U0001f600"},
    {"logprobs": True, "top_logprobs": 3, "include": ["x"], "kept": 1},
    {"nested": {"b": [1, 2.5, {"z": None, "a": "é"}], "a": (1, "two")}},
    {"tuple": (1, 2), "bytes": b"raw", "set": {1}},
    {"date": datetime.date(2024, 1, 2), "when": datetime.datetime(2024, 1, 2, 3, 4, 5)},
    {"enum": _Colour.RED, "tiny_enum": _Colour.TINY, "uuid": uuid.UUID(int=7)},
    {"frozen": FrozenDict({"a": 1}), "sub": _Str("s")},
    {"keys": {1: "int key"}},
    {"ключ": 1, "a": 2, "Z": 3, "\U0001f600": 4, "é": 5},
]


@pytest.mark.parametrize("extra", EXTRAS, ids=range(len(EXTRAS)))
@pytest.mark.parametrize("shape", ["plain", "tools", "schema", "reasoning", "parts"])
def test_the_fields_write_the_dumps_text_or_give_way(extra: dict[str, Any], shape: str) -> None:
    data: dict[str, Any] = {"model": "m-1", "messages": [{"role": "user", "content": "hi 0.0000 1e-05"}],
                            "extra": extra}  # fmt: skip
    if shape == "tools":
        data.update(tools=[_TOOL], tool_choice="required")
    elif shape == "schema":
        data["response_schema"] = {"name": "o", "schema": {"type": "object", "x": 1e-06, "y": [0.5]}}
    elif shape == "reasoning":
        data["reasoning"] = {"effort": "high", "budget_tokens": 1024}
    elif shape == "parts":
        call = {"id": "c", "function": {"name": "f", "arguments": {"a": 1e-9}}}
        data["messages"] = [
            {"role": "user", "content": [{"type": "text", "text": "a"},
                                         {"type": "image_url", "image_url": {"url": "data:x"}}]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": "0.00001"},
        ]  # fmt: skip
    req = ModelRequest.from_dict(data)
    fast = _fingerprinted_fields(req)
    if fast is not None:
        assert fast == _dumped(req)
    # the dump's text is what was hashed all along (pinned by test_engine_model), whichever wrote it
    assert req.fingerprint() == derive_seed(_dumped(req))


@pytest.mark.parametrize("extra", [{"temperature": 1e-05}, {"nan": float("nan")}, {"wide": 2**70},
                                   {"when": datetime.date(2024, 1, 2)}, {"frozen": FrozenDict({"a": 1})},
                                   {"sub": _Str("s")}, {"keys": {1: "x"}}])  # fmt: skip
def test_what_orjson_may_write_differently_goes_to_the_dump(extra: dict[str, Any]) -> None:
    """Ints beyond 64 bits, dates, subclasses, non-string keys go to the dump; a tiny float and a NaN's null
    are written as the dump writes them."""
    message = {"role": "user", "content": "x"}
    req = ModelRequest.from_dict({"model": "m", "messages": [message], "extra": extra})
    fast = _fingerprinted_fields(req)
    if "nan" in extra:  # orjson writes a NaN as null, as the dump does: the same text
        assert fast == _dumped(req)
    elif "temperature" in extra:  # orjson's 0.00001, rewritten as the dump writes it (`repr_floats`)
        assert fast == _dumped(req) and fast is not None and b"1e-05" in fast
    else:
        assert fast is None


def test_a_plain_request_is_written_from_its_fields() -> None:
    """The common request takes the fast path (what the pipeline's speed relies on), to the pinned hash."""
    req = ModelRequest.from_dict({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]})
    fast = _fingerprinted_fields(req)
    assert fast is not None and fast == _dumped(req)
    assert fast == json.dumps(
        json.loads(fast), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def test_subclasses_and_long_requests_take_the_dump() -> None:
    class Mine(ModelRequest):
        pass

    message = {"role": "user", "content": "x"}
    mine = Mine(model="m", messages=[message])
    assert _fingerprinted_fields(mine) is None
    assert mine.fingerprint() == ModelRequest(model="m", messages=[message]).fingerprint()

    class MyMessage(Message):
        pass

    odd = built(ModelRequest, model="m", messages=(MyMessage(role="user", content="x"),))
    assert _fingerprinted_fields(odd) is None
    mixed = (built(Message, role="user", content="x"), MyMessage(role="user", content="y"))
    assert _fingerprinted_fields(built(ModelRequest, model="m", messages=mixed)) is None

    from synthgpt.model import ToolChoice

    class MyChoice(ToolChoice):
        pass

    plain = {"role": "user", "content": "x"}
    choosy = built(ModelRequest, model="m", messages=(Message(**plain),), tool_choice=MyChoice(mode="none"))
    assert _fingerprinted_fields(choosy) is None
    assert choosy.fingerprint() == ModelRequest(model="m", messages=[plain], tool_choice="none").fingerprint()

    n = 300  # over _ITEMS_PER_PIECE: encoded in pieces by `_fingerprinted_json`
    long = built(ModelRequest, model="m", messages=tuple(built(Message, role="user", content=str(i))
                                                         for i in range(n)))  # fmt: skip
    assert _fingerprinted_fields(long) is None
    dumped = _item_lists()["messages"].dump_python(long.messages, mode="json")
    assert long.fingerprint() == derive_seed(long._fingerprinted_json()) and len(dumped) == n


def test_a_lone_surrogate_in_a_key_is_refused_as_before() -> None:
    """orjson refuses the surrogate on the fast path; the dump path then finds it (its U+FFFD check)."""
    with pytest.raises(ValueError, match="lone surrogate"):
        ModelRequest.from_dict({"messages": [{"role": "user", "content": "x"}], "extra": {"\ud800": 1}})
    with pytest.raises(ValueError, match="lone surrogate"):
        ModelRequest.from_dict({"messages": [{"role": "user", "content": "\udfff"}]})


def test_every_code_point_is_written_alike_by_both_encoders() -> None:
    """`canonical_bytes_strict(floats=False)` skips the scans for what only floats write differently: every
    string (any code point but a surrogate, each escaped on its own) is the standard encoder's text."""
    for start in range(0, 0x110000, 4096):
        text = "".join(chr(c) for c in range(start, start + 4096) if not 0xD800 <= c < 0xE000)
        value = {text[:8]: [text]}
        assert canonical_bytes_strict(value, str, floats=False) == _CANONICAL(value).encode(), hex(start)


def test_the_fields_left_out_are_the_wire_only_ones() -> None:
    """`_fingerprinted_fields` deletes the wire-only fields by name: they are `_WIRE_ONLY`, no more."""
    from synthgpt.model import _WIRE_ONLY

    assert {"api", "stream", "stream_options", "headers"} == _WIRE_ONLY
    req = built(ModelRequest, api="chat", stream=True, stream_options={"include_usage": True},
                headers=(("x-a", "1"),), messages=(built(Message, role="user", content="é"),))  # fmt: skip
    assert _fingerprinted_fields(req) == _dumped(req)
    assert json.loads(_dumped(req)).keys().isdisjoint(_WIRE_ONLY)
