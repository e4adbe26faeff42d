"""What `MockGPT(...)` accepts for its rules and clock, turned into what it holds (or a TypeError saying
what was given instead)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..clock import Clock, FixedClock, parse_clock
from ..rules.rule import Rule, RuleSet

__all__ = ["as_clock", "as_ruleset"]


def as_ruleset(rules: object) -> RuleSet:
    """`MockGPT(rules=…)`: a RuleSet, one Rule, any iterable of Rules, or None for the built-in rules."""
    if rules is None:
        from ..rules.defaults import default_rules

        return default_rules()
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, Rule):
        return RuleSet([rules])
    if isinstance(rules, str | bytes | Mapping) or not isinstance(rules, Iterable):
        raise TypeError(
            f"MockGPT rules must be a Rule, an iterable of Rules or a RuleSet, got {type(rules).__name__}"
        )
    items = list(rules)
    for i, r in enumerate(items):
        if not isinstance(r, Rule):
            raise TypeError(f"MockGPT rules[{i}] must be a Rule, got {type(r).__name__}")
    return RuleSet(items)


def as_clock(clock: Clock | str | None) -> Clock:
    """`MockGPT(clock=…)`: a Clock, a spec like 'fixed:1700000000', or None for a FixedClock."""
    if isinstance(clock, str):
        return parse_clock(clock)
    if clock is not None and not isinstance(clock, Clock):
        raise TypeError(
            f"MockGPT clock must be a Clock (FixedClock, StepClock, SystemClock, or anything with "
            f"now() -> float) or a spec like 'fixed:1700000000', got {type(clock).__name__}"
        )
    return clock or FixedClock()
