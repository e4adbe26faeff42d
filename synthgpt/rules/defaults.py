"""The built-in rule set: what `synthgpt serve` answers with no rule file (DESIGN.md §4)."""

from __future__ import annotations

from ..generators.text import Prose
from .matchers import always
from .rule import Rule, RuleSet

__all__ = ["default_rules"]


def default_rules() -> RuleSet:
    return RuleSet([Rule("default", always(), Prose())])
