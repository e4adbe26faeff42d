"""The first-match search over a RuleSet, compiled once per rule list.

A rule whose matcher can only match one API (`api(…)`) or exact model names (`model(…)` without a glob)
is left out of the search for every other request: the `api` and `model` each matcher requires are read
from its data (`requirements`) when the rules are compiled, and the candidates of one (api, model) pair are
kept once found. Many rules testing the last user message's text have those tests run together, in one
RE2 pass per request (`text_index.py`), and a rule whose test failed is not asked. What remains is one
bound `match` call per candidate, in rule order, so the answer is the one the plain search over every rule
would give.

The compiled form follows the rules: `RuleSet` recompiles when its list changes, or when any rule's
`matcher` or `times` is set (`rule.edits`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..model import ModelRequest
from .matcher_base import All, Any_, Captures, Matcher
from .predicates import Api, Model
from .text_index import MIN_INDEXED, TextIndex

if TYPE_CHECKING:
    from .rule import Rule

__all__ = ["Candidate", "Dispatch", "requirements"]

Needs = tuple[frozenset[str] | None, frozenset[str] | None]
"""(the APIs, the exact model names) a matcher can match at all; None: any."""

Candidate = tuple[int, "Rule", Callable[[ModelRequest], Captures | None], frozenset[int] | None]
"""(position in the rule list, the rule, its matcher's bound `match`, the ids of the last-user tests in
`Dispatch.text_index` one of which it needs to pass, or None)."""

_KEPT = 512  # (api, model) pairs whose candidates are kept: model names come from clients


def requirements(matcher: Matcher) -> Needs:
    """What `matcher` requires of a request's api and model, judged from its data (exact types only: a
    subclass may match differently)."""
    kind = type(matcher)
    if kind is Api:
        return frozenset(matcher.kinds), None  # type: ignore[attr-defined]
    if kind is Model and not matcher.glob:  # type: ignore[attr-defined]
        return None, frozenset((matcher.pattern,))  # type: ignore[attr-defined]
    if kind is All:  # every part must hold: what each requires, together
        apis: frozenset[str] | None = None
        models: frozenset[str] | None = None
        for part in matcher.parts:  # type: ignore[attr-defined]
            a, m = requirements(part)
            apis = a if apis is None else apis if a is None else apis & a
            models = m if models is None else models if m is None else models & m
        return apis, models
    if kind is Any_:  # one part must hold: what any of them allows (an empty `any` matches nothing)
        found_apis: set[str] = set()
        found_models: set[str] = set()
        any_api = any_model = False
        for part in matcher.parts:  # type: ignore[attr-defined]
            a, m = requirements(part)
            any_api = any_api or a is None
            any_model = any_model or m is None
            found_apis |= a or set()
            found_models |= m or set()
        return (None if any_api else frozenset(found_apis)), (None if any_model else frozenset(found_models))
    return None, None


class Dispatch:
    """One rule list, compiled for `RuleSet.resolve` (see the module docstring)."""

    __slots__ = ("_candidates", "needs", "order_free", "rules", "text_index")

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        self.needs: tuple[Needs, ...] = tuple(requirements(r.matcher) for r in self.rules)
        free: list[bool] = []
        times_seen = False
        for r in self.rules:
            times_seen = times_seen or r.times is not None
            free.append(not times_seen)
        self.order_free = tuple(free)
        """Per rule: no rule with `times` at or before it, so which rule answers does not depend on the
        calls before (see `MockGPT.resolve`'s `replayable`)."""
        self._candidates: dict[tuple[str, str], tuple[Candidate, ...]] = {}
        index = TextIndex(self.rules)
        self.text_index = index if index.size >= MIN_INDEXED else None
        """The last-user tests of many rules, run in one RE2 pass per request (`text_index.py`)."""

    def candidates(self, api: str, model: str) -> tuple[Candidate, ...]:
        """The rules a request of this api and model may match, in order."""
        key = (api, model)
        found = self._candidates.get(key)
        if found is None:
            tests = self.text_index.needs if self.text_index is not None else (None,) * len(self.rules)
            found = tuple(
                (i, r, r.matcher.match, test)
                for i, (r, (apis, models), test) in enumerate(zip(self.rules, self.needs, tests, strict=True))
                if (apis is None or api in apis) and (models is None or model in models)
            )
            if len(self._candidates) < _KEPT:
                self._candidates[key] = found
        return found
