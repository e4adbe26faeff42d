"""Seeded composable generators: the `g` of `from synthgpt import generators as g`.

Every function returns a small immutable generator; nothing is drawn until the engine calls `draw(ctx)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._validation import whole
from ..clock import FixedClock, StepClock, SystemClock
from ..errors import RuleError, UnknownNameError
from ..model import ErrorSpec, FinishReason, StreamPlan, coerce_spec
from .basic import Boolean, Choice, Id, Integer, Number, Uuid
from .core import (
    Bind,
    DrawContext,
    Filter,
    Fixed,
    Generator,
    Just,
    Lists,
    Map,
    Objects,
    OneOf,
    Weighted,
    lift,
)
from .embedding import Embeddings, EmbeddingVectors
from .fake import Fake
from .prose import Prose
from .registry import REGISTRY, lookup, registered, sort_registry
from .reply import Answer, Reasoning, Reply, ToolCallGen, to_choice
from .structured import FromRequestSchema
from .template import Template
from .text import HashTokens, LastUser, Paragraph, Sentence, Summary, Words

# The combinator classes stay importable for isinstance checks and subclassing.
__all__ = [
    "REGISTRY",
    "Answer",
    "Bind",
    "DrawContext",
    "EmbeddingVectors",
    "Embeddings",
    "Filter",
    "Fixed",
    "Generator",
    "Map",
    "answer",
    "boolean",
    "choice",
    "echo",
    "embeddings",
    "error",
    "fake",
    "fixed_clock",
    "from_request_schema",
    "from_schema",
    "hash_tokens",
    "id",
    "integer",
    "json_object",
    "just",
    "last_user",
    "lift",
    "lists",
    "lookup",
    "number",
    "objects",
    "one_of",
    "paragraph",
    "prose",
    "reasoning",
    "reply",
    "sentence",
    "step_clock",
    "summary",
    "system_clock",
    "template",
    "to_choice",
    "tool_call",
    "uuid",
    "weighted",
    "words",
]


@registered()
def just(value: Any) -> Generator[Any]:
    return Just(value)


@registered()
def integer(lo: int = 0, hi: int = 100) -> Generator[int]:
    return Integer(lo, hi)


@registered()
def number(lo: float = 0.0, hi: float = 1.0, decimals: int | None = 2) -> Generator[float]:
    return Number(lo, hi, decimals)


@registered()
def boolean(p: float = 0.5) -> Generator[bool]:
    return Boolean(p)


@registered()
def choice(options: Sequence[Any]) -> Generator[Any]:
    """One of fixed values (generators among them are drawn)."""
    return Choice(options)


@registered()
def id(prefix: str = "", length: int = 24, sep: str = "_") -> Generator[str]:  # shadows the builtin: DSL name
    """`prefix` + a seeded base-62 token, e.g. id("user") -> "user_4fQ2…"."""
    return Id(prefix, length, sep)


@registered()
def uuid() -> Generator[str]:
    """A version-4-shaped UUID whose bits come from the seed (never the uuid module's random ones)."""
    return Uuid()


@registered()
def words(min_words: int = 3, max_words: int = 6) -> Generator[str]:
    return Words(min_words, max_words)


@registered()
def sentence(min_words: int = 6, max_words: int = 12) -> Generator[str]:
    return Sentence(min_words, max_words)


@registered()
def paragraph(min_sentences: int = 3, max_sentences: int = 5) -> Generator[str]:
    return Paragraph(min_sentences, max_sentences)


@registered()
def prose(min_sentences: int = 3, max_sentences: int = 5) -> Generator[str]:
    """Readable text about the request's own topic, shaped like its question: the built-in default answer.

    `min_sentences`..`max_sentences` bounds the sentences (or list items, plus an opener and a closer);
    a list or steps question that asks for a number of them ("5 ideas", "top three tips") gets that many,
    up to 10.
    """
    return Prose(min_sentences, max_sentences)


@registered()
def fake(provider: str, locale: str = "en_US", **kwargs: Any) -> Generator[Any]:
    """Any Faker provider by name, with its keyword arguments: fake("name"), fake("date", pattern="%Y")."""
    return Fake(provider, locale, **kwargs)


@registered()
def summary(max_chars: int = 200, count: int = 1) -> Generator[str]:
    """The first `count` sentences of the last user message, cut to `max_chars` code points."""
    return Summary(max_chars, count)


@registered("echo")
def last_user() -> Generator[str]:
    """The last user message, verbatim (`echo`)."""
    return LastUser()


echo = last_user


@registered()
def embeddings(dimensions: int | None = None) -> Generator[EmbeddingVectors]:
    """One vector per input of an embeddings request (or for the last user message of any other request).

    `dimensions` fixes the size; by default the request's `dimensions`, else the model's native size.
    """
    return Embeddings(dimensions)


@registered()
def template(source: str) -> Generator[str]:
    """`template("Hello {{ fake('name') }}, you said {{ last_user }}")`.

    In scope: `request`, `last_user`, `messages`, `system`, `model`, `tools`, `tool_results`, `turn`,
    `call_index`, `now`, `captures` (and each capture by name), `fake(provider, **kw)`, every registered
    generator as a function that draws a value (`integer(1, 6)`), and a seeded `random` filter.
    For agent loops: `round` (tool rounds so far in the current turn) and `tool_result(name=None)`, the
    latest result of the current turn (of tool `name`), parsed as JSON when it is JSON.
    """
    return Template(source)


@registered()
def from_schema(schema: dict[str, Any], overrides: dict[str, Any] | None = None) -> Generator[Any]:
    from .schema import FromSchema

    return FromSchema(schema, overrides)


@registered()
def from_request_schema(overrides: dict[str, Any] | None = None) -> Generator[Any]:
    return FromRequestSchema(overrides)


@registered()
def tool_call(name: str | None = None, args: Any = None) -> Generator[Any]:
    """A call of tool `name` with `args` (a dict of values/generators), or schema-valid arguments drawn
    from the tool's declared parameters when `args` is None. `name=None` calls the forced or first tool.
    """
    return ToolCallGen(name, args)


@registered()
def hash_tokens(n: int = 16) -> Generator[str]:
    """Exactly `n` tokens of hash-derived filler (each ' ' + 4 hex digits is one token)."""
    return HashTokens(n)


@registered()
def reasoning(text: Any = None) -> Generator[Any]:
    """A short seeded chain of thought about the request, with a seeded signature."""
    return Reasoning(text)


@registered()
def reply(
    text: Any = None,
    tool_calls: Sequence[Any] = (),
    reasoning: Any = None,
    finish_reason: FinishReason | None = None,
) -> Generator[Any]:
    """A whole answer: optional reasoning, text and tool calls, in that order."""
    return Reply(text, tool_calls, reasoning, finish_reason)


@registered()
def one_of(*options: Any) -> Generator[Any]:
    return OneOf(*options)


@registered()
def weighted(pairs: Sequence[tuple[float, Any]] | Mapping[Any, float]) -> Generator[Any]:
    return Weighted(pairs)


@registered("json_object")
def objects(fields: Mapping[str, Any]) -> Generator[dict[str, Any]]:
    """A dict whose values are drawn each from its own fork, labelled by key."""
    return Objects(fields)


json_object = objects


@registered()
def lists(
    element: Any, min_size: int = 0, max_size: int = 5, *, unique: bool = False
) -> Generator[list[Any]]:
    return Lists(element, min_size, max_size, unique=unique)


class _AnswerGen(Generator[Answer]):
    __slots__ = ("error_spec", "finish_reason", "inner", "stream", "usage")

    def __init__(
        self,
        inner: Generator[Any] | None,
        stream: StreamPlan | None,
        error_spec: ErrorSpec | None,
        finish_reason: FinishReason | None,
        usage: dict[str, int] | None = None,
    ) -> None:
        self.inner = inner
        self.stream = stream
        self.error_spec = error_spec
        self.finish_reason = finish_reason
        self.usage = usage

    def draw(self, ctx: DrawContext) -> Answer:
        value = None if self.inner is None else self.inner.draw(ctx)
        return Answer(
            value, stream=self.stream, error=self.error_spec, finish_reason=self.finish_reason,
            usage=None if self.usage is None else dict(self.usage),
        )

    def __repr__(self) -> str:
        simple = self.stream is None and self.finish_reason is None and self.usage is None
        if self.inner is None and simple and self.error_spec:
            spec = self.error_spec.model_dump(exclude_defaults=True)
            args = [repr(spec.pop("status", 500))]
            if "message" in spec:
                args.append(repr(spec.pop("message")))
            args += [f"{k}={v!r}" for k, v in spec.items()]
            return f"error({', '.join(args)})"
        bits = [repr(self.inner)] if self.inner is not None else []
        # non-default fields as a dict: `answer` accepts that form back
        if self.stream is not None:
            bits.append(f"stream={self.stream.model_dump(exclude_defaults=True)!r}")
        if self.error_spec is not None:
            bits.append(f"error={self.error_spec.model_dump(exclude_defaults=True)!r}")
        if self.finish_reason is not None:
            bits.append(f"finish_reason={self.finish_reason!r}")
        if self.usage is not None:
            bits.append(f"usage={self.usage!r}")
        return f"answer({', '.join(bits)})"


def answer(
    value: Any = None,
    *,
    stream: StreamPlan | dict[str, Any] | None = None,
    error: ErrorSpec | dict[str, Any] | None = None,
    finish_reason: FinishReason | None = None,
    usage: Mapping[str, int] | None = None,
) -> Generator[Answer]:
    """Wrap a generator with delivery details: a stream plan (pacing, faults), an error, or the usage
    to report (`usage={"prompt_tokens": 10}` replaces just that count)."""
    plan = coerce_spec(StreamPlan, stream, "answer(stream=…)")
    err = coerce_spec(ErrorSpec, error, "answer(error=…)")
    if finish_reason not in (None, "stop", "length", "tool_calls", "content_filter"):
        raise RuleError(
            "answer: finish_reason must be 'stop', 'length', 'tool_calls' or 'content_filter', "
            f"got {finish_reason!r}"
        )
    fixed_usage = None
    if usage is not None:
        fields = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
        for k, v in usage.items():
            if k not in fields:
                raise UnknownNameError("usage field", k, fields)
            whole(f"answer: usage {k}", v, lo=0)
        fixed_usage = dict(usage)
    return _AnswerGen(None if value is None else lift(value), plan, err, finish_reason, fixed_usage)


def error(status: int = 500, message: str | None = None, **kwargs: Any) -> Generator[Answer]:
    """Answer with an HTTP error in the provider's shape."""
    return answer(error=coerce_spec(ErrorSpec, {"status": status, "message": message, **kwargs}, "error"))


sort_registry()  # every generator is registered above


def fixed_clock(t: float = 1_767_225_600) -> FixedClock:
    return FixedClock(t)


def step_clock(start: float = 1_767_225_600, step: float = 1.0) -> StepClock:
    return StepClock(start, step)


def system_clock() -> SystemClock:
    return SystemClock()
