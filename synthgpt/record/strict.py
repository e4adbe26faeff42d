"""`synthgpt serve --strict`: a request no rule of the files answers gets a 404, not a built-in answer.

A recording (`synthgpt record`) includes the built-in rules, so an unrecorded request still gets a
synthetic answer. Under `--strict` the built-in fallback (`builtin:defaults`) is taken out and a last rule
answers everything else with a 404 in the API's own error shape (`no_recorded_answer`): a test replaying
traffic learns at once that it sent something never recorded. The `!MOCK_…!` triggers stay.
"""

from __future__ import annotations

from ..model import ErrorSpec
from ..rules.defaults import builtin_rules
from ..rules.matchers import always
from ..rules.rule import Rule, RuleSet

__all__ = ["STRICT_RULE", "strict_rules"]

STRICT_RULE = "no-recorded-answer"
"""The name of the rule `--strict` adds (what the journal and `explain` name for a refused request)."""

_DEFAULTS = frozenset(rule.name for rule in builtin_rules("defaults"))


def strict_error() -> ErrorSpec:
    return ErrorSpec(
        status=404,
        message="No recorded answer matches this request (synthgpt serve --strict): record it with "
        "`synthgpt record`, or serve without --strict to let the built-in rules answer it.",
        type="invalid_request_error",
        code="no_recorded_answer",
    )


def strict_rules(rules: RuleSet) -> RuleSet:
    """`rules` without the built-in fallback, ending with the 404 rule. The rules themselves are shared
    (their call counts go on), as a reload shares nothing: the files' rules, `models` and profiles kept."""
    # built-in rules are the ones no file wrote (`source` is None): a file's own rule named `embeddings`
    # (allowed without `include: builtin`) stays
    kept = [r for r in rules if not (r.source is None and r.name in _DEFAULTS)]
    strict = RuleSet(kept, models=[*rules.profiles, *(m for m in rules.models if not _profiled(rules, m))])
    strict.add(Rule(STRICT_RULE, always(), error=strict_error()))
    return strict


def _profiled(rules: RuleSet, name: str) -> bool:
    return any(p.name == name for p in rules.profiles)
