"""`pipeline.Answered` sets its fields through their slots (a faster `__init__` than the one a frozen
dataclass generates): the same signature, the same fields, still frozen."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from synthgpt.pipeline import Answered


def _generated() -> type:
    """A frozen slots dataclass with Answered's fields and the `__init__` dataclasses generates."""
    spec = [(f.name, f.type, f) for f in dataclasses.fields(Answered)]
    made: type = dataclasses.make_dataclass("Answered", spec, frozen=True, slots=True)
    return made


def test_the_signature_is_the_generated_one() -> None:
    ours, theirs = inspect.signature(Answered), inspect.signature(_generated())
    assert list(ours.parameters) == list(theirs.parameters)
    for name, param in ours.parameters.items():
        other = theirs.parameters[name]
        assert param.kind == other.kind, name
        if other.default is not dataclasses.MISSING and name != "error_headers":
            assert param.default == other.default, name


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"body": b"{}", "payload": {}, "replayable": True},
        {"first_delay_ms": 5.0, "error_headers": {"retry-after": "1"}, "failure": "x",
         "exception": ValueError()},
    ],
)
def test_fields_are_what_the_generated_init_sets(kwargs: dict[str, Any]) -> None:
    ours, theirs = Answered(200, {"a": "b"}, **kwargs), _generated()(200, {"a": "b"}, **kwargs)
    assert [getattr(ours, f.name) for f in dataclasses.fields(Answered)] == [
        getattr(theirs, f.name) for f in dataclasses.fields(theirs)
    ]
    assert repr(ours) == repr(theirs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.status = 500  # type: ignore[misc]
    assert dataclasses.replace(ours, status=404).status == 404


def test_each_answer_gets_its_own_error_headers() -> None:
    a, b = Answered(200, {}), Answered(200, {})
    assert a.error_headers == {} and a.error_headers is not b.error_headers
    assert Answered(200, {}, error_headers={"x": "1"}).error_headers == {"x": "1"}
