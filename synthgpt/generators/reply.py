"""Generators of whole answers: tool calls, reasoning, replies, and the value -> Choice conversion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DrawError, RuleError
from ..jsonutil import dumps
from ..limits import check_document_size
from ..model import Choice, ErrorSpec, FinishReason, ReasoningPart, StreamPlan, TextOut, ToolCallPart
from ..seeding import token_from_seed
from .conversation_fill import fill_from_conversation
from .core import DrawContext, Generator, lift
from .prose import answer_shape, topic
from .request_args import fill_from_request
from .text import ADJECTIVES, with_article
from .tool_pick import pick_tool

__all__ = ["Answer", "Reasoning", "Reply", "ToolCallGen", "answer_json", "call_id", "to_choice"]


def answer_json(value: Any, tool: str | None = None, rule: str = "") -> str:
    """`value` as JSON text for an answer (or tool `tool`'s arguments); a DrawError when it is not JSON (a
    set, an object, NaN), said where it happens rather than as a bare 500 when the body is written.
    `rule` names the rule, for callers outside the draw (whose errors the engine does not prefix)."""
    try:
        return dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, TypeError):
            bad = str(exc).removeprefix("Object of type ").removesuffix(" is not JSON serializable")
            why = f"a value of type {bad}"
        elif "Circular" in str(exc):
            why = "a reference to itself"
        else:
            why = "NaN or an infinity"
        where = f"rule {rule!r}: " if rule else ""
        what = "the answer" if tool is None else f"the arguments of tool {tool!r}"
        raise DrawError(f"{where}{what} cannot be written as JSON ({why} found); answers are made of "
                        "strings, numbers, booleans, null, lists and dicts", rule=rule or None,
                        public=True) from None  # fmt: skip


def call_id(ctx: DrawContext, index: int = 0) -> str:
    return "call_" + token_from_seed(ctx.fork(("call_id", index)).seed, 24)


@dataclass(frozen=True, slots=True)
class Answer:
    """A drawn value plus how to deliver it: overrides of the stream plan, finish reason or an error."""

    value: Any = None
    stream: StreamPlan | None = None
    error: ErrorSpec | None = None
    finish_reason: FinishReason | None = None
    cut_tokens: int | None = None
    """Cut the text at this many tokens and finish with `length`, as if the limit had been reached."""
    usage: dict[str, int] | None = None
    """Usage fields to report instead of the counted ones (a fixed answer's `usage`)."""


class ToolCallGen(Generator[ToolCallPart]):
    """A call of tool `name` with `args` (a dict of values/generators), or schema-valid arguments drawn
    from the tool's declared parameters when `args` is None. `name=None` calls the tool that moves the
    loop on (`tool_pick.pick_tool`: the named one, a work tool first, then the final-answer tool)."""

    __slots__ = ("args", "name")

    def __init__(self, name: str | None = None, args: Any = None) -> None:
        if args is not None and not isinstance(args, dict | Generator):
            raise RuleError(f"tool_call arguments must be a dict or a generator, got {type(args).__name__}")
        self.name = name
        self.args = None if args is None else lift(args)

    def draw(self, ctx: DrawContext) -> ToolCallPart:
        req = ctx.request
        name = self.name
        if name is None:
            name = pick_tool(req)
            if name is None:
                raise DrawError("tool_call() without a name needs a request that declares tools")
        schema_of = None  # the tool whose schema in the request the arguments were drawn from
        if self.args is not None:
            args = self.args.draw(ctx.fork("args"))
        else:
            tool = req.tool(name)
            if tool is None:
                args = {}
            else:
                from .structured import tool_schema, undrawable_request_schema  # local: only needed here

                drawn, hints = tool_schema(tool.parameters)
                try:
                    args = drawn.draw(ctx.fork("args"))
                except DrawError as exc:  # the request's own schema allows nothing drawable
                    raise undrawable_request_schema(req, exc, tool.name) from None
                args = fill_from_request(args, tool.parameters, req.last_user)
                args = fill_from_conversation(args, tool.parameters, req, places=False, hints=hints)
                schema_of = tool.name
        text = args if isinstance(args, str) else answer_json(args, name)
        if schema_of is not None:  # a 400 when too large: the request's schema made it
            check_document_size(text, ctx.limits, f"function '{schema_of}'", None)
        return ToolCallPart(id=call_id(ctx), name=name, arguments=text)

    def __repr__(self) -> str:
        if self.args is None:
            return "tool_call()" if self.name is None else f"tool_call({self.name!r})"
        return f"tool_call({self.name!r}, {self.args!r})"


_WANTS = {
    "greeting": "It is a greeting, so a short friendly reply is enough.",
    "code": "They want working code, so a short example with a sentence of explanation fits.",
    "compare": "They want a comparison, so a side-by-side view will be clearest.",
    "steps": "They want to know how to do it, so numbered steps fit best.",
    "list": "They want options, so a short list is the right shape.",
    "prose": "They want an explanation, so a few clear sentences should do.",
}
_PLANS = (
    "I will keep the answer focused.",
    "I will start with the most useful point and stay brief.",
    "I will avoid jargon and check nothing important is missing.",
)


class Reasoning(Generator[ReasoningPart]):
    """A short seeded chain of thought about the request, with a seeded signature."""

    __slots__ = ("text",)

    def __init__(self, text: Any = None) -> None:
        self.text = None if text is None else lift(text)

    def draw(self, ctx: DrawContext) -> ReasoningPart:
        if self.text is not None:
            text = str(self.text.draw(ctx.fork("text")))
        else:
            rng = ctx.rng
            asked = ctx.request.last_user  # topic and answer_shape read its window
            subject = topic(asked)
            kind = with_article(rng.choice(ADJECTIVES), capital=True)
            steps = [
                f"The user is asking about {'the question' if subject == 'this' else subject}.",
                _WANTS[answer_shape(asked)],
                f"{kind} answer should cover the main points first.",
            ]
            if ctx.request.tools:
                steps.append(f"The {ctx.request.tools[0].name} tool may help here.")
            steps.append(rng.choice(_PLANS))
            text = " ".join(steps)
        return ReasoningPart(text=text, signature=token_from_seed(ctx.fork("signature").seed, 64))

    def __repr__(self) -> str:
        return "reasoning()" if self.text is None else f"reasoning({self.text!r})"


_FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")


class Reply(Generator[Choice]):
    """A whole answer: optional reasoning, text and tool calls, in that order."""

    __slots__ = ("finish_reason", "reasoning", "text", "tool_calls")

    def __init__(
        self,
        text: Any = None,
        tool_calls: Sequence[Any] = (),
        reasoning: Any = None,
        finish_reason: FinishReason | None = None,
    ) -> None:
        if isinstance(tool_calls, str) or not isinstance(tool_calls, Sequence):
            got = type(tool_calls).__name__
            raise RuleError(f"reply: tool_calls must be a list of tool calls, got {got}")
        if finish_reason not in (None, *_FINISH_REASONS):
            raise RuleError(f"reply: finish_reason must be one of {', '.join(map(repr, _FINISH_REASONS))}, "
                            f"got {finish_reason!r}")
        self.text = None if text is None else lift(text)
        self.tool_calls = tuple(tc if isinstance(tc, Generator) else lift(tc) for tc in tool_calls)
        self.reasoning: Generator[Any] | None = (
            None
            if reasoning is None
            else reasoning
            if isinstance(reasoning, Generator)
            else Reasoning(reasoning)
        )
        self.finish_reason = finish_reason

    def draw(self, ctx: DrawContext) -> Choice:
        parts: list[Any] = []
        if self.reasoning is not None:
            r = self.reasoning.draw(ctx.fork("reasoning"))
            parts.append(r if isinstance(r, ReasoningPart) else ReasoningPart(text=str(r)))
        if self.text is not None:
            t = self.text.draw(ctx.fork("text"))
            parts.append(TextOut(text=t if isinstance(t, str) else answer_json(t)))
        for i, g in enumerate(self.tool_calls):
            tc = g.draw(ctx.fork(("tool_call", i)))
            parts.append(_as_tool_call(tc, ctx, i))
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        return Choice(parts=tuple(parts), finish_reason=finish)

    def __repr__(self) -> str:
        args = []
        if self.text is not None:
            args.append(f"text={self.text!r}")
        if self.tool_calls:
            args.append(f"tool_calls={list(self.tool_calls)!r}")
        if self.reasoning is not None:
            args.append(f"reasoning={self.reasoning!r}")
        if self.finish_reason:
            args.append(f"finish_reason={self.finish_reason!r}")
        return f"reply({', '.join(args)})"


def _as_tool_call(value: Any, ctx: DrawContext, index: int) -> ToolCallPart:
    if isinstance(value, ToolCallPart):
        return value
    if isinstance(value, dict) and "name" in value:
        args = value.get("arguments", {})
        return ToolCallPart(
            id=str(value.get("id") or call_id(ctx, index)),
            name=str(value["name"]),
            arguments=args if isinstance(args, str) else answer_json(args, str(value["name"])),
        )
    raise DrawError(f"a tool call must be a tool_call(...) or a dict with 'name', got {value!r}")


def to_choice(value: Any, ctx: DrawContext) -> Choice:
    """Whatever a rule's generator drew, as one choice of the answer."""
    if isinstance(value, Choice):
        return value
    if isinstance(value, str):
        return Choice(parts=(TextOut(text=value),))
    if isinstance(value, ToolCallPart):
        return Choice(parts=(value,), finish_reason="tool_calls")
    if isinstance(value, ReasoningPart):
        return Choice(parts=(value,))
    if isinstance(value, list | tuple) and value and all(isinstance(v, ToolCallPart) for v in value):
        return Choice(parts=tuple(value), finish_reason="tool_calls")
    if value is None:
        return Choice(parts=(TextOut(text=""),))
    # any other JSON value is the answer's text, as a structured-output model would write it
    return Choice(parts=(TextOut(text=answer_json(value, rule=ctx.rule)),))
