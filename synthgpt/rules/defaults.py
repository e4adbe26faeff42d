"""The built-in rule set: what `synthgpt serve` answers with no rule file (DESIGN.md §4).

In order, first match wins:
  embeddings         an embeddings request: one vector per input
  triggers           `!MOCK_…!` markers in the last user message (see `triggers.py`)
  tool_call          tools declared, choice not `none`, last message not a tool result (or a forced
                     choice, or a final-answer tool not yet called): a call that moves the loop on
                     (`generators/tool_pick.py`) with schema-valid arguments
  structured_output  the request asks for JSON: a document valid against its schema (or the JSON Schema
                     its messages give), taking what the conversation says
  tool_results       the conversation ends with tool results: text quoting each result
  default            readable seeded text about the request
Reasoning comes first in any answer when the request asks for it (the engine adds it).

The trigger rule changes only how an answer is delivered (errors, cuts, faults, pacing) or forces tool
calls; its content is what the rules after it would have answered for the message without its triggers.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import RequestError
from ..generators.core import DrawContext, Generator
from ..generators.embedding import Embeddings
from ..generators.prompt_schema import prompt_schema
from ..generators.prose import Prose
from ..generators.reply import Answer, ToolCallGen, to_choice
from ..generators.structured import FromRequestSchema
from ..generators.tool_pick import unfinished_final_tool
from ..model import ModelRequest
from ..tokens import count_tokens
from .matchers import (
    Matcher,
    always,
    api,
    has_tool_result,
    has_tools,
    last_user,
    tool_choice,
    wants_schema,
    where,
)
from .rule import Rule, RuleSet
from .triggers import TRIGGER_PATTERN, parse_triggers, strip_triggers, without_triggers

__all__ = [
    "ALLOW_UNDECLARED_HEADER",
    "BUILTIN_PARTS",
    "EmbeddingsTriggerAnswer",
    "ToolResultsText",
    "TriggerAnswer",
    "builtin_rules",
    "default_rules",
]

_OPENERS = ("Here is what the tools returned.", "I checked with the tools.", "The results are in.")
_CLOSERS = ("Let me know if you need anything else.", "I hope this helps.", "That should answer it.")


class ToolResultsText(Generator[str]):
    """A text answer that quotes each tool result of the current turn, naming the tool that produced it."""

    __slots__ = ()

    def draw(self, ctx: DrawContext) -> str:
        req = ctx.request
        lines = [f"{req.tool_result_name(m) or 'the tool'} returned: {m.content}" for m in req.tool_results]
        rng = ctx.rng
        return "\n".join([rng.choice(_OPENERS), *lines, rng.choice(_CLOSERS)])

    def __repr__(self) -> str:
        return "tool_results_text()"


def _calls_a_tool() -> Matcher:
    # A forced choice always calls (a tool that moves the loop on: see `tool_pick`); `auto` calls until
    # the turn's tool results are in, then only a final-answer tool not yet called.
    forced = tool_choice("required") | tool_choice("named")
    final_pending = where(lambda r: unfinished_final_tool(r) is not None)
    return has_tools() & ~tool_choice("none") & (~has_tool_result(last=True) | forced | final_pending)


def _prompt_gives_schema(request: ModelRequest) -> bool:
    # `prompt_schema` only finds a schema in a message holding `"properties"`; most requests have none, and
    # asking it costs ~10 µs per request (a cache look-up, lowering and a regex per message)
    for m in request.messages:  # (a loop: a generator expression costs more than the test here)
        if '"properties"' in m.content:
            return prompt_schema(request) is not None
    return False


# Steps 2-5 of the rule set, shared by the rules and by the trigger rule's content. Tools come before
# structured output: a model first calls the tools it needs, then writes the document from their results;
# a forced tool choice wins over a response schema.
_CONTENT: tuple[tuple[str, Matcher, Generator[Any]], ...] = (
    ("tool_call", _calls_a_tool(), ToolCallGen()),
    ("structured_output", wants_schema() | where(_prompt_gives_schema), FromRequestSchema()),
    ("tool_results", has_tool_result(last=True), ToolResultsText()),
    ("default", always(), Prose()),
)


_CONTENT_NAMES = frozenset(name for name, _, _ in _CONTENT)
ALLOW_UNDECLARED_HEADER = "x-synthgpt-allow-undeclared-tools"


def _check_declared(req: ModelRequest, names: list[str]) -> None:
    """A forced call of a tool the request does not declare is one the client cannot run: a 400, unless
    the `x-synthgpt-allow-undeclared-tools: 1` header opts in (a harness checking the call itself)."""
    if req.header(ALLOW_UNDECLARED_HEADER) in ("1", "true", "yes"):
        return
    for name in names:
        if req.tool(name) is None:
            declared = ", ".join(t.name for t in req.tools) or "none"
            raise RequestError(
                f"!MOCK_TOOL_CALL:{name}! calls a tool the request does not declare (declared: {declared}). "
                f"Declare it in `tools`, or send the header `{ALLOW_UNDECLARED_HEADER}: 1` to allow it.",
                "tools",
            )


class TriggerAnswer(Generator[Answer]):
    """The answer for a message with triggers: the regular content, delivered as the triggers say.

    The content is what the rules after this one would answer for the message without its triggers:
    the built-in content rules, or, beside a rule file's own rules (`include: builtin`), the first of
    those that matches (`content_rules`, set by the loader). Only a rule's content is taken: its stream
    plan and error give way to the triggers, and rules with `times` or without an answer are passed
    over (they count calls, or have no content).
    """

    __slots__ = ("content_rules",)

    def __init__(self, content_rules: tuple[Rule, ...] = ()) -> None:
        self.content_rules = content_rules

    def _content(self, clean: ModelRequest, inner: DrawContext) -> Any:
        for rule in self.content_rules:
            if rule.name in _CONTENT_NAMES:
                break  # the built-in content rules: drawn below, as with no rule file
            if rule.times is not None or rule.error is not None:
                continue
            caps = rule.matcher.match(clean)
            if caps is None:
                continue
            value = rule.generator.draw(DrawContext(
                clean, inner.seed, now=inner.now, captures=caps, rule=rule.name, base_seed=inner.base_seed,
            ))  # fmt: skip
            return value.value if isinstance(value, Answer) else value
        gen = next(g for _, m, g in _CONTENT if m.match(clean) is not None)
        return gen.draw(inner)

    def draw(self, ctx: DrawContext) -> Answer:
        req = ctx.received  # the engine draws from a request without triggers; they are read here
        trig = parse_triggers(req.last_user)
        error = trig.error_spec()
        if error is not None:
            return Answer(None, stream=trig.stream_plan(), error=error)
        clean = without_triggers(ctx.request)  # the engine's view already is: then it is returned as is
        inner = ctx.with_request(clean)
        # Tool triggers ask for calls once per turn: once results are back, the loop must be able to end.
        value: Any
        if trig.tool_calls and not req.tool_results:
            _check_declared(req, [name for name, _ in trig.tool_calls])
            value = [ToolCallGen(name, args).draw(inner.fork(("trigger_call", i)))
                     for i, (name, args) in enumerate(trig.tool_calls)]  # fmt: skip
        elif trig.parallel_tool_calls and req.tools and not req.tool_results:
            tools = req.tools if req.parallel_tool_calls else req.tools[:1]
            value = [ToolCallGen(t.name).draw(inner.fork(("trigger_call", i))) for i, t in enumerate(tools)]
        else:
            value = self._content(clean, inner)
        cut = trig.incomplete
        if cut == 0:
            cut = max(1, count_tokens(to_choice(value, inner).text) // 2)
        return Answer(value, stream=trig.stream_plan(), cut_tokens=cut)

    def __repr__(self) -> str:
        return "trigger_answer()"


class EmbeddingsTriggerAnswer(Generator[Answer]):
    """Triggers inside embeddings inputs: `!MOCK_ERROR:<status>!` answers that error, `!MOCK_DELAY:<ms>!`
    waits; the vectors are those of the inputs without their triggers."""

    __slots__ = ()

    def draw(self, ctx: DrawContext) -> Answer:
        req = ctx.request
        found = [parse_triggers(text) for text in req.inputs]
        error = next((e for e in (t.error_spec() for t in found) if e is not None), None)
        plan = next((p for p in (t.stream_plan() for t in found) if p is not None), None)
        if error is not None:
            return Answer(None, stream=plan, error=error)
        clean = tuple(strip_triggers(text, t) for text, t in zip(req.inputs, found, strict=True))
        vectors = Embeddings().draw(ctx.with_request(req.model_copy(update={"inputs": clean})))
        return Answer(vectors, stream=plan)

    def __repr__(self) -> str:
        return "embeddings_trigger_answer()"


def _input_has_trigger(req: ModelRequest) -> bool:
    return any(_TRIGGER.search(text) for text in req.inputs)


_TRIGGER = re.compile(TRIGGER_PATTERN)
_EMBEDDINGS_TRIGGER = api("embeddings") & where(_input_has_trigger)


BUILTIN_PARTS = ("triggers", "defaults")
"""What a rule file may include of the built-in rules: `builtin:triggers` (the `!MOCK_…!` rules, placed
where included) and `builtin:defaults` (embeddings, structured output, tool calls, tool results and
readable text, placed after every rule of every file); `builtin` is both."""


def builtin_rules(part: str) -> list[Rule]:
    """Fresh rules of one part of the built-in set (see `BUILTIN_PARTS`)."""
    if part == "triggers":
        return [
            Rule("embeddings_triggers", _EMBEDDINGS_TRIGGER, EmbeddingsTriggerAnswer()),
            Rule("triggers", last_user(regex=TRIGGER_PATTERN, case_sensitive=True), TriggerAnswer()),
        ]
    if part == "defaults":
        return [Rule("embeddings", api("embeddings"), Embeddings()), *(Rule(n, m, g) for n, m, g in _CONTENT)]
    raise ValueError(f"no built-in part {part!r}: use one of {', '.join(BUILTIN_PARTS)}")


def default_rules() -> RuleSet:
    """A fresh copy of the built-in rules (rules count their calls, so each engine gets its own).

    The order of DESIGN.md §4. `include: builtin` puts the defaults after the file's rules instead, which
    answers alike: an embeddings request has no last user message for the chat trigger rule to match.
    """
    (emb_triggers, triggers), (embeddings, *content) = builtin_rules("triggers"), builtin_rules("defaults")
    return RuleSet([emb_triggers, embeddings, triggers, *content])
