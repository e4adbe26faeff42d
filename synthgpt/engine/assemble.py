"""The output models of a common answer, assembled from values the engine made itself, without validation.

Validating `TextOut`, `Choice`, `Usage` and `ModelOutput` for every answer cost ~6 µs of a chat answer, to
check values whose types the engine already knows: an exact `str` drawn, ints counted, a rule's validated
`StreamPlan`. Each function here leaves the state pydantic's validation would (the fields in field order,
the same fields set, no extra or private values), and is used only where its caller has checked the types
(`drawing.draw_output`): anything else (a str subclass, a dict where a plan goes, embeddings) still goes
through validation. `tests/engine/test_assemble.py` compares each with the validated model.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from ..model import Choice, ErrorSpec, ModelOutput, ReasoningPart, StreamPlan, TextOut, ToolCallPart, Usage

__all__ = ["cut_choice", "output", "text_choice", "text_out", "usage", "with_text"]

_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__
# BaseModel's own slots, set through their descriptors: `object.__setattr__` looks each name up along the
# model's MRO first (~30 % of assembling a model went there)
_SLOTS = vars(BaseModel)
_set_dict = _SLOTS["__dict__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


def _assembled(cls: type[_M], data: dict[str, Any], given: set[str]) -> _M:
    obj: _M = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, given)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def text_out(text: str) -> TextOut:
    """`TextOut(text=text)` for an exact `str` (validation makes a subclass a plain str)."""
    return _assembled(TextOut, {"kind": "text", "text": text}, {"text"})


def text_choice(text: str) -> Choice:
    """`Choice(parts=(TextOut(text=text),))` for an exact `str`."""
    return _assembled(Choice, {"parts": (text_out(text),), "finish_reason": "stop", "stop_sequence": None},
                      {"parts"})  # fmt: skip


def usage(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int) -> Usage:
    """`Usage(prompt_tokens=…, completion_tokens=…, reasoning_tokens=…)` for exact ints."""
    return _assembled(
        Usage,
        {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
         "reasoning_tokens": reasoning_tokens, "cached_tokens": 0},
        {"prompt_tokens", "completion_tokens", "reasoning_tokens"},
    )  # fmt: skip


_PARTS = (TextOut, ToolCallPart, ReasoningPart)


def with_text(part: TextOut | ReasoningPart, text: str) -> TextOut | ReasoningPart:
    """`part.model_copy(update={"text": text})` for a part of exactly TextOut or ReasoningPart and an exact
    `str` (the caller checks both)."""
    data = part.__dict__.copy()
    data["text"] = text
    return _assembled(type(part), data, part.__pydantic_fields_set__ | {"text"})


def cut_choice(parts: tuple[Any, ...]) -> Choice:
    """`Choice(parts=parts, finish_reason="length")`: an answer cut at its token limit. Parts of exactly the
    output part types are kept by validation as they are, so are they here; any other goes through it."""
    for part in parts:
        if type(part) not in _PARTS:
            return Choice(parts=parts, finish_reason="length")
    return _assembled(
        Choice, {"parts": parts, "finish_reason": "length", "stop_sequence": None}, {"parts", "finish_reason"}
    )


_OUTPUT_FIELDS = frozenset(ModelOutput.model_fields)


def output(
    choices: tuple[Choice, ...],
    usage: Usage,
    stream: StreamPlan,
    error: ErrorSpec | None,
    model: str,
    id_seed: int,
    created: int,
    rule: str,
) -> ModelOutput:
    """`ModelOutput(…)` with every field given and no embeddings, for values of exactly the fields' types
    (a `StreamPlan`, an `ErrorSpec` or None, a str model and rule name, int seed and time)."""
    return _assembled(
        ModelOutput,
        {"choices": choices, "usage": usage, "stream": stream, "error": error, "model": model,
         "id_seed": id_seed, "created": created, "rule": rule, "embeddings": ()},
        set(_OUTPUT_FIELDS),
    )  # fmt: skip


def _check_layouts() -> None:
    """The field layouts written out above are the models' own: a field added or moved fails at import."""
    expected: dict[type[BaseModel], tuple[str, ...]] = {
        TextOut: ("kind", "text"),
        ReasoningPart: ("kind", "text", "signature"),
        Choice: ("parts", "finish_reason", "stop_sequence"),
        Usage: ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens"),
        ModelOutput: (
            "choices", "usage", "stream", "error", "model", "id_seed", "created", "rule", "embeddings",
        ),
    }
    for cls, names in expected.items():
        if tuple(cls.model_fields) != names or cls.__private_attributes__:
            raise AssertionError(f"engine.assemble: {cls.__name__}'s fields changed; update its layout")


_check_layouts()
