"""MockGPT: journal, snapshots, concurrency, `times`, call stats, limits, n > 1, reasoning, context window."""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
from typing import Any

import pydantic
import pytest

from synthgpt import (
    CallRecord,
    ContextWindowExceeded,
    MockGPT,
    ModelOutput,
    ModelRequest,
    NoRuleMatched,
    ReasoningPart,
    Rule,
    RuleSet,
    StepClock,
    TextOut,
    Usage,
)
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.tokens import count_tokens


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


# ------------------------------------------------------------------------------------------ snapshots


def test_mutating_the_request_dict_afterwards_changes_no_record() -> None:
    mock = MockGPT([Rule("echo", m.always(), g.echo())])
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "original"}]}],
        "tools": [{"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}],
    }
    pristine = copy.deepcopy(body)
    out = mock.generate(body)
    body["messages"][0]["content"][0]["text"] = "changed"  # type: ignore[index]
    body["messages"].append({"role": "user", "content": "more"})  # type: ignore[attr-defined]
    body["tools"][0]["parameters"]["properties"]["a"]["type"] = "integer"  # type: ignore[index]
    body["model"] = "other"
    record = mock.records[0]
    assert out.text == "original"
    assert record.request.last_user == "original"
    assert len(record.request.messages) == 1
    assert record.request.model == "m"
    assert record.request.tools[0].parameters["properties"]["a"]["type"] == "string"
    assert record.request == ModelRequest.from_dict(pristine)


def test_extra_values_are_copied_deeply() -> None:
    nested = {"k": (1, [2]), "d": {"e": [{"f": "g"}]}}
    mock = MockGPT([Rule("echo", m.always(), g.echo())])
    mock.generate({"model": "m", "messages": [{"role": "user", "content": "x"}], "extra": {"n": nested}})
    nested["k"][1].append(3)  # type: ignore[index]
    nested["d"]["e"][0]["f"] = "changed"  # type: ignore[index]
    assert mock.records[0].request.extra == {"n": {"k": (1, [2]), "d": {"e": [{"f": "g"}]}}}


def test_outputs_and_records_cannot_be_mutated() -> None:
    mock = MockGPT([Rule("r", m.always(), g.reply(text="hi", tool_calls=[g.tool_call("t", {"a": 1})]))])
    out = mock.generate(ask("x"))
    record = mock.records[0]
    assert record.output == out  # read back from the packed record: equal, a copy
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        out.model = "changed"  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        out.choices[0].finish_reason = "length"  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        out.parts[0].text = "changed"  # type: ignore[union-attr]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        out.usage.prompt_tokens = 0  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        record.request.messages[0].content = "changed"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        out.choices[0].parts.append(TextOut(text="x"))  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.rule = "other"  # type: ignore[misc]
    assert mock.records[0].output.text == "hi"


def test_fixed_value_answers_are_copied_per_call() -> None:
    mock = MockGPT([Rule("r", m.always(), g.just({"items": [1, 2]}).map(lambda d: d))])
    first = mock.rules["r"].generator.example()
    first["items"].append(3)
    assert mock.generate(ask("x")).text == '{"items":[1,2]}'


# ------------------------------------------------------------------------------------------ journal


def test_records_hold_request_rule_seed_output_and_clock_time() -> None:
    mock = MockGPT(
        [Rule("cap", m.last_user(regex=r"order (?P<order>\d+)"), "ok"), Rule("any", m.always(), "fallback")],
        seed=7,
        clock=StepClock(1000, step=10),
    )
    a = mock.generate(ask("order 42 please"))
    b = mock.generate(ask("hello"))
    first, second = mock.records
    assert (first.index, first.rule, first.captures, first.at, first.output) == (
        0,
        "cap",
        {"order": "42"},
        1000,
        a,
    )
    assert (second.index, second.rule, second.captures, second.at, second.output) == (1, "any", {}, 1010, b)
    assert (a.created, b.created) == (1000, 1010)
    assert first.seed == a.id_seed and second.seed == b.id_seed and first.seed != second.seed
    assert first.api == "python" and first.model == "m"
    assert first.duration_ms >= 0
    assert mock.journal.total == 2 and len(mock.journal) == 2
    assert mock.journal.list(lambda r: r.rule == "any") == [second]
    assert mock.journal[-1] == second and list(mock.journal) == [first, second]


def test_the_journal_is_bounded() -> None:
    mock = MockGPT([Rule("r", m.always(), g.words())], journal_size=3)
    for i in range(5):
        mock.generate(ask(f"call {i}"))
    assert [r.index for r in mock.records] == [2, 3, 4]
    assert [r.request.last_user for r in mock.records] == ["call 2", "call 3", "call 4"]
    assert mock.journal.total == 5 and mock.journal.maxlen == 3
    assert mock.rules["r"].call_count == 5


def test_a_journal_of_size_zero_keeps_nothing_but_counts() -> None:
    mock = MockGPT([Rule("r", m.always(), "x")], journal_size=0)
    mock.generate(ask("a"))
    assert mock.records == [] and mock.journal.total == 1


def test_per_rule_history_is_bounded_too() -> None:
    rule = Rule("r", m.always(), "x")
    mock = MockGPT([rule])
    for i in range(105):
        mock.generate(ask(str(i)))
    assert rule.call_count == 105
    assert len(rule.calls) == 100
    assert rule.calls[0].request.last_user == "5"
    assert rule.last is not None and rule.last.request.last_user == "104"


def test_reset_forgets_calls_but_not_the_determinism() -> None:
    mock = MockGPT([Rule("r", m.always(), g.words())])
    before = mock.generate(ask("x"))
    mock.reset()
    assert mock.records == [] and not mock.rules["r"].called
    assert mock.generate(ask("x")) == before


# ------------------------------------------------------------------------------------------ rule stats


def test_per_rule_calls_called_call_count_and_last() -> None:
    hello = Rule("hello", m.last_user(contains="hello"), "hi!")
    other = Rule("other", m.always(), g.words())
    never = Rule("never", m.model("nope"), "x")
    mock = MockGPT([hello, never, other])
    assert (hello.called, hello.call_count, hello.calls, hello.last) == (False, 0, [], None)
    mock.generate(ask("hello there"))
    mock.generate(ask("something"))
    mock.generate(ask("HELLO again"))
    assert (hello.called, hello.call_count) == (True, 2)
    assert [c.request.last_user for c in hello.calls] == ["hello there", "HELLO again"]
    assert all(isinstance(c, CallRecord) for c in hello.calls)
    assert hello.last == hello.calls[-1] == mock.records[-1]
    assert (other.call_count, never.call_count, never.called) == (1, 0, False)
    with pytest.raises(AssertionError) as info:
        mock.rules.assert_all_called()
    assert str(info.value) == "rules never called: never"


def test_assert_all_called_passes_when_every_rule_answered() -> None:
    rules = RuleSet([Rule("a", m.last_user(contains="a"), "A"), Rule("b", m.always(), "B")])
    mock = MockGPT(rules)
    mock.generate(ask("a"))
    mock.generate(ask("b"))
    rules.assert_all_called()


def test_times_rules_fall_through_to_the_next_rule() -> None:
    mock = MockGPT([Rule("first", m.always(), "first!", times=2), Rule("rest", m.always(), "later")])
    texts = [mock.generate(ask("same")).text for _ in range(4)]
    assert texts == ["first!", "first!", "later", "later"]
    assert [r.rule for r in mock.records] == ["first", "first", "rest", "rest"]
    mock.reset()
    assert mock.generate(ask("same")).text == "first!"


def test_a_used_up_rule_is_named_when_nothing_matches() -> None:
    mock = MockGPT([Rule("once", m.always(), "x", times=1)])
    mock.generate(ask("hi"))
    with pytest.raises(NoRuleMatched) as info:
        mock.generate(ask("hi"))
    assert str(info.value) == (
        "no rule matched request(api=python, model='m', last_user='hi')\n"
        "rules tried, in order:\n"
        "  - once: always() (used up)"
    )
    assert info.value.tried == ["once: always() (used up)"]


# ------------------------------------------------------------------------------------------ concurrency


def test_concurrent_calls_give_the_sequential_answers_and_exact_counts() -> None:
    def rules() -> list[Rule]:
        return [
            Rule(
                "even",
                m.where(lambda r: int(r.last_user.split()[-1]) % 2 == 0),
                g.objects({"who": g.fake("name")}),
            ),
            Rule(
                "tpl",
                m.last_user(regex=r"(?P<n>\d+)$"),
                g.template("{{ n }}: {{ fake('city') }} {{ uuid() }}"),
            ),
        ]

    bodies = [ask(f"question {i}") for i in range(50)]
    expected = [MockGPT(rules(), seed=3).generate(b) for b in bodies]
    mock = MockGPT(rules(), seed=3)
    results: dict[int, list[ModelOutput]] = {}
    barrier = threading.Barrier(8)

    def worker(t: int) -> None:
        barrier.wait()
        results[t] = [mock.generate(b) for b in bodies]

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(results[t] == expected for t in range(8))
    assert mock.journal.total == 400 and len(mock.records) == 400
    assert [r.index for r in mock.records] == list(range(400))
    assert (mock.rules["even"].call_count, mock.rules["tpl"].call_count) == (200, 200)
    assert sum(1 for r in mock.records if r.rule == "even") == 200


def test_times_is_exact_under_concurrency() -> None:
    mock = MockGPT([Rule("limited", m.always(), "A", times=37), Rule("rest", m.always(), "B")])
    texts: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            text = mock.generate(ask("x")).text
            with lock:
                texts.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert (texts.count("A"), texts.count("B")) == (37, 163)


async def test_agenerate_answers_like_generate() -> None:
    mock = MockGPT([Rule("r", m.always(), g.paragraph())], seed=5)
    out = await mock.agenerate(ask("hello"), api="chat")
    assert out == MockGPT([Rule("r", m.always(), g.paragraph())], seed=5).generate(ask("hello"))
    assert mock.records[-1].api == "chat"


# ------------------------------------------------------------------------------------------ limits


def test_output_token_limit_cuts_text_with_finish_reason_length_and_exact_usage() -> None:
    mock = MockGPT([Rule("r", m.always(), "one two six ten red")])
    out = mock.generate(ask("hi", max_output_tokens=3))
    assert out.text == "one two six"
    assert out.finish_reason == "length"
    # prompt: 3 priming + 4 per message + 1 token for "hi"
    assert out.usage == Usage(prompt_tokens=8, completion_tokens=3)
    assert out.usage.total_tokens == 11


def test_text_that_fits_the_limit_exactly_is_not_cut() -> None:
    out = MockGPT([Rule("r", m.always(), "one two six")]).generate(ask("hi", max_output_tokens=3))
    assert (out.text, out.finish_reason, out.usage.completion_tokens) == ("one two six", "stop", 3)


def test_the_limit_covers_reasoning_first() -> None:
    rule = Rule("r", m.always(), g.reply(text="six ten red", reasoning="one two"))
    out = MockGPT([rule]).generate(ask("hi", max_output_tokens=3))
    assert (out.reasoning, out.text) == ("one two", "six")
    assert out.finish_reason == "length"
    assert (out.usage.completion_tokens, out.usage.reasoning_tokens) == (3, 2)


def test_hash_tokens_fill_exactly_their_count() -> None:
    out = MockGPT([Rule("r", m.always(), g.hash_tokens(40))]).generate(ask("hi"))
    assert out.usage.completion_tokens == 40 and out.finish_reason == "stop"
    cut = MockGPT([Rule("r", m.always(), g.hash_tokens(40))]).generate(ask("hi", max_output_tokens=7))
    assert cut.usage.completion_tokens == 7 and cut.finish_reason == "length"


def test_context_window_refuses_a_prompt_that_leaves_no_room() -> None:
    mock = MockGPT([Rule("r", m.always(), "ok")], context_window=12)
    with pytest.raises(ContextWindowExceeded) as info:
        mock.generate(ask("one two six ten red", max_output_tokens=1))  # 3 + 4 + 5 = 12 prompt tokens
    err = info.value
    assert str(err) == (
        "This model's maximum context length is 12 tokens. However, your messages resulted in 12 tokens and "
        "1 tokens were reserved for the output. "
        "Please reduce the length of the messages or the output limit. (param: messages)"
    )
    assert (err.param, err.code, err.prompt_tokens, err.window) == (
        "messages",
        "context_length_exceeded",
        12,
        12,
    )
    with pytest.raises(ContextWindowExceeded, match="resulted in 12 tokens and 0 tokens were reserved"):
        mock.generate(ask("one two six ten red"))
    assert mock.records == []


def test_context_window_caps_an_unlimited_answer_at_the_window() -> None:
    mock = MockGPT([Rule("r", m.always(), "a b c d e f")], context_window=12)
    out = mock.generate(ask("one two six"))  # 10 prompt tokens: 2 left for the answer
    assert (out.text, out.finish_reason, out.usage.completion_tokens) == ("a b", "length", 2)
    fits = mock.generate(ask("one two six", max_output_tokens=2))
    assert fits.text == "a b" and fits.finish_reason == "length"


# ------------------------------------------------------------------------------------------ n, reasoning


def test_n_choices_differ_and_are_stable() -> None:
    rules = [Rule("r", m.always(), g.sentence())]
    out = MockGPT(rules, seed=1).generate(ask("hi", n=4))
    texts = [c.text for c in out.choices]
    assert len(texts) == 4 and len(set(texts)) == 4
    assert MockGPT(rules, seed=1).generate(ask("hi", n=4)) == out
    assert out.usage.completion_tokens == sum(count_tokens(t) for t in texts)


def test_reasoning_is_added_when_the_request_asks_for_it() -> None:
    rules = [Rule("r", m.always(), "answer")]
    out = MockGPT(rules).generate(ask("plan my budget", reasoning={"effort": "high"}))
    assert isinstance(out.parts[0], ReasoningPart)
    assert out.reasoning.startswith("The user is asking about ")
    assert len(out.parts[0].signature) == 64
    assert out.text == "answer"
    assert out.usage.reasoning_tokens > 0
    assert out.usage.completion_tokens == out.usage.reasoning_tokens + count_tokens("answer")
    plain = MockGPT(rules).generate(ask("plan my budget"))
    assert [p.kind for p in plain.parts] == ["text"] and plain.usage.reasoning_tokens == 0


def test_reasoning_is_not_added_when_the_rule_says_no_or_has_its_own_or_errors() -> None:
    wants = ask("hi", reasoning={"effort": "low"})
    off = MockGPT([Rule("r", m.always(), "x", reasoning=False)]).generate(wants)
    assert [p.kind for p in off.parts] == ["text"]
    own = MockGPT([Rule("r", m.always(), g.reply(text="x", reasoning="mine"))]).generate(wants)
    assert [p.kind for p in own.parts] == ["reasoning", "text"] and own.reasoning == "mine"
    err = MockGPT([Rule("r", m.always(), error={"status": 500})]).generate(wants)
    assert err.reasoning == "" and err.error is not None and err.error.status == 500


def test_the_api_argument_overrides_the_request_api_without_changing_the_answer() -> None:
    mock = MockGPT([Rule("r", m.always(), g.words())])
    a = mock.generate(ask("hi"))
    b = mock.generate(ask("hi"), api="messages")
    assert a.choices == b.choices and mock.records[-1].request.api == "messages"


def test_default_rules_answer_with_prose_about_the_request() -> None:
    out = MockGPT().generate(ask("Explain kubernetes networking"))
    assert out.rule == "default"
    assert "kubernetes" in out.text or "networking" in out.text


def test_repr_names_rules_seed_and_clock() -> None:
    mock = MockGPT([Rule("a", m.always(), "x")], seed=9, clock=StepClock(5, step=2))
    assert repr(mock) == "MockGPT(rules=['a'], seed=9, clock=StepClock(5, step=2))"


def test_an_error_answer_is_read_only_at_any_depth() -> None:
    headers = {"retry-after": "1"}
    body = {"error": {"message": "slow", "details": [{"k": "v"}]}}
    mock = MockGPT([Rule("r", m.always(), error={"status": 429, "headers": headers, "body": body})])
    headers["retry-after"] = "999"  # the caller's dicts, after the rule was built
    body["error"]["details"][0]["k"] = "changed"  # type: ignore[index]
    first = mock.generate(ask("x"))
    assert first.error is not None
    with pytest.raises(TypeError, match="FrozenDict is read-only"):
        first.error.headers["retry-after"] = "999"
    with pytest.raises(TypeError, match="FrozenDict is read-only"):
        first.error.body["error"]["details"][0].update(k="x")  # type: ignore[index]
    with pytest.raises(TypeError, match="FrozenList is read-only"):
        first.error.body["error"]["details"].append({})  # type: ignore[index]
    second = mock.generate(ask("x"))
    expected = {"error": {"message": "slow", "details": [{"k": "v"}]}}
    for out in (first, second, mock.records[0].output):
        assert out.error is not None
        assert out.error.headers == {"retry-after": "1"} and out.error.body == expected
    # still plain JSON for the wire and for copies
    assert json.loads(first.error.model_dump_json())["body"] == expected
    assert copy.deepcopy(first) == first


def test_rules_by_name_or_position() -> None:
    rules = RuleSet([Rule("a", m.always(), "A"), Rule("b", m.always(), "B")])
    assert rules["b"] is rules[1] and rules[-1].name == "b" and len(rules) == 2
    with pytest.raises(KeyError):
        rules["c"]


def test_record_indices_keep_counting_across_reset() -> None:
    mock = MockGPT([Rule("r", m.always(), "x")])
    mock.generate(ask("a"))
    mock.generate(ask("b"))
    mock.reset()
    mock.generate(ask("c"))
    assert [r.index for r in mock.records] == [2] and mock.journal.total == 3
