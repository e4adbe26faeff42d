"""Templates: a generator built with bad arguments inside a template, and captures named like built-ins."""

from __future__ import annotations

import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.errors import DrawError


def _ask(rule: Rule, text: str) -> str:
    mock = MockGPT(seed=0, rules=[rule])
    return mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).text


def test_bad_arguments_inside_a_template_are_a_draw_error_naming_the_rule() -> None:
    with pytest.raises(DrawError) as info:
        _ask(Rule("t", m.always(), g.template("{{ integer(5, 1) }}")), "hi")
    assert str(info.value) == "rule 't': template: `integer` takes `lo` <= `hi`, got 5 > 1"


def test_a_capture_named_like_a_built_in_wins() -> None:
    rule = Rule("c", m.last_user(regex=r"I use (?P<model>\w+)"), g.template("You use {{ model }}"))
    assert _ask(rule, "I use vim") == "You use vim"


def test_faker_sets_are_sorted_lists() -> None:
    rule = Rule("s", m.always(), g.objects({"s": g.fake("pyset", nb_elements=4, value_types=[str])}))
    text = _ask(rule, "hi")
    assert text == '{"s":["TgVwENkZzmBiIhirazeG","kILTWTlVxjYmhpoGSJwD"]}'
