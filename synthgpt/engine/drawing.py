"""Drawing one answer: each choice from the rule's generator, shaped (deltas, reasoning, stop, limit), then
the usage and the `ModelOutput`. The generators draw; this module only orchestrates them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DrawError, SynthGPTError
from ..generators.core import DrawContext
from ..generators.embedding import EmbeddingVectors
from ..generators.reply import Answer, Reasoning, to_choice
from ..limits import Limits
from ..model import Choice, ErrorSpec, ModelOutput, ModelRequest, StreamPlan
from ..rules.triggers import without_triggers
from ..seeding import derive_seed
from ..tokens import count_tokens, cut_to_tokens
from .assemble import cut_choice, output, text_choice, text_out
from .assemble import usage as assembled_usage
from .shaping import apply_limit, apply_stop, count_usage, spelled_by_deltas

if TYPE_CHECKING:
    from ..rules.rule import Rule

__all__ = ["draw_output"]

of_answer = DrawContext.of_answer

_NO_STREAM = ModelOutput.model_fields["stream"].default


def draw_output(
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
    """The answer `rule` draws for `req` under `seed` (see `MockGPT.resolve`)."""
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
    # a text answer kept as drawn (no deltas to spell, stop sequence or reasoning to add) has its tokens
    # counted once, here, for the limit and the usage both; None once any choice was shaped otherwise
    counted: int | None = 0
    for i in range(req.n):
        ctx = of_answer(
            view, seed if i == 0 else derive_seed(seed, "choice", i), now, captures, name, call_index,
            base_seed, order_reads, limits, req,
        )  # fmt: skip
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
        if (
            type(value) is str and not stops and (stream is None or stream.deltas is None)
            and not (auto and error is None)
        ):  # fmt: skip
            # most answers: text, the choice assembled without validation; `apply_limit` and `count_usage`
            # would give this choice and count (tests/engine/test_engine_shortcuts.py)
            # a text over its limit is cut to its first `limit` tokens (never none: a budget is >= 1), and
            # counts them; one most likely over it (prose runs ~3.5 characters a token) is cut at once, the
            # cut counting a text with fewer after its pass
            if limit and len(value) > 4 * limit:
                cut_text, tokens, was_cut = cut_to_tokens(value, limit)
            else:
                tokens, was_cut = count_tokens(value), False
                if limit and tokens > limit:
                    cut_text, tokens, was_cut = cut_to_tokens(value, limit)
            if was_cut:
                choices.append(cut_choice((text_out(cut_text),)))
            else:
                choices.append(text_choice(value))
            if counted is not None:
                counted += tokens
            continue
        counted = None
        if type(value) is str:
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
    if counted is not None and type(prompt_tokens) is int:  # every choice text counted above
        usage = assembled_usage(prompt_tokens, counted, 0)
    else:
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
