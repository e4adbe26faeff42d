"""The engine's shortcuts around a drawn answer give what the paths they skip gave, value for value:
`draw_output` counting a text answer's tokens once (for the limit and the usage both) against the
`draw_output` before it (kept below verbatim), `DrawContext.of_answer` against its keyword constructor, and
the frozen records built through their slots (`frozen.field_setters`) against their `__init__`."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from synthgpt import MockGPT, ModelRequest, Rule
from synthgpt import matchers as m
from synthgpt.engine import calls
from synthgpt.engine.assemble import output, text_choice
from synthgpt.engine.drawing import draw_output
from synthgpt.engine.mockgpt import _generation
from synthgpt.engine.shaping import apply_limit, apply_stop, count_usage, spelled_by_deltas
from synthgpt.errors import DrawError, SynthGPTError
from synthgpt.frozen import field_setters
from synthgpt.generation import Generation
from synthgpt.generators.core import DrawContext, Generator
from synthgpt.generators.embedding import EmbeddingVectors
from synthgpt.generators.reply import Answer, Reasoning, to_choice
from synthgpt.journal import CallRecord
from synthgpt.limits import DEFAULT_LIMITS, Limits
from synthgpt.model import Choice, ErrorSpec, ModelOutput, StreamPlan
from synthgpt.rules.rule import Resolved, _resolved
from synthgpt.rules.triggers import without_triggers
from synthgpt.seeding import derive_seed

from .test_assemble import state

_NO_STREAM = ModelOutput.model_fields["stream"].default


def reference_draw_output(
    req: ModelRequest,
    rule: Rule,
    seed: int,
    now: float,
    captures: dict[str, str],
    call_index: int,
    prompt_tokens: int,
    limit: int | None,
    *,
    base_seed: int,
    limits: Limits,
    order_reads: list[int] | None = None,
    thinks: bool = False,
) -> ModelOutput:
    """`draw_output` before text answers were counted once (kept verbatim as the reference)."""
    stream = rule.stream
    error = rule.error
    name = rule.name
    generator = rule.generator
    fixed_usage: dict[str, int] | None = None
    choices: list[Choice] = []
    embeddings: tuple[tuple[float, ...], ...] = ()
    view = without_triggers(req)  # what the answer is drawn from: triggers steer, they are not asked
    stops = req.stop_sequences if req.extra else ()  # they live in `extra`: most requests have none
    # a model that thinks by default reasons as if asked (a rule's `reasoning=False` still wins)
    auto = rule.adds_reasoning(req) or (thinks and rule.reasoning == "auto")
    for i in range(req.n):
        ctx = DrawContext(  # the keyword constructor, as before `DrawContext.of_answer`
            view,
            seed if i == 0 else derive_seed(seed, "choice", i),
            now=now,
            captures=captures,
            rule=name,
            call_index=call_index,
            base_seed=base_seed,
            order_reads=order_reads,
            limits=limits,
            received=req,
        )
        try:
            value = generator.draw(ctx)
        except DrawError as exc:  # name the rule: the generator alone rarely says where it came from
            raise DrawError(f"rule {name!r}: {exc}", rule=name, code=exc.code,
                            public=exc.public) from exc  # fmt: skip
        except SynthGPTError:
            raise
        except Exception as exc:  # a user's callable inside map/bind/filter: say which rule it was
            raise DrawError(f"rule {name!r}: {type(exc).__name__}: {exc}", rule=name) from exc
        cut: int | None = None
        if type(value) is str:  # most answers: text, the choice assembled without validation
            choice = text_choice(value)
            if stream is not None:
                choice = spelled_by_deltas(choice, stream, name)
        else:
            finish = None
            if isinstance(value, Answer):
                if value.usage is not None:
                    fixed_usage = value.usage
                stream = value.stream or stream
                error = value.error or error
                finish = value.finish_reason
                cut = value.cut_tokens
                value = value.value
            if isinstance(value, EmbeddingVectors):  # vectors, not text: nothing to cut, no output tokens
                embeddings, value = value.vectors, Choice()
            choice = spelled_by_deltas(to_choice(value, ctx), stream, name)
            if finish is not None:
                choice = choice.model_copy(update={"finish_reason": finish})
        if auto and not choice.reasoning and error is None:
            r = Reasoning().draw(ctx.fork("auto-reasoning"))
            choice = Choice(parts=(r, *choice.parts), finish_reason=choice.finish_reason)
        if stops:
            choice = apply_stop(choice, stops)
        if limit or cut is not None:
            choice = apply_limit(choice, limit, cut)
        choices.append(choice)
    if req.api == "embeddings" and error is None and len(embeddings) != len(req.inputs):
        # said here, where the rule is known, rather than as a bare 500 when the body is encoded
        raise DrawError(
            f"rule {rule.name!r} answered an embeddings request without one vector per input "
            f"({len(embeddings)} for {len(req.inputs)}); use the `embeddings` generator",
            rule=rule.name, public=True,
        )  # fmt: skip
    usage = count_usage(prompt_tokens, choices)
    if fixed_usage:  # a rule's fixed `usage` replaces the counted fields it names
        usage = usage.model_copy(update=fixed_usage)
    stream = stream or _NO_STREAM
    # a copy per answer: the rule's ErrorSpec holds dicts (headers, body) a caller could mutate
    error = None if error is None else error.model_copy(deep=True)
    model = req.model
    created = int(now) if stream.created is None else stream.created
    if (
        not embeddings and type(model) is str and type(seed) is int and type(created) is int
        and type(name) is str and isinstance(stream, StreamPlan) and isinstance(error, ErrorSpec | None)
    ):  # fmt: skip
        # what validation would keep as it is: assembled directly (the common answer)
        return output(tuple(choices), usage, stream, error, model, seed, created, name)
    return ModelOutput(
        choices=tuple(choices),
        usage=usage,
        stream=stream,
        error=error,
        model=model,
        id_seed=seed,
        created=created,
        rule=name,
        embeddings=embeddings,
    )


class PerChoice(Generator[Any]):
    """Draws `values[i]` for choice i of an answer under `seed` (the engine's seed of each choice)."""

    def __init__(self, seed: int, values: list[Any]) -> None:
        self.by_seed = {seed if i == 0 else derive_seed(seed, "choice", i): v for i, v in enumerate(values)}

    def draw(self, ctx: DrawContext) -> Any:
        value = self.by_seed[ctx.seed]
        if isinstance(value, Exception):
            raise value
        return value

    def __repr__(self) -> str:
        return "per_choice()"


SEED = 1234
LONG = " ".join(["Tide pools hold anemones, crabs and small fish; the water warms at low tide."] * 4)
# the last one is long for its few tokens: tried as cut at once, and found short enough
TEXTS = ["", "Hello world, tide pools.", LONG, "  trailing  ", "héllo wörld, ñandú!", "supercalifragilistic",
         "spaced" + " " * 40 + "out"]  # fmt: skip
LIMITS = [None, 0, 1, 3, 5, 6, 7, 20, 1000]


def _both(values: list[Any], limit: int | None, *, prompt_tokens: Any = 17, thinks: bool = False,
          extra: dict[str, Any] | None = None, asks: Any = None, **rule_kw: Any) -> None:  # fmt: skip
    req = ModelRequest.from_dict({
        "model": "m", "messages": [{"role": "user", "content": "hi"}], "n": len(values),
        **({"extra": extra} if extra else {}), **({"reasoning": asks} if asks else {}),
    })  # fmt: skip
    rule = Rule("r", m.always(), PerChoice(SEED, values), **rule_kw)
    results = []
    for draw in (draw_output, reference_draw_output):
        reads: list[int] = []
        try:
            out: Any = draw(req, rule, SEED, 1_000.5, {"k": "v"}, 3, prompt_tokens, limit, base_seed=7,
                            limits=DEFAULT_LIMITS, order_reads=reads, thinks=thinks)  # fmt: skip
            results.append((state(out), out.model_dump_json(), reads))
        except Exception as exc:  # the same refusal, word for word
            results.append((type(exc), str(exc), reads))
    assert results[0] == results[1]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("limit", LIMITS)
def test_a_text_answer_is_the_one_the_shaping_steps_gave(text: str, limit: int | None) -> None:
    _both([text], limit)
    _both([text, text + " more", LONG], limit)


@pytest.mark.parametrize("limit", [None, 2, 1000])
def test_text_beside_other_answers_is_the_one_the_shaping_steps_gave(limit: int | None) -> None:
    for values in (
        [LONG, Answer(LONG, cut_tokens=2)],
        [Answer("fixed", usage={"completion_tokens": 5}), LONG],
        [Choice(), "after an empty choice"],
        ["before", Answer("ab", stream=StreamPlan(deltas=["a", "b"]))],  # a later plan spells the next text
        ["before", Answer("xy", stream=StreamPlan(deltas=["a", "b"])), "ab"],
        ["text", Answer(None, error=ErrorSpec(status=500)), LONG],
        [EmbeddingVectors(((0.5,),)), "text"],
        ["text", DrawError("no")],
        ["text", ValueError("a user's callable")],
    ):
        _both(values, limit)


@pytest.mark.parametrize("limit", [None, 4])
def test_text_shaped_otherwise_is_the_one_the_shaping_steps_gave(limit: int | None) -> None:
    _both(["spelled"], limit, stream={"deltas": ["spel", "led"]})
    _both([""], limit, stream={"deltas": ["from ", "deltas"]})
    _both(["not spelled"], limit, stream={"deltas": ["other"]})
    _both([LONG, "x"], limit, stream={"first_delay_ms": 5, "created": 99})
    _both([LONG], limit, reasoning=True)
    _both([LONG], limit, thinks=True)
    _both([LONG], limit, thinks=True, reasoning=False)
    _both([LONG], limit, error={"status": 429})
    _both([LONG], limit, asks={"effort": "low"})
    _both([LONG], limit, asks={"effort": "low"}, error={"status": 429})
    _both([LONG, "tide pools"], limit, extra={"stop": ["pools"]})
    _both([LONG], limit, prompt_tokens=17.0)  # not an int: the validated Usage, as before


def _slots(ctx: DrawContext) -> dict[str, Any]:
    return {name: getattr(ctx, name) for name in DrawContext.__slots__}


@pytest.mark.parametrize("captures", [{}, {"a": "b"}])
@pytest.mark.parametrize("limits", [DEFAULT_LIMITS, Limits(template_ops=5)])
def test_a_context_of_an_answer_is_the_keyword_constructors(captures: dict[str, str], limits: Limits) -> None:
    req = ModelRequest.from_dict({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    view = without_triggers(req)
    reads: list[int] = []
    fast = DrawContext.of_answer(view, 5, 2.5, captures, "r", 3, 9, reads, limits, req)
    slow = DrawContext(view, 5, now=2.5, captures=captures, rule="r", call_index=3, base_seed=9,
                       order_reads=reads, limits=limits, received=req)  # fmt: skip
    assert _slots(fast) == _slots(slow)
    # the same objects where the constructor keeps them, a fresh dict for no captures as it makes one
    assert (fast.captures is captures) == (slow.captures is captures)
    assert fast._order_reads is reads and fast.limits is limits and fast.received is req
    assert fast.call_index == 3 and reads == [3]


def _fields(obj: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]


def test_a_record_built_through_its_slots_is_the_one_init_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    mock = MockGPT(seed=3)
    drawn = mock.resolve({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    rule, req, out = drawn.rule, drawn.record.request, drawn.output
    monkeypatch.setattr(time, "perf_counter", lambda: 10.0)
    for stream, nbytes in ((False, -1), (True, 123)):
        r = req.model_copy(update={"stream": stream})
        caps = {"x": "y"}
        fast = calls.RecordBuilder(rule, r, out, 42, 1.5, caps, 9.5, nbytes).make(7)
        slow = CallRecord(index=7, request=r, rule=rule.name, seed=42, output=out, at=1.5, duration_ms=500.0,
                          captures=dict(caps), delivery=calls.delivery(r, out), nbytes=nbytes)  # fmt: skip
        assert type(fast) is CallRecord
        assert fast == slow and repr(fast) == repr(slow) and hash(fast.index) == hash(slow.index)
        assert _fields(fast)[:-2] == _fields(slow)[:-2] and fast.nbytes == slow.nbytes
        assert repr(fast.delivery) == repr(slow.delivery) and fast.delivery.finished is False
        assert fast.captures == caps and fast.captures is not caps  # a copy, as before
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.seed = 1  # type: ignore[misc]


def test_resolved_and_generation_built_through_their_slots_are_what_init_builds() -> None:
    mock = MockGPT()
    drawn = mock.resolve({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    rule = drawn.rule
    exc = None
    for args in ((rule, {"a": "b"}, 3, None, True), (rule, {}, 0, exc, False)):
        fast, slow = _resolved(*args), Resolved(*args)
        assert type(fast) is Resolved and fast == slow and repr(fast) == repr(slow)
        assert _fields(fast) == _fields(slow)
    for replayable in (True, False):
        gen = _generation(drawn.output, rule, drawn.record, replayable)
        ref = Generation(drawn.output, rule, drawn.record, replayable)
        assert type(gen) is Generation and gen == ref and repr(gen) == repr(ref)
        assert gen.request is ref.request
        with pytest.raises(dataclasses.FrozenInstanceError):
            gen.replayable = True  # type: ignore[misc]


def test_field_setters_want_every_field_in_order() -> None:
    assert len(field_setters(Generation, "output", "rule", "record", "replayable")) == 4
    with pytest.raises(AssertionError, match="Generation's fields changed"):
        field_setters(Generation, "output", "record", "rule", "replayable")
    with pytest.raises(AssertionError, match="fields changed"):
        field_setters(Generation, "output", "rule", "record")

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises(AssertionError):
        field_setters(NoSlots, "a")
