"""Why a request is answered by the rule it is: each rule tried in order, with its first failing predicate.

`trace_rules(rules, request)` walks the rules as `RuleSet.resolve` does, but claims nothing: a `times` rule
keeps its calls and no history is written, so explaining a request never changes what the next real call
gets. It stops at the rule that would answer (or after the last rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model import ModelRequest
from .matchers import All, Matcher

if TYPE_CHECKING:
    from .rule import Rule

__all__ = ["RuleVerdict", "first_failing", "trace_rules"]


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    """One rule's part in answering a request."""

    rule: str
    source: str | None
    """Where the rule was written (`file:line:col`), None for a rule built in Python."""
    matched: bool
    """The rule answers the request (the last verdict of a trace, if any rule does)."""
    failed: str | None = None
    """The first predicate the request did not satisfy, as the expression that built it."""
    used_up: bool = False
    """The matcher matched, but the rule has answered its `times` calls already."""
    error: str | None = None
    """The matcher itself raised (a `where` callable): the real call fails here too."""
    captures: dict[str, str] = field(default_factory=dict)
    """What the answering rule's matcher captured (regex named groups)."""
    call_index: int = 0
    """How many calls the rule has answered: the index the next call draws with (`sequence`)."""

    @property
    def reason(self) -> str:
        """Why the rule did not answer, in words (empty for the rule that does)."""
        if self.error is not None:
            return f"its matcher raised {self.error}"
        if self.used_up:
            return "matched, but its `times` are used up"
        if self.failed is not None:
            return f"{self.failed} is false"
        return ""


def first_failing(matcher: Matcher, request: ModelRequest) -> Matcher | None:
    """The predicate that makes `matcher` false for `request` (None when it matches).

    In a conjunction that is the first part that fails, looked into in turn; an alternation (`a | b`) or a
    negation fails as a whole, so it is itself the answer.
    """
    if matcher.match(request) is not None:
        return None
    if isinstance(matcher, All):
        for part in matcher.parts:
            if part.match(request) is None:
                return first_failing(part, request)
    return matcher


def trace_rules(rules: Iterable[Rule], request: ModelRequest) -> tuple[RuleVerdict, ...]:
    """Each rule tried for `request`, in order, up to and including the one that would answer."""
    out: list[RuleVerdict] = []
    for rule in rules:
        try:
            caps = rule.matcher.match(request)
            failing = first_failing(rule.matcher, request) if caps is None else None
        except Exception as exc:  # a user's callable: the real call would fail on it as well
            out.append(RuleVerdict(rule.name, rule.source, False, error=f"{type(exc).__name__}: {exc}"))
            break
        if failing is not None or caps is None:
            described = repr(failing if failing is not None else rule.matcher)
            out.append(RuleVerdict(rule.name, rule.source, False, failed=described))
            continue
        count = rule.call_count
        if rule.times is not None and count >= rule.times:
            out.append(RuleVerdict(rule.name, rule.source, False, used_up=True, call_index=count))
            continue
        out.append(RuleVerdict(rule.name, rule.source, True, captures=dict(caps), call_index=count))
        break
    return tuple(out)
