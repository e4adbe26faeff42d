"""The wire decoders build requests without pydantic validation (`model.built`): proof that they build
exactly what the validated construction built, and refuse exactly what it refused.

`decode_corpus.json` was written by the validated decoders (before issue 13's change) for 7,168 bodies
over every API: valid requests, each value of them replaced by a hostile one or deleted, raw bodies that
are not JSON objects. Each body must decode to the same request (every field, by alias, and the fields
set) or be refused with the same status and the same error body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, PrivateAttr, ValidationError

from synthgpt import MockGPT
from synthgpt.model import Message, ModelRequest, TextPart, _Frozen, built
from tests.codec import decode_corpus


@pytest.fixture(scope="module")
def decoded() -> list[tuple[list[Any], list[Any], ModelRequest | None]]:
    expected = json.loads(decode_corpus.EXPECTED.read_text())
    mock, codecs = MockGPT(seed=0), decode_corpus._codecs()
    out = []
    for row, (route, raw) in zip(expected, decode_corpus.corpus(), strict=True):
        got, req = decode_corpus.outcome(mock, codecs, route, raw)
        out.append((row, [route, row[1], *got], req))
    return out


def test_every_body_decodes_or_is_refused_as_before(decoded: list[tuple[list[Any], list[Any], Any]]) -> None:
    differ = [(want, got) for want, got, _ in decoded if want != got]
    assert not differ, f"{len(differ)} of {len(decoded)} bodies differ, first: {differ[0]}"
    assert len(decoded) > 5000 and sum(1 for want, _, _ in decoded if want[2] == 200) > 1000
    # no hostile body crashes a decoder (48 rows moved from 500, or a silent 200, to a 400 naming the field:
    # test_hostile_decoding.py)
    assert not [got for _, got, _ in decoded if got[2] >= 500]


def _same_types(a: Any, b: Any, where: str) -> None:
    """`a` and `b` hold the same values with the same container and model types at every depth."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, BaseModel):
        assert a.__dict__.keys() == b.__dict__.keys(), where
        for k in a.__dict__:
            _same_types(a.__dict__[k], b.__dict__[k], f"{where}.{k}")
    elif isinstance(a, dict):
        for k in a:
            _same_types(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list | tuple):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same_types(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def test_built_requests_are_what_validation_makes_of_them(decoded: list[tuple[Any, Any, Any]]) -> None:
    """Each decoded request, validated again from its own dump, is the same request, type for type: no
    field holds a list where a tuple belongs, a dict where a model belongs, or a value out of range."""
    requests = [req for _, _, req in decoded if req is not None]
    assert len(requests) > 1000
    for req in requests:
        again = ModelRequest.model_validate(req.model_dump(by_alias=True))
        assert again == req
        _same_types(req, again, "request")
        assert again.fingerprint() == req.fingerprint()


NOTHING_CACHED = {
    "_fingerprint": None, "_call_names": None, "_tools_by_name": None, "_current_turn": None, "_wire": None,
    "_interned": False,
}  # fmt: skip
"""A request's private attributes before anything is asked of it: its fingerprint, its tool calls' names,
its tools by name, its current turn (each worked out once, when first needed), the wire it was decoded
from (the pipeline's to set), and whether its decoder took its parts from earlier requests (the decoder's
to set)."""


def test_a_built_request_is_frozen_and_caches_its_fingerprint_like_a_validated_one() -> None:
    req = built(ModelRequest, model="gpt-4o", messages=(built(Message, role="user", content="hi"),))
    validated = ModelRequest(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert req == validated and req.model_fields_set == validated.model_fields_set == {"model", "messages"}
    assert req.__pydantic_private__ == {**NOTHING_CACHED, "_fingerprint": None}
    assert req.fingerprint() == validated.fingerprint()
    assert req.__pydantic_private__ == {**NOTHING_CACHED, "_fingerprint": validated.fingerprint()}
    assert req == validated  # the cached fingerprint is not a field
    with pytest.raises(ValidationError, match="frozen"):
        req.model = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        req.messages[0].content = "changed"  # type: ignore[misc]
    # defaults made by a factory are fresh for each request, never shared
    assert built(ModelRequest).extra is not built(ModelRequest).extra
    assert built(TextPart, text="a") == TextPart(text="a")


def test_built_sets_private_attributes_as_pydantic_does() -> None:
    class Cached(_Frozen):
        a: int = 1
        _fresh: list[int] = PrivateAttr(default_factory=list)
        _plain: int | None = PrivateAttr(default=None)
        _unset: int = PrivateAttr()

    one, two = built(Cached), built(Cached)
    assert one.__pydantic_private__ == Cached().__pydantic_private__ == {"_fresh": [], "_plain": None}
    assert one._fresh is not two._fresh  # a factory's default is made per instance


def test_built_leaves_every_slot_as_validation_does() -> None:
    """`built` sets pydantic's four slots through their descriptors (not `object.__setattr__`): the same
    state, slot for slot, as `model_validate` leaves, whichever fields are given."""
    from synthgpt.model import ToolCall, ToolChoice

    cases: list[tuple[type[BaseModel], dict[str, Any], dict[str, Any]]] = [
        (Message, {"role": "user", "content": "héllo 😀"}, {}),
        (Message, {"role": "assistant", "content": "", "tool_calls": ()}, {"tool_calls": []}),
        (ToolCall, {"id": "c1", "name": "f", "arguments": '{"a": 1}'}, {}),
        (ToolChoice, {"mode": "named", "name": "f"}, {}),
        (ModelRequest, {"model": "m", "extra": {"k": [1, "ü"]}, "n": 2}, {}),
        (ModelRequest, {}, {}),
    ]
    for cls, fields, as_json in cases:
        got, want = built(cls, **fields), cls.model_validate({**fields, **as_json})
        if isinstance(got, ModelRequest):  # validation takes the fingerprint, `built` leaves it for later
            assert got.__pydantic_private__ == NOTHING_CACHED
            got.fingerprint()
        for slot in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
            assert getattr(got, slot) == getattr(want, slot), (cls.__name__, slot)
            assert type(getattr(got, slot)) is type(getattr(want, slot)), (cls.__name__, slot)
        assert list(got.__dict__) == list(want.__dict__)  # field order too
