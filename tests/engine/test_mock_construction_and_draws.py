"""MockGPT's constructor, `reasoning=True`, failed draws and `times`, and snapshots of what users pass in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import DrawError, FixedClock, MockGPT, Rule, RuleSet, StepClock
from synthgpt import generators as g
from synthgpt import matchers as m


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


# ------------------------------------------------------------------------------------ constructor


def test_rules_may_be_one_rule_a_list_a_tuple_a_generator_or_a_ruleset() -> None:
    def make() -> Rule:
        return Rule("only", m.always(), "hi")

    for rules in (make(), [make()], (make(),), (r for r in [make()]), RuleSet([make()])):
        mock = MockGPT(rules)
        assert [r.name for r in mock.rules] == ["only"]
        assert mock.generate(ask("x")).text == "hi"
    ruleset = RuleSet([make()])
    assert MockGPT(ruleset).rules is ruleset


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("rules", "MockGPT rules must be a Rule, an iterable of Rules or a RuleSet, got str"),
        (42, "MockGPT rules must be a Rule, an iterable of Rules or a RuleSet, got int"),
        ({"a": 1}, "MockGPT rules must be a Rule, an iterable of Rules or a RuleSet, got dict"),
        ([Rule("a", m.always(), "x"), "b"], "MockGPT rules[1] must be a Rule, got str"),
    ],
)
def test_anything_else_is_a_clear_type_error(rules: Any, message: str) -> None:
    with pytest.raises(TypeError) as info:
        MockGPT(rules)
    assert str(info.value) == message


def test_clock_may_be_a_spec_string_and_must_be_a_clock() -> None:
    assert repr(MockGPT([Rule("a", m.always(), "x")], clock="step:10:2").clock) == "StepClock(10, step=2)"
    assert MockGPT([Rule("a", m.always(), "x")], clock="fixed:5").generate(ask("x")).created == 5
    with pytest.raises(ValueError, match="bad clock 'hourly'"):
        MockGPT(clock="hourly")
    with pytest.raises(TypeError) as info:
        MockGPT(clock=1_700_000_000)  # type: ignore[arg-type]
    assert str(info.value) == (
        "MockGPT clock must be a Clock (FixedClock, StepClock, SystemClock, or anything with now() -> float) "
        "or a spec like 'fixed:1700000000', got int"
    )


# ------------------------------------------------------------------------------------ reasoning


def test_reasoning_true_always_thinks_auto_only_when_asked_false_never() -> None:
    plain, asking = ask("plan my budget"), ask("plan my budget", reasoning={"effort": "low"})

    def kinds(reasoning: Any, request: dict[str, Any]) -> list[str]:
        out = MockGPT([Rule("r", m.always(), "answer", reasoning=reasoning)]).generate(request)
        return [p.kind for p in out.parts]

    assert kinds(True, plain) == ["reasoning", "text"]
    assert kinds(True, asking) == ["reasoning", "text"]
    assert kinds("auto", plain) == ["text"]
    assert kinds("auto", asking) == ["reasoning", "text"]
    assert kinds(False, plain) == kinds(False, asking) == ["text"]
    forced = MockGPT([Rule("r", m.always(), "answer", reasoning=True)]).generate(plain)
    assert forced.reasoning == (
        "The user is asking about plan. They want an explanation, so a few clear sentences should do. "
        "A main answer should cover the main points first. I will start with the most useful point and stay "
        "brief."
    )
    assert forced.usage.reasoning_tokens > 0
    errors = MockGPT([Rule("r", m.always(), error={"status": 500}, reasoning=True)]).generate(plain)
    assert errors.error is not None and errors.reasoning == ""


# ------------------------------------------------------------------------------------ failed draws


def _fails_on_boom(text: str) -> str:
    if "boom" in text:
        raise ZeroDivisionError("division by zero")
    return text.upper()


def test_a_failed_draw_does_not_use_up_a_times_slot_nor_count_as_a_call() -> None:
    flaky = Rule("flaky", m.always(), g.last_user().map(_fails_on_boom), times=1)
    mock = MockGPT([flaky, Rule("fallback", m.always(), "fallback")])
    with pytest.raises(DrawError, match="rule 'flaky': ZeroDivisionError: division by zero"):
        mock.generate(ask("boom"))
    assert (flaky.call_count, flaky.called, flaky.calls, mock.records) == (0, False, [], [])
    assert mock.generate(ask("fine")).text == "FINE"  # its one answer is still there
    assert mock.generate(ask("fine")).text == "fallback"
    assert flaky.call_count == 1 and [r.rule for r in mock.records] == ["flaky", "fallback"]


def test_a_failed_draw_does_not_advance_the_call_index() -> None:
    def check(text: str) -> str:
        if text == "boom":
            raise ValueError("no")
        return text

    mock = MockGPT(
        [
            Rule(
                "r",
                m.always(),
                g.objects({"text": g.last_user().map(check), "n": g.template("{{ call_index }}")}),
            )
        ]
    )
    assert json.loads(mock.generate(ask("a")).text)["n"] == "0"
    with pytest.raises(DrawError):
        mock.generate(ask("boom"))
    assert json.loads(mock.generate(ask("b")).text)["n"] == "1"
    assert mock.rules["r"].call_count == 2


# ------------------------------------------------------------------------------------ snapshots


def test_mutating_tool_call_arguments_passed_in_changes_no_answer() -> None:
    args = {"city": "Paris", "opts": {"units": ["c"], "deep": {"x": 1}}}
    fixed = {"name": "t", "arguments": {"a": [1]}}
    mock = MockGPT([Rule("r", m.always(), g.reply(tool_calls=[g.tool_call("t", args), g.just(fixed)]))])
    before = mock.generate(ask("x"))
    args["city"] = "Rome"
    args["opts"]["units"].append("f")  # type: ignore[index]
    args["opts"]["deep"]["x"] = 2  # type: ignore[index]
    fixed["arguments"]["a"].append(2)  # type: ignore[index]
    after = mock.generate(ask("x"))
    assert after == before
    assert [tc.arguments for tc in after.tool_calls] == [
        '{"city":"Paris","opts":{"units":["c"],"deep":{"x":1}}}',
        '{"a":[1]}',
    ]


def test_mutating_parsed_tool_arguments_or_structured_output_changes_no_record() -> None:
    mock = MockGPT(
        [
            Rule("tool", m.last_user(contains="tool"), g.tool_call("t", {"a": {"b": 1}})),
            Rule("json", m.always(), g.objects({"a": {"b": g.just([1])}})),
        ]
    )
    tool = mock.generate(ask("tool"))
    parsed = tool.tool_calls[0].parsed_arguments()
    parsed["a"]["b"] = 99
    assert mock.records[0].output.tool_calls[0].parsed_arguments() == {"a": {"b": 1}}
    doc = mock.generate(ask("json"))
    data = json.loads(doc.text)
    data["a"]["b"].append(2)
    assert json.loads(mock.records[1].output.text) == {"a": {"b": [1]}}
    assert mock.generate(ask("json")).text == doc.text == '{"a":{"b":[1]}}'


def test_mutating_values_passed_to_just_or_choice_changes_no_answer() -> None:
    value = {"k": [1, 2]}
    option = {"o": {"p": 1}}
    just, choice = g.just(value), g.choice([option])
    value["k"].append(3)
    option["o"]["p"] = 2
    assert just.example() == {"k": [1, 2]} and repr(just) == "just({'k': [1, 2]})"
    assert choice.example() == {"o": {"p": 1}}


def test_clock_helpers_still_default_to_the_fixed_instant() -> None:
    assert repr(MockGPT([Rule("a", m.always(), "x")]).clock) == repr(FixedClock())
    assert isinstance(MockGPT([Rule("a", m.always(), "x")], clock=StepClock()).clock, StepClock)


# ------------------------------------------------------------------------------------ matchers' names


def test_round_is_the_dsl_name_without_shadowing_the_builtin() -> None:
    import synthgpt.rules.matchers as module
    from synthgpt.rules.matchers import round as round_matcher

    assert round_matcher is m.round is module.tool_round
    assert "round" not in vars(module)  # the module's own code still sees the builtin
    assert repr(m.round(2)) == "round(2)" and repr(m.round(min=1, max=3)) == "round(min=1, max=3)"
    namespace: dict[str, Any] = {}
    exec("from synthgpt.rules.matchers import *", namespace)
    assert namespace["round"] is module.tool_round
    with pytest.raises(AttributeError, match="has no attribute 'rond'"):
        module.rond  # type: ignore[attr-defined]  # noqa: B018


def test_matchers_all_lists_only_matchers() -> None:
    import synthgpt.rules.matchers as module
    from synthgpt.rules.build import MATCHERS

    assert "tool_rounds" not in module.__all__ and callable(module.tool_rounds)  # a helper, still there
    functions = [n for n in module.__all__ if n[0].islower() and n not in ("as_matcher", "where")]
    assert sorted(functions) == sorted(MATCHERS)
    assert "round" in MATCHERS


# ------------------------------------------------------------------------------------ generator equality


def test_generators_are_equal_by_expression_and_by_the_functions_inside() -> None:
    def first(x: int) -> int:
        return x + 1

    def second(x: int) -> int:
        return x + 2

    second.__qualname__ = first.__qualname__  # prints alike, draws differently
    a, b, same = g.integer(0, 9).map(first), g.integer(0, 9).map(second), g.integer(0, 9).map(first)
    assert repr(a) == repr(b) and a.example() != b.example()
    assert a != b and a == same and hash(a) == hash(same)
    assert g.objects({"x": a}) != g.objects({"x": b}) and g.objects({"x": a}) == g.objects({"x": same})
    assert g.lists(g.integer().filter(first)) != g.lists(g.integer().filter(second))
    assert g.integer().bind(lambda n: g.words(n, n)) != g.integer().bind(lambda n: g.words(n, n))
    assert g.words(1, 2) == g.words(1, 2) and g.words(1, 2) != g.words(1, 3) and g.just(1) != g.integer(1, 1)
    assert {g.words(1, 2): "a"}[g.words(1, 2)] == "a"  # usable as keys, as weighted({gen: w}) needs
    assert len({g.words(1, 2), g.words(1, 2), a, same, b}) == 3


# ------------------------------------------------------------------------------------ embeddings by name


def test_embeddings_is_a_registered_generator_usable_from_rule_files() -> None:
    from synthgpt import embed_text, load_text
    from synthgpt.generators.embedding import Embeddings, EmbeddingVectors

    assert g.REGISTRY["embeddings"] is g.embeddings and g.lookup("embeddings") is g.embeddings
    assert g.embeddings(dimensions=4) == Embeddings(dimensions=4)
    assert "answer" not in g.REGISTRY and "error" not in g.REGISTRY  # delivery wrappers, see docs/engine.md
    loaded = load_text(
        "rules:\n"
        "  - {name: vec, match: {api: embeddings}, generate: {embeddings: {dimensions: 4}}}\n"
        # a data key one letter from a generator name stays data
        "  - {name: doc, match: always, generate: {objects: {meta: {embedding: [1, 2]}}}}\n"
    )
    mock = MockGPT(loaded.ruleset, seed=3)
    out = mock.generate({"api": "embeddings", "model": "m", "inputs": ["hello world"]})
    assert out.embeddings == (embed_text("hello world", model="m", dimensions=4, seed=3),)
    assert json.loads(mock.generate(ask("x")).text) == {"meta": {"embedding": [1, 2]}}
    assert isinstance(g.embeddings().example(), EmbeddingVectors)
    with pytest.raises(ValueError, match="embeddings: dimensions must be a whole number, got '4'"):
        g.embeddings(dimensions="4")  # type: ignore[arg-type]
