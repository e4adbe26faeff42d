"""Trusted construction: frozen pydantic models built from values already checked, without validation.

The wire decoders check every value they read, in their API's wording, and build the request from what
they checked; the engine assembles an answer's models from values it made. `built` gives the state
`model_validate` would leave (fields set included) at a fraction of its cost. Compiled (`synthgpt.native`):
an agent's request builds a hundred models or more (its messages, their tool calls, its tools).
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from .gil import let_go

__all__ = ["built", "private_defaults"]


_M = TypeVar("_M", bound=BaseModel)
_Layout = tuple[dict[str, Any], tuple[tuple[str, Any], ...], dict[str, Any] | None]
_LAYOUTS: dict[type[BaseModel], _Layout] = {}
_PRIVATE_FACTORIES: set[type[BaseModel]] = set()
_new = object.__new__
_LET_GO_EVERY: Final = 4096
"""Models built between two `gil.let_go`s (~5 ms): compiled, a decoder building 100,000 messages held the
GIL for ~200 ms in the worker thread while the event loop waited to answer /healthz."""


class _Count:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


_BUILT = _Count()


def _layout(cls: type[BaseModel]) -> _Layout:
    """The plain defaults of `cls`'s fields, in field order (those with a factory hold None), the (name,
    factory) pairs that make a fresh default each time, and the private attributes' defaults (None: none)."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        fields = cls.model_fields
        defaults = {name: None if f.default_factory else f.default for name, f in fields.items()}
        factories = tuple((name, f.default_factory) for name, f in fields.items() if f.default_factory)
        private = private_defaults(cls) or None
        if any(p.default_factory is not None for p in cls.__private_attributes__.values()):
            _PRIVATE_FACTORIES.add(cls)  # a fresh default per instance, never one shared
        layout = _LAYOUTS[cls] = (defaults, factories, private)
    return layout


def private_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """The private attributes' defaults, as pydantic's `__init__` sets them (one without a default: unset)."""
    out: dict[str, Any] = {}
    for name, attr in cls.__private_attributes__.items():
        value = attr.default_factory() if attr.default_factory is not None else attr.default  # type: ignore[call-arg]
        if value is not PydanticUndefined:
            out[name] = value
    return out


def built(cls: type[_M], /, **fields: Any) -> _M:
    """An instance of the frozen model `cls` holding `fields` as given, the others at their defaults,
    without pydantic validation: the state `model_validate` would leave, fields set included.

    For the wire decoders, which check every value they read once, in their API's wording, and build the
    request from what they checked (validating it again through pydantic cost 50-80 µs a request). The
    caller guarantees what validation would: each value of its field's type (tuples for tuple fields,
    models for model fields, `schema_` by name) and, for a ModelRequest, strings that are Unicode text
    (JSON parsed from UTF-8 holds no lone surrogate). `tests/codec/test_decode_equivalence.py` proves the
    decoders' requests equal the validated ones. Users' `ModelRequest(...)` and rule files still validate.
    """
    defaults, factories, private = _LAYOUTS.get(cls) or _layout(cls)
    data = defaults.copy()  # in field order; updating a key keeps its place
    for name, factory in factories:
        if name not in fields:
            data[name] = factory()
    data.update(fields)
    obj = _new(cls)  # pydantic models define no __new__: `cls.__new__` is this, found after a walk of the MRO
    _set_dict(obj, data)
    _set_fields_set(obj, set(fields))
    _set_extra(obj, None)
    if private is not None:
        private = private.copy() if cls not in _PRIVATE_FACTORIES else private_defaults(cls)
    _set_private(obj, private)
    count = _BUILT
    count.n += 1
    if count.n >= _LET_GO_EVERY:  # (two threads may both count one: a let-go more or less, nothing else)
        count.n = 0
        let_go()
    return obj


_SLOTS: Final[Any] = BaseModel.__dict__  # a mappingproxy: compiled, a `dict` annotation would refuse it
_set_dict: Final[Any] = _SLOTS["__dict__"].__set__
_set_fields_set: Final[Any] = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra: Final[Any] = _SLOTS["__pydantic_extra__"].__set__
_set_private: Final[Any] = _SLOTS["__pydantic_private__"].__set__
"""The setters of `BaseModel`'s four slots, what `object.__setattr__(obj, name, value)` ends up calling for
them: called directly they spare its type lookup and its check that no class between overrides it (~2k of
a 9k-instruction `built`; `BaseModel.__setattr__`, the frozen check, is bypassed either way)."""
