"""`MockGPT.explain`: the trace of the rules (first failing predicate, captures, source) and the answer the
next real call gets, without using up `times`, journaling or moving the clock."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import ContextWindowExceeded, MockGPT, NoRuleMatched, Rule, StepClock
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.errors import DrawError
from synthgpt.rules.loader import load_text
from synthgpt.rules.script import sequence
from synthgpt.rules.trace import RuleVerdict


def ask(text: str, model: str = "gpt-4o", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


WEATHER = r"weather in (?P<city>\w+)"


def rules() -> list[Rule]:
    return [
        Rule("refund", m.model("gpt-4o*") & m.last_user(contains="refund") & m.has_tools(), "Refunds."),
        Rule("weather", m.has_tools() | m.last_user(regex=WEATHER), g.template("Sunny in {{ city }}.")),
        Rule("not-hi", ~m.last_user(contains="weather"), "Not the weather."),
        Rule("default", m.always(), g.summary(max_chars=80)),
    ]


def test_each_earlier_rule_gives_its_first_failing_predicate_and_the_winner_its_captures() -> None:
    mock = MockGPT(rules(), seed=3)
    explained = mock.explain(ask("What is the weather in Lisbon?"))
    assert explained.trace == (
        RuleVerdict("refund", None, False, failed="last_user(contains='refund')"),
        RuleVerdict("weather", None, True, captures={"city": "Lisbon"}),
    )
    assert explained.rule == "weather"
    assert explained.trace_lines() == [
        "   refund: last_user(contains='refund') is false",
        "=> weather: answers; captures city='Lisbon'",
    ]
    assert explained.output is not None and explained.output.text == "Sunny in Lisbon."


def test_an_alternation_and_a_negation_fail_as_a_whole() -> None:
    explained = MockGPT(rules()).explain(ask("hello", model="claude"))
    assert [(v.rule, v.failed) for v in explained.trace] == [
        ("refund", "model('gpt-4o*')"),
        ("weather", "has_tools() | last_user(regex='weather in (?P<city>\\\\w+)')"),
        ("not-hi", None),
    ]
    explained = MockGPT(rules()).explain(ask("the weather", model="claude"))
    assert [v.failed for v in explained.trace[:3]] == [
        "model('gpt-4o*')",
        "has_tools() | last_user(regex='weather in (?P<city>\\\\w+)')",
        "~last_user(contains='weather')",
    ]
    assert explained.rule == "default"


def test_the_answer_is_the_next_calls_answer_and_nothing_is_used_up_or_recorded() -> None:
    mock = MockGPT([Rule("once", m.always(), "first", times=1), Rule("then", m.always(), sequence("a", "b"))],
                   seed=9, clock=StepClock(100, step=5))  # fmt: skip
    for _ in range(3):  # explaining again and again changes nothing
        explained = mock.explain(ask("hi"))
        assert explained.rule == "once"
    assert mock.records == [] and mock.rules["once"].call_count == 0
    assert explained.output == mock.generate(ask("hi"))  # same rule, seed, clock reading, text
    used_up = mock.explain(ask("hi"))
    assert used_up.trace[0] == RuleVerdict("once", None, False, used_up=True, call_index=1)
    assert used_up.trace_lines()[0] == "   once: matched, but its `times` are used up"
    assert used_up.output is not None and used_up.output.text == "a"
    assert used_up.output == mock.generate(ask("hi"))
    assert mock.explain(ask("hi")).output == mock.generate(ask("hi"))  # the sequence's next step, "b"
    assert [r.output.text for r in mock.records] == ["first", "a", "b"]
    assert [r.at for r in mock.records] == [100.0, 105.0, 110.0]  # explaining never read the StepClock


def test_another_seed_draws_as_an_engine_with_that_seed_and_leaves_this_one_alone() -> None:
    mock = MockGPT(rules(), seed=1)
    other = mock.explain(ask("Tell me about tide pools"), seed=2)
    assert other.seed == 2 and mock.seed == 1
    assert other.output == MockGPT(rules(), seed=2).generate(ask("Tell me about tide pools"))
    assert other.output != mock.explain(ask("Tell me about tide pools")).output
    tide = ask("Tell me about tide pools")
    assert mock.explain(tide).output == mock.generate(tide)


def test_rules_from_a_file_carry_their_file_and_line() -> None:
    text = (
        "rules:\n"
        "  - name: refund\n"
        "    match: {last_user: {contains: refund}}\n"
        "    output: {text: Refunds take 5 days.}\n"
        "  - name: default\n"
        "    match: always\n"
        "    output: {text: Hello.}\n"
    )
    mock = load_text(text, "rules.yaml").mock()
    explained = mock.explain(ask("hi"))
    assert explained.trace_lines() == [
        "   refund  (rules.yaml:2:5): last_user(contains='refund') is false",
        "=> default  (rules.yaml:5:5): answers",
    ]
    assert explained.trace_json() == [
        {"rule": "refund", "source": "rules.yaml:2:5", "matched": False,
         "failed": "last_user(contains='refund')", "used_up": False, "error": None,
         "reason": "last_user(contains='refund') is false"},
        {"rule": "default", "source": "rules.yaml:5:5", "matched": True, "captures": {}, "call_index": 0},
    ]  # fmt: skip


def test_what_the_real_call_would_raise_is_kept_with_the_trace() -> None:
    nothing = MockGPT([Rule("only", m.model("x"), "x")]).explain(ask("hi"))
    assert isinstance(nothing.error, NoRuleMatched) and nothing.output is None and nothing.rule is None
    assert nothing.trace_lines()[:2] == ["   only: model('x') is false", "   no rule answers"]

    def boom(request: object) -> bool:
        raise ValueError("bad matcher")

    raised = MockGPT([Rule("odd", m.where(boom), "x"), Rule("d", m.always(), "d")]).explain(ask("hi"))
    assert raised.trace == (RuleVerdict("odd", None, False, error="ValueError: bad matcher"),)
    assert isinstance(raised.error, DrawError)
    assert str(raised.error) == "rule 'odd': its matcher raised ValueError: bad matcher"

    small = MockGPT(rules(), context_window=5).explain(ask("a long question about many things"))
    assert isinstance(small.error, ContextWindowExceeded) and small.rule == "not-hi"

    failing = MockGPT([Rule("f", m.always(), g.integer(1, 3).filter(lambda n: n > 5))]).explain(ask("hi"))
    assert isinstance(failing.error, DrawError) and str(failing.error).startswith("rule 'f': ")


@pytest.mark.parametrize("seed", [True, "1", 1.5])
def test_a_seed_that_is_not_a_whole_number_is_refused(seed: Any) -> None:
    with pytest.raises(ValueError, match="seed must be a whole number"):
        MockGPT(rules()).explain(ask("hi"), seed=seed)
