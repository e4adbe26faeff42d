"""Seeded composable generators: the `g` of `from synthgpt import generators as g`.

Every function returns a small immutable generator; nothing is drawn until the engine calls `draw(ctx)`.
"""

from __future__ import annotations

from typing import Any

from ..clock import FixedClock, StepClock, SystemClock
from ..model import ErrorSpec, FinishReason, StreamPlan
from .basic import Boolean, Choice, Id, Integer, Number, Uuid
from .core import Bind, DrawContext, Filter, Fixed, Generator, Just, Lists, Map, Objects, OneOf, Weighted, lift
from .fake import Fake
from .registry import REGISTRY, lookup
from .reply import Answer, Reasoning, Reply, ToolCallGen, to_choice
from .structured import FromRequestSchema
from .template import Template
from .text import HashTokens, LastUser, Paragraph, Prose, Sentence, Summary, Words

__all__ = [
    "REGISTRY",
    "Answer",
    "DrawContext",
    "Generator",
    "answer",
    "boolean",
    "choice",
    "echo",
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

# The classes stay importable for isinstance checks and subclassing.
Bind, Filter, Fixed, Map = Bind, Filter, Fixed, Map


def just(value: Any) -> Generator[Any]:
    return Just(value)


def integer(lo: int = 0, hi: int = 100) -> Generator[int]:
    return Integer(lo, hi)


def number(lo: float = 0.0, hi: float = 1.0, decimals: int | None = 2) -> Generator[float]:
    return Number(lo, hi, decimals)


def boolean(p: float = 0.5) -> Generator[bool]:
    return Boolean(p)


def choice(options: list[Any] | tuple[Any, ...]) -> Generator[Any]:
    return Choice(options)


def id(prefix: str = "", length: int = 24, sep: str = "_") -> Generator[str]:  # noqa: A001 - DSL name
    return Id(prefix, length, sep)


def uuid() -> Generator[str]:
    return Uuid()


def words(min_words: int = 3, max_words: int = 6) -> Generator[str]:
    return Words(min_words, max_words)


def sentence(min_words: int = 6, max_words: int = 12) -> Generator[str]:
    return Sentence(min_words, max_words)


def paragraph(min_sentences: int = 3, max_sentences: int = 5) -> Generator[str]:
    return Paragraph(min_sentences, max_sentences)


def prose(min_sentences: int = 3, max_sentences: int = 5) -> Generator[str]:
    return Prose(min_sentences, max_sentences)


def fake(provider: str, locale: str = "en_US", **kwargs: Any) -> Generator[Any]:
    return Fake(provider, locale, **kwargs)


def summary(max_chars: int = 200, count: int = 1) -> Generator[str]:
    return Summary(max_chars, count)


def last_user() -> Generator[str]:
    return LastUser()


echo = last_user


def template(source: str) -> Generator[str]:
    return Template(source)


def from_schema(schema: dict[str, Any], overrides: dict[str, Any] | None = None) -> Generator[Any]:
    from .schema import FromSchema

    return FromSchema(schema, overrides)


def from_request_schema(overrides: dict[str, Any] | None = None) -> Generator[Any]:
    return FromRequestSchema(overrides)


def tool_call(name: str | None = None, args: Any = None) -> Generator[Any]:
    return ToolCallGen(name, args)


def hash_tokens(n: int = 16) -> Generator[str]:
    return HashTokens(n)


def reasoning(text: Any = None) -> Generator[Any]:
    return Reasoning(text)


def reply(
    text: Any = None,
    tool_calls: list[Any] | tuple[Any, ...] = (),
    reasoning: Any = None,
    finish_reason: FinishReason | None = None,
) -> Generator[Any]:
    return Reply(text, tool_calls, reasoning, finish_reason)


def one_of(*options: Any) -> Generator[Any]:
    return OneOf(*options)


def weighted(pairs: Any) -> Generator[Any]:
    return Weighted(pairs)


def objects(fields: dict[str, Any]) -> Generator[dict[str, Any]]:
    return Objects(fields)


json_object = objects


def lists(element: Any, min_size: int = 0, max_size: int = 5, *, unique: bool = False) -> Generator[list[Any]]:
    return Lists(element, min_size, max_size, unique=unique)


class _AnswerGen(Generator[Answer]):
    __slots__ = ("error_spec", "finish_reason", "inner", "stream")

    def __init__(
        self,
        inner: Generator[Any] | None,
        stream: StreamPlan | None,
        error_spec: ErrorSpec | None,
        finish_reason: FinishReason | None,
    ) -> None:
        self.inner = inner
        self.stream = stream
        self.error_spec = error_spec
        self.finish_reason = finish_reason

    def draw(self, ctx: DrawContext) -> Answer:
        value = None if self.inner is None else self.inner.draw(ctx)
        return Answer(value, stream=self.stream, error=self.error_spec, finish_reason=self.finish_reason)

    def __repr__(self) -> str:
        bits = [repr(self.inner)] if self.inner is not None else []
        if self.stream is not None:
            bits.append(f"stream={self.stream!r}")
        if self.error_spec is not None:
            bits.append(f"error={self.error_spec!r}")
        return f"answer({', '.join(bits)})"


def answer(
    value: Any = None,
    *,
    stream: StreamPlan | dict[str, Any] | None = None,
    error: ErrorSpec | dict[str, Any] | None = None,
    finish_reason: FinishReason | None = None,
) -> Generator[Answer]:
    """Wrap a generator with delivery details: a stream plan (pacing, faults) or an error."""
    plan = StreamPlan.model_validate(stream) if isinstance(stream, dict) else stream
    err = ErrorSpec.model_validate(error) if isinstance(error, dict) else error
    return _AnswerGen(None if value is None else lift(value), plan, err, finish_reason)


def error(status: int = 500, message: str | None = None, **kwargs: Any) -> Generator[Answer]:
    """Answer with an HTTP error in the provider's shape."""
    return answer(error=ErrorSpec(status=status, message=message, **kwargs))


def fixed_clock(t: float = 1_767_225_600) -> FixedClock:
    return FixedClock(t)


def step_clock(start: float = 1_767_225_600, step: float = 1.0) -> StepClock:
    return StepClock(start, step)


def system_clock() -> SystemClock:
    return SystemClock()
