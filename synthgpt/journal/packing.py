"""The packed form of a journal record's (request, output): what the journal keeps of an older call.

A request and its answer are about ten pydantic objects (~10 KB live: an object, a dict and a field set
each). Packed, each object is a JSON array of its class's number, its field set's number and its field
values, nested as the objects were, written by orjson into one bytes object (~700 B for a short chat call;
pickling the objects took more time and twice the bytes). Field names are not stored: a class's fields are
known here, and so is each field's type, which rebuilds what JSON does not keep (tuples). What a type does
not pin down is checked as it is packed: a dict of any values (`extra`, a tool's parameters, a schema) must
read back equal, floats must be finite. A record that fails a check, or holds a model of a class not listed
here or a validated dict (an error's frozen ones), is pickled instead (`pickled`). Packed bytes never leave
the process: the numbers of classes and field sets are this process's.

The Responses store keeps its conversations packed the same way (`pack_messages`; its module says what
that saves).
"""

from __future__ import annotations

import copyreg
import io
import math
import pickle
import threading
import typing
from collections.abc import Callable
from types import UnionType
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel

from .. import model as _model
from ..jsonutil import fitted
from ..model import Choice, Message, ModelOutput, ModelRequest, TextOut, Usage
from ..trusted import private_defaults

__all__ = [
    "pack", "pack_messages", "pack_output", "pickled", "unpack_messages", "unpack_output", "unpack_pair",
]  # fmt: skip

_HEAD = 2  # a packed object's array: class number, field set number, then the field values


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _holds_model(tp: Any) -> bool:
    return _is_model(tp) or any(_holds_model(a) for a in typing.get_args(tp))


def _shape(tp: Any) -> str:
    """What a field of type `tp` needs: `one` (a model, or a union of models, or None), `many` (a tuple
    of those), `tuple` (a tuple of plain values, or None), `tuples` (a tuple of tuples of plain values; of
    floats: `vectors`), `float`, `plain` (str, int, bool, a Literal, None) or `any` (checked when packed)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _shape(args[0])
    members = [m for m in args if m is not type(None)] if origin in (typing.Union, UnionType) else [tp]
    if _holds_model(tp):
        if all(_is_model(m) for m in members):
            return "one"
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis and _shape(args[0]) == "one":
            return "many"
        # a model inside a dict, a nested tuple, a union with plain values: say so when the models change
        raise TypeError(f"journal packing does not know how to hold {tp!r}")
    if all(m in (str, int, bool) or typing.get_origin(m) is typing.Literal for m in members):
        return "plain"
    if members == [float]:
        return "float"
    if len(members) == 1 and typing.get_origin(members[0]) is tuple:
        items = typing.get_args(members[0])
        inner = items[0] if len(items) == 2 and items[1] is Ellipsis else None
        if inner is not None and _shape(inner) == "plain":
            return "tuple"
        shapes = (
            {_shape(a) for a in typing.get_args(inner) if a is not Ellipsis} if inner is not None else set()
        )
        if inner is not None and typing.get_origin(inner) is tuple and shapes <= {"plain", "float"}:
            return "vectors" if "float" in shapes else "tuples"
    return "any"


class _Plan(NamedTuple):
    """How one model class packs."""

    kind: int
    names: tuple[str, ...]
    ones: tuple[int, ...]
    """Positions (in the packed array) of fields holding one model or None."""
    manys: tuple[int, ...]
    """Positions of fields holding a tuple of models."""
    tuples: tuple[tuple[int, Callable[[Any], Any]], ...]
    """Positions of tuple fields, with what turns their JSON arrays back into tuples."""
    checks: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None
    """Positions of `any` fields (must read back equal), `float` and `vectors` fields (must be finite:
    orjson writes NaN as null); None when there are none."""
    packable: bool
    """False for a class with validated fields (an error's frozen dicts): its records are pickled."""


def _as_tuple(value: Any) -> Any:
    return value if value is None else tuple(value)


def _as_tuples(value: Any) -> Any:
    return tuple(map(tuple, value))


_AS_TUPLES: dict[str, Callable[[Any], Any]] = {
    "tuple": _as_tuple,
    "tuples": _as_tuples,
    "vectors": _as_tuples,
}


def _plan(kind: int, cls: type[BaseModel]) -> _Plan:
    fields = cls.model_fields.values()
    at = [(_HEAD + i, _shape(f.annotation), f) for i, f in enumerate(fields)]

    def positions(shape: str) -> tuple[int, ...]:
        return tuple(i for i, s, _ in at if s == shape)

    checks = (positions("any"), positions("float"), positions("vectors"))
    return _Plan(
        kind=kind,
        names=tuple(cls.model_fields),
        ones=positions("one"),
        manys=positions("many"),
        tuples=tuple((i, _AS_TUPLES[s]) for i, s, _ in at if s in _AS_TUPLES),
        checks=checks if any(checks) else None,
        packable=not any(f.metadata and s == "any" for _, s, f in at),
    )


_MODELS: tuple[type[BaseModel], ...] = tuple(
    cls
    for cls in vars(_model).values()
    if isinstance(cls, type) and issubclass(cls, _model._Frozen) and cls.model_config.get("extra") == "forbid"
)
_PLANS: dict[type[BaseModel], _Plan] = {cls: _plan(i, cls) for i, cls in enumerate(_MODELS)}
_BY_KIND: tuple[tuple[type[BaseModel], _Plan], ...] = tuple((cls, _PLANS[cls]) for cls in _MODELS)

# Models that are a field's default itself (`ModelOutput.stream` of an answer without a stream plan, the
# default tool choice) are packed as their number here, and unpacked as that same object.
_DEFAULTS = [f.default for cls in _MODELS for f in cls.model_fields.values()]
_SHARED: tuple[BaseModel, ...] = tuple({id(d): d for d in _DEFAULTS if isinstance(d, BaseModel)}.values())
_SHARED_NUMBERS = {id(m): i for i, m in enumerate(_SHARED)}
_SHARED_KIND = -1

# Objects of some classes are often shared by many calls: a decoder's one `auto` tool choice, a rule's stream
# plan. The last few of them packed are kept with their packed text, by identity (held, so that an id stays
# its object's), and written as that text again.
_HELD_CLASSES = (_model.ToolChoice, _model.StreamPlan)
_HELD: dict[int, tuple[BaseModel, orjson.Fragment]] = {}
_HELD_MAX = 64

# What `_encode` reads of a class: its number, its field count, its checks, how its objects may be shared,
# and the last field set it packed with that set's number (one set compared costs a third of numbering one).
_NOT_SHARED, _SHARES_DEFAULT, _HELD_BY_ID = 0, 1, 2
_ENCODING: dict[type[BaseModel], list[Any]] = {
    cls: [plan.kind, len(plan.names) if plan.packable else -1, plan.checks,
          _HELD_BY_ID if cls in _HELD_CLASSES
          else _SHARES_DEFAULT if any(type(m) is cls for m in _SHARED) else _NOT_SHARED,
          (None, 0)]
    for cls, plan in _PLANS.items()
}  # fmt: skip

# Field sets by number: the sets in use are few (one per way a class gets built); past `_MAX_SETS`, a set's
# names are packed instead.
_SET_NUMBERS: dict[frozenset[str], int] = {}
_SETS: list[frozenset[str]] = []
_MAX_SETS = 4096
_NUMBERING = threading.Lock()


def _number(names: frozenset[str]) -> int | list[str]:
    with _NUMBERING:  # the journals of several engines may pack at once
        number = _SET_NUMBERS.get(names)
        if number is None:
            if len(_SETS) >= _MAX_SETS:
                return sorted(names)
            number = _SET_NUMBERS[names] = len(_SETS)
            _SETS.append(names)
        return number


class _Unpackable(Exception):
    """The object graph holds something the packed form cannot rebuild exactly."""


# The last few JSON texts of `any` values read back, by text: requests that repeat one (a schema, a tool's
# parameters) are compared with it instead of parsing it again. Small texts only, and few: what is held
# here stays in memory.
_READ_BACK: dict[bytes, Any] = {}
_READ_BACK_TEXTS = 8
_READ_BACK_SIZE = 4096


def _exact(value: Any) -> Any:
    """`value` as JSON to embed, when it reads back equal (no tuple, NaN or big int in it)."""
    if not value:
        return value
    blob = orjson.dumps(value)
    back = _READ_BACK.get(blob)
    if back is None:
        back = orjson.loads(blob)
        if len(blob) <= _READ_BACK_SIZE:
            if len(_READ_BACK) >= _READ_BACK_TEXTS:
                _READ_BACK.clear()
            _READ_BACK[blob] = back  # read only: compared, never handed out
    if back != value:
        raise _Unpackable
    return orjson.Fragment(blob)


def _encode(obj: Any, whole: bool = True) -> Any:
    """orjson's `default`: a model as an array of its class number, field set number and field values (the
    models among them come back here as orjson meets them); one held by identity as its text, unless not
    `whole` (the array, to pack it in `_held`)."""
    encoding = _ENCODING[type(obj)]  # exact classes (a subclass may add state): else a KeyError, and the
    kind, size, checks, by_id, last = encoding  # pair is pickled
    fields = obj.__dict__
    if len(fields) != size:
        raise _Unpackable
    if by_id:
        shared = _SHARED_NUMBERS.get(id(obj))
        if shared is not None:
            return (_SHARED_KIND, shared)
        if by_id == _HELD_BY_ID and whole:
            return _held(obj)
    names = obj.__pydantic_fields_set__
    if names == last[0]:
        number = last[1]
    else:
        key = frozenset(names)
        number = _SET_NUMBERS.get(key)
        if number is None:
            number = _number(key)
        encoding[4] = (key, number)  # one assignment: a thread reading it sees a set and its number
    # the field values in `__dict__` order, which is field order however pydantic or `built` made it
    items = [kind, number, *fields.values()]
    if checks is None:
        return items
    anys, floats, vectors = checks
    for i in anys:
        if items[i]:  # an empty dict (most `extra`s) is written as itself
            items[i] = _exact(items[i])
    for i in floats:
        if not math.isfinite(items[i]):
            raise _Unpackable
    for i in vectors:  # a sum is finite only when every number in it is
        # a float start: mypy reads `sum` of Any as an int, which compiled code (synthgpt.native) checks
        if items[i] and not math.isfinite(sum(map(sum, items[i]), 0.0)):
            raise _Unpackable
    return items


def _held(obj: BaseModel) -> orjson.Fragment:
    """The packed text of a model of `_HELD_CLASSES`, kept by identity."""
    held = _HELD.get(id(obj))
    if held is not None and held[0] is obj:
        return held[1]
    text = orjson.dumps(_encode(obj, False), default=_encode)
    fragment = orjson.Fragment(fitted(text))  # kept: sized to fit
    if len(_HELD) >= _HELD_MAX:
        _HELD.clear()
    _HELD[id(obj)] = (obj, fragment)
    return fragment


def _decode(items: list[Any]) -> Any:
    if items[0] == _SHARED_KIND:
        return _SHARED[items[1]]
    cls, plan = _BY_KIND[items[0]]
    for i in plan.ones:
        if items[i] is not None:
            items[i] = _decode(items[i])
    for i in plan.manys:
        items[i] = tuple(map(_decode, items[i]))
    for i, as_tuple in plan.tuples:
        items[i] = as_tuple(items[i])
    number = items[1]
    # what pydantic starts an object with (a request's cached fingerprint is taken again when asked)
    private = private_defaults(cls) if cls.__private_attributes__ else None
    return _made(cls, dict(zip(plan.names, items[_HEAD:], strict=True)),
                 set(_SETS[number] if type(number) is int else number), private)  # fmt: skip


def pack(request: ModelRequest, output: ModelOutput) -> bytes:
    """The packed bytes of a record's request and output; `pickled` when JSON cannot hold them exactly."""
    return _packed((request, output))


def unpack_pair(payload: bytes) -> tuple[ModelRequest, ModelOutput]:
    """The request and output `payload` packs (as JSON, or pickled by `pickled`)."""
    request, output = _unpacked(payload)
    return request, output


def pack_output(output: ModelOutput) -> bytes:
    """The packed bytes of a record's output alone, for a request the journal keeps as its `Wire`."""
    values = _text_answer(output)
    if values is not None:
        try:
            return orjson.dumps(values)[:-1]  # a slice: a copy sized to fit, as `_packed` keeps
        except TypeError:  # a str orjson refuses (a lone surrogate), an int beyond 64 bits
            pass
    return _packed((output,))


def unpack_output(payload: bytes) -> ModelOutput:
    """The output `payload` packs (`pack_output`)."""
    if payload[:1] != _PICKLED:
        items = orjson.loads(payload + b"]")
        if items[0] == _TEXT_ANSWER:  # (a model packs as an array: never equal to the number)
            return _text_answer_back(items)
        output: ModelOutput = _decode(items[0])
        return output
    back: ModelOutput = _unpacked(payload)[0]
    return back


# The common answer, one choice of text alone as `engine.drawing` assembles it (its field sets, the
# default stream plan, no error), is packed as one flat array of its values: no array and no `_encode`
# call per model (1.0 against 3.8 µs for a distinct chat answer's output). Any other output, or one of
# these whose values are not exactly str and int, packs the general way.
_TEXT_ANSWER = -2
_TEXT_SET = frozenset({"text"})
_STOP_SET = frozenset({"parts"})
_LENGTH_SET = frozenset({"parts", "finish_reason"})
_USAGE_SET = frozenset({"prompt_tokens", "completion_tokens", "reasoning_tokens"})
_OUTPUT_SET = frozenset(ModelOutput.model_fields)
_NO_STREAM = ModelOutput.model_fields["stream"].default


def _text_answer(output: ModelOutput) -> list[Any] | None:
    """[_TEXT_ANSWER, text, finish reason, prompt, completion and reasoning tokens, model, seed, created,
    rule] of a text answer as assembled; None for any other output."""
    if type(output) is not ModelOutput or output.__pydantic_fields_set__ != _OUTPUT_SET:
        return None
    fields = output.__dict__
    choices = fields["choices"]
    if (
        len(fields) != len(_OUTPUT_SET) or type(choices) is not tuple or len(choices) != 1
        or fields["stream"] is not _NO_STREAM or fields["error"] is not None or fields["embeddings"] != ()
    ):  # fmt: skip
        return None
    choice = choices[0]
    if type(choice) is not Choice:
        return None
    made = choice.__dict__
    parts, finish = made["parts"], made["finish_reason"]
    kept = choice.__pydantic_fields_set__
    if (
        type(parts) is not tuple or len(parts) != 1 or made["stop_sequence"] is not None
        or not ((finish == "stop" and kept == _STOP_SET) or (finish == "length" and kept == _LENGTH_SET))
    ):  # fmt: skip
        return None
    part, usage = parts[0], fields["usage"]
    if (
        type(part) is not TextOut or part.__pydantic_fields_set__ != _TEXT_SET
        or type(usage) is not Usage or usage.__pydantic_fields_set__ != _USAGE_SET
    ):  # fmt: skip
        return None
    text, counts = part.__dict__["text"], usage.__dict__
    values = [
        _TEXT_ANSWER, text, finish, counts["prompt_tokens"], counts["completion_tokens"],
        counts["reasoning_tokens"], fields["model"], fields["id_seed"], fields["created"], fields["rule"],
    ]  # fmt: skip
    if (
        part.__dict__["kind"] != "text" or counts["cached_tokens"] != 0 or type(text) is not str
        or type(values[6]) is not str or type(values[9]) is not str
        or not all(type(v) is int for v in values[3:6]) or type(values[7]) is not int
        or type(values[8]) is not int
    ):  # fmt: skip
        return None
    return values


def _text_answer_back(items: list[Any]) -> ModelOutput:
    """The output `_text_answer` gave `items` for: new objects, built as `engine.assemble` builds them."""
    _, text, finish, prompt, completion, reasoning, model, seed, created, rule = items
    part = _made(TextOut, {"kind": "text", "text": text}, set(_TEXT_SET))
    choice = _made(
        Choice, {"parts": (part,), "finish_reason": finish, "stop_sequence": None},
        set(_STOP_SET if finish == "stop" else _LENGTH_SET),
    )  # fmt: skip
    usage = _made(
        Usage, {"prompt_tokens": prompt, "completion_tokens": completion, "reasoning_tokens": reasoning,
                "cached_tokens": 0}, set(_USAGE_SET),
    )  # fmt: skip
    fields = {
        "choices": (choice,), "usage": usage, "stream": _NO_STREAM, "error": None, "model": model,
        "id_seed": seed, "created": created, "rule": rule, "embeddings": (),
    }  # fmt: skip
    output: ModelOutput = _made(ModelOutput, fields, set(_OUTPUT_SET))
    return output


def _made(
    cls: type[BaseModel], fields: dict[str, Any], names: set[str], private: dict[str, Any] | None = None
) -> Any:
    """An object of `cls` holding `fields` (in field order), `names` as its field set and `private`: the
    state pydantic's own `__setstate__` would set, without validation (what every read-back makes)."""
    obj = cls.__new__(cls)
    setattr_ = object.__setattr__
    setattr_(obj, "__dict__", fields)
    setattr_(obj, "__pydantic_fields_set__", names)
    setattr_(obj, "__pydantic_extra__", None)
    setattr_(obj, "__pydantic_private__", private)
    return obj


def pack_messages(messages: tuple[Message, ...]) -> bytes:
    """The packed bytes of a conversation, as `pack` packs a record's pair; `unpack_messages` reads them."""
    return _packed(messages)


def unpack_messages(payload: bytes) -> tuple[Message, ...]:
    """The messages `payload` packs (`pack_messages`)."""
    return tuple(_unpacked(payload))


def _packed(models: tuple[Any, ...]) -> bytes:
    """A tuple of models as one JSON array, or pickled when JSON cannot hold them exactly."""
    try:
        packed = orjson.dumps(models, default=_encode)
    except (_Unpackable, KeyError, TypeError):  # TypeError: orjson's word for a value it cannot write
        return pickled(models)
    # orjson's bytes keep the buffer it wrote them in (4 KB for a short call): a thousand records held that
    # way took 2.5 MB more than their packed size. A copy is sized to fit: a slice, the cheapest copy,
    # leaving out the closing bracket (`_unpacked` puts it back; still `[` first, never pickle's opcode).
    return packed[:-1]


def _unpacked(payload: bytes) -> Any:
    """The models `_packed` packed, in their order (a tuple pickled, a list as JSON)."""
    if payload[:1] == _PICKLED:
        return pickle.loads(payload)  # bytes this process pickled itself
    return list(map(_decode, orjson.loads(payload + b"]")))


# --- the pickled form: models of classes not listed, subclasses of builtins (a FrozenDict in an error)

_PICKLED = b"\x80"  # pickle's PROTO opcode starts every pickle; JSON never does


def _restore(
    kind: int, data: dict[str, Any], fields_set: set[str], private: dict[str, Any] | None
) -> BaseModel:
    """A model as pickled by `_reduce`."""
    made: BaseModel = _made(_MODELS[kind], data, fields_set, private)
    return made


def _reduce(obj: BaseModel) -> tuple[Any, ...]:
    # pydantic's default pickles each object's class by name (a module look-up per class per pickle) and a
    # four-key state dict; here a class is its number.
    state = (obj.__dict__, obj.__pydantic_fields_set__, obj.__pydantic_private__)
    return _restore, (_PLANS[type(obj)].kind, *state)


_DISPATCH: dict[type, Callable[[Any], Any]] = dict(copyreg.dispatch_table)
_DISPATCH.update((cls, _reduce) for cls in _MODELS)


def pickled(models: tuple[Any, ...]) -> bytes:
    """Models pickled (what JSON cannot hold exactly: `_packed`'s other form); raises what pickle raises (a
    lambda in `extra`)."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH  # exact types only: a subclass of a model pickles as usual
    pickler.dump(models)
    return buf.getvalue()
