"""Matchers, rules and rule sets."""

from __future__ import annotations

from . import matchers
from .rule import Resolved, Rule, RuleSet

__all__ = ["Resolved", "Rule", "RuleSet", "matchers"]
