"""`engine.assemble` builds the common answer's models without validation: each must be the model validation
gives, state for state, and `draw_output` must take that path only for values validation would keep."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from synthgpt import MockGPT, ModelRequest, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.engine.assemble import cut_choice, output, text_choice, usage, with_text
from synthgpt.model import (
    Choice,
    ErrorSpec,
    ModelOutput,
    ReasoningPart,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
)
from synthgpt.seeding import derive_seed, seed_after, seed_prefix

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True)
texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200)


def state(model: BaseModel) -> tuple[Any, ...]:
    """Everything validation leaves on an instance, field order included, nested models alike."""
    fields = [(k, _state_of(v)) for k, v in model.__dict__.items()]
    return (type(model), fields, model.__pydantic_fields_set__, model.__pydantic_extra__,
            model.__pydantic_private__)  # fmt: skip


def _state_of(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return state(value)
    if isinstance(value, tuple):
        return tuple(_state_of(x) for x in value)
    return value


def same(fast: BaseModel, validated: BaseModel) -> None:
    assert state(fast) == state(validated)
    assert fast == validated
    assert fast.model_dump_json() == validated.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert state(pickle.loads(pickle.dumps(fast))) == state(validated)


@SETTINGS
@given(texts)
def test_text_choice_is_the_validated_choice(text: str) -> None:
    same(text_choice(text), Choice(parts=(TextOut(text=text),)))


@SETTINGS
@given(texts, texts, st.booleans())
def test_a_part_with_other_text_is_the_copy_pydantic_makes(text: str, other: str, reasoning: bool) -> None:
    part = ReasoningPart(text=text, signature="sig") if reasoning else TextOut(kind="text", text=text)
    same(with_text(part, other), part.model_copy(update={"text": other}))
    same(with_text(text_choice(text).parts[0], other), TextOut(text=text).model_copy(update={"text": other}))


def test_a_cut_choice_is_the_validated_choice() -> None:
    parts = (ReasoningPart(text="r"), text_choice("t").parts[0], ToolCallPart(id="c", name="f"))
    same(cut_choice(parts), Choice(parts=parts, finish_reason="length"))
    same(cut_choice(()), Choice(parts=(), finish_reason="length"))


@SETTINGS
@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40))
def test_usage_is_the_validated_usage(prompt: int, completion: int, reasoning: int) -> None:
    same(usage(prompt, completion, reasoning),
         Usage(prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=reasoning))  # fmt: skip


@pytest.mark.parametrize(
    "stream, error",
    [
        (StreamPlan(), None),
        (StreamPlan(interval_ms=5, created=7, deltas=("a", "b")), None),
        (StreamPlan(), ErrorSpec(status=429, message="slow down", headers={"retry-after": "1"})),
    ],
)
def test_output_is_the_validated_output(stream: StreamPlan, error: ErrorSpec | None) -> None:
    choices = (text_choice("hi"), Choice(parts=(TextOut(text="x"),), finish_reason="length"))
    counted = usage(3, 4, 0)
    fields = {"stream": stream, "error": error, "model": "gpt-4o", "id_seed": 2**63 + 5, "created": 17,
              "rule": "r"}  # fmt: skip
    fast = output(choices, counted, stream, error, "gpt-4o", 2**63 + 5, 17, "r")
    same(fast, ModelOutput(choices=choices, usage=counted, embeddings=(), **fields))


class _Str(str):
    pass


def _answer(value: Any, **rule: Any) -> ModelOutput:
    asked = rule.pop("request", {})
    answer = value if isinstance(value, g.Generator) else g.just(None).map(lambda _: value)
    mock = MockGPT([Rule("r", m.always(), answer, **rule)])
    return mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], **asked})


def _validating(monkeypatch: pytest.MonkeyPatch) -> None:
    """`draw_output` with the assembling functions replaced by the validated constructors they stand for."""
    from synthgpt.engine import drawing, shaping

    monkeypatch.setattr(drawing, "text_choice", lambda text: Choice(parts=(TextOut(text=text),)))
    monkeypatch.setattr(shaping, "usage", lambda p, c, r: Usage(prompt_tokens=p, completion_tokens=c,
                                                                reasoning_tokens=r))  # fmt: skip
    monkeypatch.setattr(shaping, "with_text", lambda part, text: part.model_copy(update={"text": text}))
    monkeypatch.setattr(shaping, "cut_choice", lambda parts: Choice(parts=parts, finish_reason="length"))
    monkeypatch.setattr(drawing, "output", lambda choices, usage, stream, error, model, seed, created, rule:
                        ModelOutput(choices=choices, usage=usage, stream=stream, error=error, model=model,
                                    id_seed=seed, created=created, rule=rule, embeddings=()))  # fmt: skip


@pytest.mark.parametrize(
    "value, rule",
    [
        ("plain text", {}),
        ("", {}),
        ("paced", {"stream": {"interval_ms": 3, "created": 9}}),
        ("spelled", {"stream": {"deltas": ["spe", "lled"]}}),
        ("refused", {"error": {"status": 503, "message": "down"}}),
        (_Str("a str subclass"), {}),
        ({"a": 1}, {}),
        (g.Answer("answer", stream=StreamPlan(chunk_chars=2)), {}),
        (g.Answer("cut short", cut_tokens=1), {}),
        (g.Answer("fixed", usage={"completion_tokens": 99}), {}),
        ("a long answer cut at its limit", {"request": {"max_output_tokens": 3}}),
        ("cut to nothing", {"request": {"max_output_tokens": 1, "extra": {"stop": ["cut"]}}}),
        ("thinks, then is cut", {"reasoning": True, "request": {"max_output_tokens": 40}}),
        (g.reply("text and a call", tool_calls=[g.tool_call("f", {"a": "b" * 50})]),
         {"request": {"max_output_tokens": 12}}),
    ],
)
def test_draw_output_is_the_validated_output(
    value: Any, rule: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever path `draw_output` takes, the answer is the one validation builds."""
    fast = _answer(value, **rule)
    _validating(monkeypatch)
    validated = _answer(value, **rule)
    assert state(fast) == state(validated)
    assert all(type(p.text) is str for c in fast.choices for p in c.parts if not isinstance(p, ToolCallPart))


def test_an_answer_seed_is_derive_seed_of_seed_rule_and_fingerprint() -> None:
    mock = MockGPT(seed=11)
    req = ModelRequest.from_dict({"model": "m", "messages": [{"role": "user", "content": "hello there"}]})
    record = mock.resolve(req).record
    assert record.seed == derive_seed(11, record.rule, req.fingerprint())
    mock.seed = 12  # the engine's seed is public: answers follow a new one
    assert mock.resolve(req).record.seed == derive_seed(12, record.rule, req.fingerprint())


@SETTINGS
@given(st.lists(st.one_of(st.integers(), texts, st.binary()), max_size=4), st.one_of(st.integers(), texts))
def test_seed_after_a_prefix_is_derive_seed(first: list[Any], last: Any) -> None:
    assert seed_after(seed_prefix(*first), last) == derive_seed(*first, last)
