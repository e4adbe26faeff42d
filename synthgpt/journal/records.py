"""A call record's JSON form: the SQLite journal's rows, the JSONL export, the Redis journal's entries."""

from __future__ import annotations

import json
import math
import operator
import threading
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ..codec.named import request_from_row, wire_row
from ..frozen import FrozenDict, FrozenList
from ..jsonutil import sorted_bytes_strict
from ..model import (
    _PLAIN_MODELS,
    Choice,
    ErrorSpec,
    Fault,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    ResponseSchema,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
    _dumped_fields,
)
from .memory import CallRecord, Delivery, wire_of

__all__ = ["record_from_dict", "record_json", "record_to_dict"]


def record_to_dict(record: CallRecord) -> dict[str, Any]:
    """A JSON-ready form of a record; `seed` is a string because it is a 64-bit unsigned integer,
    which JavaScript and SQLite integers cannot hold exactly."""
    data = _head(record, dict(record.captures))
    data["request"] = record.request.model_dump(mode="json", by_alias=True)
    data["output"] = _output_dict(record.output) or record.output.model_dump(mode="json")
    return data


def _head(record: CallRecord, captures: Any) -> dict[str, Any]:
    """A record's own fields, in `record_to_dict`'s order, before its request and output."""
    return {
        "index": record.index,
        "api": record.api,
        "model": record.model,
        "rule": record.rule,
        "seed": str(record.seed),
        "at": record.at,
        "duration_ms": record.duration_ms,
        "captures": captures,
        "outcome": record.outcome,
        "frames_sent": record.frames_sent,
    }


def record_json(record: CallRecord) -> str:
    """The SQLite journal's row text of `record` (and the Redis journal's entry): `record_to_dict(record)`
    written by orjson with sorted keys, or by the standard encoder (sorted keys, ASCII) where orjson refuses
    it (an int beyond 64 bits in a request's extra fields, a lone surrogate). A request the pipeline
    decoded from a wire, by a codec `codec.named` knows, is written as that wire (`wire` in place of
    `request`), which `record_from_dict` decodes again.

    Written straight from the record's models when `_written` can vouch for the text (~61k instructions
    for a chat record against ~161k for the two pydantic dumps and the encoding of their result), else as
    described. One difference: an `orjson.Fragment` in a request's values is written as its text, where
    pydantic's dump raised (no request holds one but by its caller's choice)."""
    text = _written(record)
    return text.decode() if text is not None else _sorted_json(record_to_dict(record))


def _sorted_json(data: dict[str, Any]) -> str:
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # beyond orjson (an integer past 64 bits in a request's extra fields, a lone surrogate)
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _written(record: CallRecord) -> bytes | None:
    """`record_json`'s text (UTF-8) written by orjson from the models' fields as they are, or None when
    that text might not be the dumps' (see `_DUMPED`). A request decoded from a wire by a codec with a
    name is written as that wire (`codec.named.wire_row`): 4.0 against 4.3 µs for a short chat call,
    16.5 against 26.5 for an agent's 60 messages."""
    data = _head(record, record.captures)
    request = record.request
    wire = wire_of(request)
    kept = None if wire is None else wire_row(wire)
    if kept is None:
        data["request"] = request
    else:
        data["wire"] = kept
    data["output"] = record.output
    return sorted_bytes_strict(data, _dumped)


# --- what `model_dump(mode="json")` gives for each model, as orjson writes it
#
# With keys sorted, a dict's order does not matter: a model is its `__dict__` (its fields, in any order)
# unless it declares something more. The dumps keep every value of a field's type as it is (a tuple as
# a list, which orjson writes alike), but for these, handled below: a float field holding an int (a
# StreamPlan's defaults are the int 0) is dumped as a float, NaN and infinities as null (orjson writes
# null for them too); `StreamPlan` and `Choice` leave out unset fields (their model serializers);
# `ResponseSchema.schema_` is `schema` by alias (the request is dumped by alias, the output not).
# Frozen dicts and lists (an error's) are dumped as dicts and lists. Anything else orjson does not write
# as a built-in JSON type (a subclass of a model or of a built-in type, a date, bytes, a set) raises
# TypeError here (a KeyError raised in `default` reaches the caller as orjson's TypeError), and the
# dumps' text is written instead. Values of a field's type are what validation, or `model.built` and
# `engine.assemble` (whose callers check the types), leave in a model.


def _choice(choice: Choice) -> dict[str, Any]:
    fields: dict[str, Any] = choice.__dict__
    if fields["stop_sequence"] is None:
        return {"parts": fields["parts"], "finish_reason": fields["finish_reason"]}
    return fields


_FLOAT_FIELDS = ("first_delay_ms", "interval_ms", "jitter_ms")
_PINNED = ("deltas", "id", "created")


def _plan_dict(plan: StreamPlan) -> dict[str, Any]:
    """`plan.model_dump(mode="json")`, or TypeError for a value it might dump otherwise."""
    fields = plan.__dict__.copy()
    for name in _FLOAT_FIELDS:  # an int is dumped as a float, NaN and infinities as None
        value = fields[name]
        if type(value) is int:
            fields[name] = float(value)
        elif type(value) is not float:
            raise TypeError(name)
        elif not math.isfinite(value):
            fields[name] = None
    faults = fields["faults"]
    if faults:
        if not _FAULT.issuperset(map(type, faults)):
            raise TypeError("faults")
        fields["faults"] = [fault.__dict__.copy() for fault in faults]
    else:
        fields["faults"] = []
    for name in _PINNED:
        if fields[name] is None:
            del fields[name]
    if "deltas" in fields:
        fields["deltas"] = list(fields["deltas"])
    return fields


_FAULT = frozenset({Fault})
_Kept = tuple[StreamPlan, orjson.Fragment, dict[str, Any]]
_PLANS_KEPT: dict[int, _Kept] = {}
_PLANS_KEPT_MAX = 256
_PLANS_KEPT_LOCK = threading.Lock()


def _kept_plan(plan: StreamPlan) -> _Kept:
    """A plan's dump and its text, kept by identity: an answer's plan is its rule's (or the default), the
    same object for every call it answers, and a frozen model (which the entry holds, so that its id
    stays its own). TypeError for a plan `_plan_dict` refuses."""
    kept = _PLANS_KEPT.get(id(plan))
    if kept is not None:
        return kept
    dumped = _plan_dict(plan)
    text = sorted_bytes_strict(dumped, _dumped)  # `_dumped` refuses a value of a subclass (in `deltas`)
    if text is None:
        raise TypeError("StreamPlan")
    kept = (plan, orjson.Fragment(text), dumped)
    with _PLANS_KEPT_LOCK:
        if len(_PLANS_KEPT) >= _PLANS_KEPT_MAX:
            _PLANS_KEPT.clear()
        _PLANS_KEPT[id(plan)] = kept
    return kept


def _plan(plan: StreamPlan) -> orjson.Fragment:
    return _kept_plan(plan)[1]


def _output_dict(output: ModelOutput) -> dict[str, Any] | None:
    """`output.model_dump(mode="json")` built from the fields, a fresh dict with its keys in the dump's
    order, for an answer without an error or embeddings (every chat answer): the dump calls its choices'
    and plan's model serializers, Python functions (`record_to_dict` of a chat record: ~79k instructions
    instead of ~124k). None for any other answer, or a model of a subclass, or a plan `_plan_dict`
    refuses: then the dump is taken."""
    if type(output) is not ModelOutput:
        return None
    fields: dict[str, Any] = output.__dict__
    usage, plan = fields["usage"], fields["stream"]
    if fields["error"] is not None or fields["embeddings"] or type(usage) is not Usage:
        return None
    if type(plan) is not StreamPlan:
        return None
    try:
        stream = _kept_plan(plan)[2].copy()
    except TypeError:
        return None
    if stream["faults"]:
        stream["faults"] = [fault.copy() for fault in stream["faults"]]
    else:
        stream["faults"] = []
    if "deltas" in stream:
        stream["deltas"] = stream["deltas"].copy()
    choices = []
    for choice in fields["choices"]:
        if type(choice) is not Choice:
            return None
        held = choice.__dict__
        parts = held["parts"]
        if not _PARTS.issuperset(map(type, parts)):
            return None
        dumped = {"parts": [part.__dict__.copy() for part in parts], "finish_reason": held["finish_reason"]}
        if held["stop_sequence"] is not None:
            dumped["stop_sequence"] = held["stop_sequence"]
        choices.append(dumped)
    return {**fields, "choices": choices, "usage": usage.__dict__.copy(), "stream": stream, "embeddings": []}


_PARTS = frozenset({TextOut, ToolCallPart, ReasoningPart})


def _output(output: ModelOutput) -> dict[str, Any]:
    fields: dict[str, Any] = output.__dict__
    for vector in fields["embeddings"]:  # a float field holding an int is dumped as a float
        if type(vector) is not tuple or not _FLOAT.issuperset(map(type, vector)):
            raise TypeError("embeddings")
    return fields


_FLOAT = frozenset({float})


def _error(error: ErrorSpec) -> dict[str, Any]:
    fields: dict[str, Any] = error.__dict__
    if fields["body"] is None:
        return fields
    # a model in the body's values is dumped by its field names (the output is dumped without aliases)
    body = sorted_bytes_strict(fields["body"], _dumped_unaliased)
    if body is None:
        raise TypeError("body")
    return {**fields, "body": orjson.Fragment(body)}


_fields = operator.attrgetter("__dict__")
_UNALIASED: dict[type, Callable[[Any], Any]] = {
    **dict.fromkeys(_PLAIN_MODELS, _fields),
    **dict.fromkeys((ModelRequest, TextOut, ToolCallPart, ReasoningPart, Usage, Fault), _fields),
    ModelOutput: _output,
    Choice: _choice,
    StreamPlan: _plan,
    ErrorSpec: _error,
    FrozenDict: dict,
    FrozenList: list,
}
_DUMPED: dict[type, Callable[[Any], Any]] = {**_UNALIASED, ResponseSchema: _dumped_fields}


def _dumped(obj: Any) -> Any:
    """orjson's `default` for a record: what the dump gives for `obj`, to be written in its place."""
    return _DUMPED[type(obj)](obj)


def _dumped_unaliased(obj: Any) -> Any:
    return _UNALIASED[type(obj)](obj)


def record_from_dict(data: Mapping[str, Any]) -> CallRecord:
    """The record `record_to_dict` (or a journal's row) holds; a row's request kept as its wire is decoded
    again (ValueError if it no longer decodes: a row written by another version of synthgpt)."""
    wire = data.get("wire")
    request = ModelRequest.model_validate(data["request"]) if wire is None else request_from_row(wire)
    return CallRecord(
        index=int(data["index"]),
        request=request,
        rule=str(data["rule"]),
        seed=int(data["seed"]),
        output=ModelOutput.model_validate(data["output"]),
        at=float(data["at"]),
        duration_ms=float(data.get("duration_ms", 0.0)),
        captures=dict(data.get("captures", {})),
        delivery=Delivery(data.get("outcome", "done"), data.get("frames_sent")),
    )

