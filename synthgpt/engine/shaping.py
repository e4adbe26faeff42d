"""What the engine does to a drawn choice before it is sent: stop sequences, the output-token limit, the
text a stream plan's deltas spell, and the usage counted from the result."""

from __future__ import annotations

import re
from typing import Any, Final

from ..errors import DrawError
from ..model import Choice, ReasoningPart, StreamPlan, TextOut, ToolCallPart, Usage
from ..tokens import count_tokens, cut_to_tokens
from .assemble import cut_choice, usage, with_text

__all__ = ["apply_limit", "apply_stop", "count_usage", "spelled_by_deltas"]


def apply_stop(choice: Choice, stops: tuple[str, ...]) -> Choice:
    """End the text before the first stop sequence completed in it, finishing with `stop`.

    The answer's text parts are searched as the one stream a model writes, so a sequence may begin in one
    part and end in the next. A model stops generating there, so nothing after it (more text, tool calls)
    exists. Reasoning is not searched: the stop applies to the answer. Applied before the token limit, so
    usage counts what is sent.
    """
    if not stops:
        return choice
    text = choice.text
    lo, hi = 0, len(text)
    if len(text) > _LONG_ANSWER and len(stops) > _FEW_STOPS:
        # one pass finds the leftmost stop: no stop begins before it, so the one that ends first begins
        # there or later and ends by this one's end (16,000 stops over 1 MB of answer: 7 s of finds)
        leftmost = re.compile("|".join(map(re.escape, stops))).search(text)
        if leftmost is None:
            return choice
        lo, hi = leftmost.span()
    # the sequence whose end comes first is the one generation stops at; on a tie, the longer one
    hits = [(at + len(s), at, s) for s in stops if (at := text.find(s, lo, hi)) >= 0]
    if not hits:
        return choice
    _, at, seq = min(hits)
    kept: list[Any] = []
    start = 0  # where the current text part begins in the joined text
    for p in choice.parts:
        if isinstance(p, TextOut):
            end = start + len(p.text)
            if end > at:  # the sequence begins in this part: what precedes it is the last text sent
                if at > start:
                    kept.append(p.model_copy(update={"text": p.text[: at - start]}))
                break
            start = end
        kept.append(p)
    return Choice(parts=tuple(kept), finish_reason="stop", stop_sequence=seq)


_LONG_ANSWER: Final = 32_768
_FEW_STOPS: Final = 8
"""Over an answer longer than `_LONG_ANSWER` characters, more than `_FEW_STOPS` stops are found by one
pass of a pattern of them all. Compiling it costs ~17 µs a stop, a find ~0.5 ns a character: the pattern
pays from ~32,000 characters (and 100,000 stops over a short answer took 2 s to compile)."""


def apply_limit(choice: Choice, limit: int | None, cut: int | None) -> Choice:
    """Cut reasoning, then text, to the output-token budget; a cut answer finishes with `length`."""
    budget = min(x for x in (limit, cut) if x is not None) if (limit or cut is not None) else None
    if budget is None:
        return choice
    parts: list[Any] = []
    was_cut = False
    for p in choice.parts:
        if isinstance(p, TextOut | ReasoningPart):
            text, used, did = cut_to_tokens(p.text, budget)
            budget -= used
            if did:
                was_cut = True
            if text or not did:
                exact = (type(p) is TextOut or type(p) is ReasoningPart) and type(text) is str
                parts.append(with_text(p, text) if exact else p.model_copy(update={"text": text}))
            if did:
                break
        elif isinstance(p, ToolCallPart):
            # a call costs what usage counts for it (name + arguments); one that does not fit is cut like
            # text, as the real APIs do: its arguments end mid-JSON and the answer finishes with `length`
            name_tokens = count_tokens(p.name)
            args, used, did = cut_to_tokens(p.arguments, max(0, budget - name_tokens))
            name_fits = budget >= name_tokens
            budget -= name_tokens + used
            if did:
                was_cut = True
                if name_fits:  # the call began: the part of its arguments written so far
                    parts.append(p.model_copy(update={"arguments": args}))
                break
            parts.append(p)
        else:
            parts.append(p)
    if cut is not None and not was_cut:
        was_cut = True  # the fault asks for `length` even when the text happened to fit
    if not was_cut:
        return choice
    return cut_choice(tuple(parts))


def count_usage(prompt_tokens: int, choices: list[Choice]) -> Usage:
    completion = reasoning = 0
    for c in choices:
        for p in c.parts:
            if isinstance(p, ReasoningPart):
                n = count_tokens(p.text)
                reasoning += n
                completion += n
            elif isinstance(p, TextOut):
                completion += count_tokens(p.text)
            else:
                completion += count_tokens(p.name) + count_tokens(p.arguments)
    if type(prompt_tokens) is int:  # the counts are ints: nothing for validation to convert
        return usage(prompt_tokens, completion, reasoning)
    return Usage(prompt_tokens=prompt_tokens, completion_tokens=completion, reasoning_tokens=reasoning)


def spelled_by_deltas(choice: Choice, plan: StreamPlan | None, rule: str) -> Choice:
    """A choice whose text the stream plan's explicit deltas spell: an answer without text gets theirs; an
    answer with other text is the rule's mistake, said now rather than streamed as something else."""
    if plan is None or plan.deltas is None:
        return choice
    joined = "".join(plan.deltas)
    if not choice.text and not choice.tool_calls:
        return choice.model_copy(update={"parts": (*choice.parts, TextOut(text=joined))})
    if choice.text != joined:
        raise DrawError(
            f"rule {rule!r}: the stream's deltas spell {_short(joined)} but the answer's text is "
            f"{_short(choice.text)}; give the deltas alone (they are the text) or make them spell it"
        )
    return choice


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
