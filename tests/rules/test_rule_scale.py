"""Many rules (issue 11, §5): 20,000 rules took `check` over 60 s and `serve` 45 s to start, as
`RuleSet.add` and the lint compared every pair. Timings live in bench/rule_scale.py; here, the
algorithmic property (comparisons per rule) and that the fast lint finds exactly what the pairwise one did."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import synthgpt.rules.check as check
from bench.rule_scale import rule_file
from synthgpt.rules import matchers as m
from synthgpt.rules.loader import load_files
from synthgpt.rules.matchers import Matcher
from synthgpt.rules.rule import Rule, RuleSet

ATOMS = [m.model("a"), m.model("b"), m.turn(1), m.has_tools(), m.last_user("x"), m.last_user("y")]


def _pairwise(rules: list[Rule]) -> list[int | None]:
    """What the lint computed before: every earlier rule asked in order."""
    return [
        next(
            (j for j in range(i) if rules[j].times is None and check.implies(r.matcher, rules[j].matcher)),
            None,
        )
        for i, r in enumerate(rules)
    ]


def _matchers() -> st.SearchStrategy[Matcher]:
    atoms = st.sampled_from([*ATOMS, m.always()])
    return st.recursive(
        atoms,
        lambda inner: st.lists(inner, min_size=1, max_size=3).flatmap(
            lambda parts: st.sampled_from([m.All(*parts), m.Any_(*parts)])
        ),
        max_leaves=6,
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_matchers(), st.booleans()), min_size=1, max_size=12))
def test_the_indexed_lint_finds_what_the_pairwise_one_did(specs: list[tuple[Matcher, bool]]) -> None:
    rules = [
        Rule(f"r{i}", matcher, "x", times=2 if limited else None)
        for i, (matcher, limited) in enumerate(specs)
    ]
    assert check._first_hiding(rules) == _pairwise(rules)


def test_lint_asks_a_handful_of_comparisons_per_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    real = check.implies

    def counted(a: Matcher, b: Matcher) -> bool:
        calls[0] += 1
        return real(a, b)

    monkeypatch.setattr(check, "implies", counted)
    n = 3000
    rules = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            matcher = m.last_user(f"topic {i}")
        elif kind == 1:  # one part shared by a third of the rules
            matcher = m.model("gpt-4o") & m.last_user(f"subject {i}")
        else:
            matcher = m.last_user(f"alpha {i}") | m.last_user(f"beta {i}")
        rules.append(Rule(f"r{i}", matcher, "x", times=3 if i % 50 == 0 else None))
    rules.append(Rule("hidden", m.last_user("topic 3"), "x"))  # the same as r3: found
    rules.append(Rule("fallback", m.always(), "x"))
    hiding = check._first_hiding(rules)
    assert hiding[-2] == 3 and hiding.count(None) == n + 1
    assert calls[0] <= 2 * n  # pairwise: n * (n - 1) / 2 = 4.5 million


def test_ruleset_add_keeps_names_unique_without_scanning() -> None:
    rules = RuleSet(Rule(f"r{i}", m.always(), "x") for i in range(20_000))
    assert len(rules) == 20_000
    with pytest.raises(Exception, match="two rules are named 'r19999'"):
        rules.add(Rule("r19999", m.always(), "x"))
    rules.rules.pop()  # the list is public: the name index follows a direct change
    rules.add(Rule("r19999", m.always(), "y"))
    with pytest.raises(Exception, match="two rules are named 'r5'"):
        rules.add(Rule("r5", m.always(), "x"))


def test_twenty_thousand_rules_load_and_check(tmp_path: Path) -> None:
    lines = ["rules:"]
    lines += [f'  - {{name: r{i}, match: {{last_user: {{contains: "topic {i}"}}}}, output: {{text: "a{i}"}}}}'
              for i in range(20_000)]  # fmt: skip
    path = tmp_path / "many.yaml"
    path.write_text("\n".join(lines) + "\n")
    loaded = load_files([path])
    assert len(loaded.ruleset) == 20_000
    assert check.lint(loaded) == []


def test_loading_binds_each_call_directly_and_parses_each_regex_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Besides YAML, loading 20,000 rules spent its ~9 s in inspect's general argument binding (once per
    # matcher and generator) and in parsing every rule regex three or four times (a check, what RE2
    # lacks, the literal every match holds, the template's capture names). Counted, not timed.
    counts = {"bind": 0, "parse": 0}
    real_bind = inspect.Signature.bind
    parser: Any = importlib.import_module("re._parser")
    real_parse = parser.parse

    def bind(self: inspect.Signature, *args: Any, **kwargs: Any) -> inspect.BoundArguments:
        counts["bind"] += 1
        return real_bind(self, *args, **kwargs)

    def parse(*args: Any, **kwargs: Any) -> Any:
        counts["parse"] += 1
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(inspect.Signature, "bind", bind)
    monkeypatch.setattr(parser, "parse", parse)
    path = tmp_path / "rules.yaml"
    path.write_text(rule_file(400))  # contains, all, any and regex rules: 99 regexes
    loaded = load_files([path])
    assert len(loaded.ruleset) == 400
    assert counts == {"bind": 0, "parse": 99}
