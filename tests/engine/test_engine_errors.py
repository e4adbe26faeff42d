"""Every error the engine raises on purpose, with its exact message: they are part of the interface."""

# ruff: noqa: E501 - expected messages stay whole, one per line, so they read like the output

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from synthgpt import (
    DrawError,
    MockGPT,
    ModelRequest,
    NoRuleMatched,
    RequestError,
    Rule,
    RuleError,
    RuleSet,
    SynthGPTError,
    UnknownNameError,
)
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.clock import FixedClock, StepClock, parse_clock
from synthgpt.journal import Journal

# ------------------------------------------------------------------------------ raised when rules are built

BUILD_ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "fake typo",
        lambda: g.fake("nmae"),
        UnknownNameError,
        "unknown faker provider 'nmae' — did you mean 'name'?",
    ),
    ("fake unknown", lambda: g.fake("zzzzqqq"), UnknownNameError, "unknown faker provider 'zzzzqqq'"),
    ("fake locale", lambda: g.fake("name", locale="xx_YY"), RuleError, "unknown faker locale 'xx_YY'"),
    (
        "fake kwargs",
        lambda: g.fake("name", bogus=1),
        RuleError,
        "fake('name'): Provider.name() got an unexpected keyword argument 'bogus'",
    ),
    (
        "passport_dates default",
        lambda: g.fake("passport_dates"),
        RuleError,
        "fake('passport_dates') needs birthday=<a date>; or use fake('passport_full')",
    ),
    ("integer lo > hi", lambda: g.integer(5, 1), RuleError, "`integer` takes `lo` <= `hi`, got 5 > 1"),
    ("integer floats", lambda: g.integer(1.5, 2), RuleError, "`integer`: lo must be a whole number, got 1.5"),
    ("integer bools", lambda: g.integer(True, 2), RuleError, "`integer`: lo must be a whole number, got True"),
    ("number lo > hi", lambda: g.number(2, 1), RuleError, "`number` takes `lo` <= `hi`, got 2 > 1"),
    (
        "number nan",
        lambda: g.number(float("nan"), 1),
        RuleError,
        "`number`: lo must be a finite number, got nan",
    ),
    (
        "number decimals",
        lambda: g.number(decimals=16),
        RuleError,
        "`number` takes 0 <= decimals <= 15, got 16",
    ),
    ("boolean p", lambda: g.boolean(1.5), RuleError, "`boolean` takes a probability 0 <= p <= 1, got 1.5"),
    ("choice empty", lambda: g.choice([]), RuleError, "`choice` takes a non-empty list of options"),
    ("choice string", lambda: g.choice("abc"), RuleError, "`choice` takes a non-empty list of options"),  # type: ignore[arg-type]
    ("id length", lambda: g.id("x", length=0), RuleError, "`id` takes 1 <= length <= 256, got 0"),
    ("words range", lambda: g.words(5, 2), RuleError, "`words` takes 0 <= min <= max, got 5 and 2"),
    ("sentence empty", lambda: g.sentence(0, 0), RuleError, "`sentence` needs at least one word"),
    (
        "paragraph range",
        lambda: g.paragraph(-1, 2),
        RuleError,
        "`paragraph` takes 0 <= min <= max, got -1 and 2",
    ),
    (
        "prose short",
        lambda: g.prose(1, 1),
        RuleError,
        "`prose` needs at least 2 sentences (an opener and a closer)",
    ),
    (
        "summary",
        lambda: g.summary(0),
        RuleError,
        "`summary` takes max_chars >= 1 and count >= 1, got 0 and 1",
    ),
    ("hash_tokens", lambda: g.hash_tokens(-1), RuleError, "`hash_tokens` takes n >= 0, got -1"),
    (
        "lists",
        lambda: g.lists(g.integer(), 3, 1),
        RuleError,
        "lists takes 0 <= min_size <= max_size, got 3 and 1",
    ),
    ("one_of empty", lambda: g.one_of(), RuleError, "one_of needs at least one option"),
    (
        "weighted empty",
        lambda: g.weighted([]),
        RuleError,
        "weighted needs at least one (weight, option) pair",
    ),
    (
        "weighted negative",
        lambda: g.weighted([(-1, "a")]),
        RuleError,
        "weighted: pairs are (weight, option) with a weight >= 0, got weight -1",
    ),
    (
        "weighted swapped",
        lambda: g.weighted([("a", 3)]),
        RuleError,
        "weighted: pairs are (weight, option) with a weight >= 0, got weight 'a'",
    ),
    (
        "objects not a dict",
        lambda: g.objects([1, 2]),  # type: ignore[arg-type]
        RuleError,
        "objects takes a dict of field name -> generator or value, got list",
    ),
    (
        "lists sizes",
        lambda: g.lists(g.integer(), 2.5),  # type: ignore[arg-type]
        RuleError,
        "`lists`: min_size must be a whole number, got 2.5",
    ),
    ("weighted zero", lambda: g.weighted([(0, "a")]), RuleError, "weighted: at least one weight must be > 0"),
    (
        "filter tries",
        lambda: g.integer().filter(bool, max_tries=0),
        RuleError,
        "filter: max_tries must be >= 1, got 0",
    ),
    (
        "template syntax",
        lambda: g.template("{% for %}"),
        RuleError,
        "template syntax error at line 1: Expected an expression, got 'end of statement block'",
    ),
    ("template type", lambda: g.template(3), RuleError, "template takes a string, got int"),  # type: ignore[arg-type]
    (
        "tool_call args",
        lambda: g.tool_call("x", 5),
        RuleError,
        "tool_call arguments must be a dict or a generator, got int",
    ),
    (
        "answer stream",
        lambda: g.answer("x", stream={"chunk_chars": 0}),
        RuleError,
        "answer(stream=…): Invalid value for 'chunk_chars': Input should be greater than or equal to 1",
    ),
    (
        "answer finish",
        lambda: g.answer("x", finish_reason="done"),  # type: ignore[arg-type]
        RuleError,
        "answer: finish_reason must be 'stop', 'length', 'tool_calls' or 'content_filter', got 'done'",
    ),
    (
        "error status",
        lambda: g.error(200),
        RuleError,
        "error: Invalid value for 'status': Input should be greater than or equal to 400",
    ),
    (
        "error field",
        lambda: g.error(500, nope=1),
        RuleError,
        "error: Invalid value for 'nope': Extra inputs are not permitted",
    ),
    (
        "generator lookup",
        lambda: g.lookup("integr"),
        UnknownNameError,
        "unknown generator 'integr' — did you mean 'integer'?",
    ),
    # matchers
    (
        "two text tests",
        lambda: m.last_user("a", regex="b"),
        RuleError,
        "last_user: give one of contains=, regex=, equals=, glob=; got contains, regex",
    ),
    (
        "bad regex",
        lambda: m.system(regex="("),
        RuleError,
        "system: bad regex '(': missing ), unterminated subpattern at position 0",
    ),
    ("api typo", lambda: m.api("chatt"), UnknownNameError, "unknown api 'chatt' — did you mean 'chat'?"),  # type: ignore[arg-type]
    (
        "api none",
        lambda: m.api(),
        RuleError,
        "api: name at least one of 'chat', 'responses', 'messages', 'embeddings', 'python'",
    ),
    ("tool_choice mode", lambda: m.tool_choice("any"), UnknownNameError, "unknown tool_choice mode 'any'"),
    ("turn bare", lambda: m.turn(), RuleError, "turn: give eq, min= or max="),
    (
        "message role",
        lambda: m.any_message("x", role="usr"),
        UnknownNameError,
        "unknown message role 'usr' — did you mean 'user'?",
    ),
    # rules and rule sets
    ("rule name", lambda: Rule("", m.always(), "x"), RuleError, "a rule needs a non-empty name"),
    (
        "rule answer",
        lambda: Rule("a", m.always()),
        RuleError,
        "rule 'a': give an answer (a generator or a value) or an error",
    ),
    (
        "rule times",
        lambda: Rule("a", m.always(), "x", times=0),
        RuleError,
        "rule 'a': times must be >= 1, got 0",
    ),
    (
        "rule reasoning",
        lambda: Rule("a", m.always(), "x", reasoning="yes"),
        RuleError,
        "rule 'a': reasoning must be 'auto', True or False, got 'yes'",
    ),
    (
        "rule arguments swapped",
        lambda: Rule("a", m.always(), m.model("x")),
        RuleError,
        "rule 'a': the answer model('x') is a matcher; the order is Rule(name, matcher, answer)",
    ),
    (
        "rule matcher",
        lambda: Rule("a", 5, "x"),
        RuleError,
        "a matcher must be a Matcher or a callable taking the request, got 5",
    ),
    (
        "rule stream",
        lambda: Rule("a", m.always(), "x", stream={"faults": [{"kind": "explode"}]}),
        RuleError,
        "rule 'a': stream: Invalid value for 'faults[0].kind': Input should be 'disconnect', 'truncate', "
        "'stream_error', 'malformed' or 'unknown_item'",
    ),
    (
        "rule error type",
        lambda: Rule("a", m.always(), error="boom"),  # type: ignore[arg-type]
        RuleError,
        "rule 'a': error: expected a dict or ErrorSpec, got str",
    ),
    (
        "duplicate names",
        lambda: RuleSet([Rule("a", m.always(), "x"), Rule("a", m.always(), "y")]),
        RuleError,
        "two rules are named 'a'; rule names must be unique",
    ),
    ("not a rule", lambda: RuleSet(["a"]), RuleError, "a RuleSet holds Rule objects, got str"),  # type: ignore[list-item]
    # engine pieces
    ("journal size", lambda: MockGPT(journal_size=-1), ValueError, "MockGPT: journal_size must be >= 0, got -1"),
    ("journal direct", lambda: Journal(-2), ValueError, "journal size must be >= 0, got -2"),
    (
        "clock spec",
        lambda: parse_clock("fixed:soon"),
        ValueError,
        "bad clock 'fixed:soon': use fixed, fixed:<unix-seconds>, step:<start>[:<step>] or system",
    ),
]


# Arguments of the wrong type: each a RuleError when built, never a TypeError from a comparison mid-draw.
BAD_TYPES: list[tuple[str, Callable[[], Any], str]] = [
    ("integer hi str", lambda: g.integer(0, "9"), "`integer`: hi must be a whole number, got '9'"),
    ("number lo str", lambda: g.number("0", 1), "`number`: lo must be a finite number, got '0'"),
    ("number hi inf", lambda: g.number(0, float("inf")), "`number`: hi must be a finite number, got inf"),
    ("number decimals float", lambda: g.number(decimals=2.5), "`number`: decimals must be a whole number, got 2.5"),
    ("boolean p str", lambda: g.boolean("0.5"), "`boolean`: p must be a finite number, got '0.5'"),
    ("boolean p nan", lambda: g.boolean(float("nan")), "`boolean`: p must be a finite number, got nan"),
    ("words str", lambda: g.words("3", 6), "`words`: min_words must be a whole number, got '3'"),
    ("words bool", lambda: g.words(1, True), "`words`: max_words must be a whole number, got True"),
    ("sentence float", lambda: g.sentence(6, 12.0), "`sentence`: max_words must be a whole number, got 12.0"),
    ("paragraph str", lambda: g.paragraph("3"), "`paragraph`: min_sentences must be a whole number, got '3'"),
    ("prose str", lambda: g.prose(3, "5"), "`prose`: max_sentences must be a whole number, got '5'"),
    ("summary str", lambda: g.summary("200"), "`summary`: max_chars must be a whole number, got '200'"),
    ("summary count", lambda: g.summary(count=None), "`summary`: count must be a whole number, got None"),
    ("hash_tokens float", lambda: g.hash_tokens(1.5), "`hash_tokens`: n must be a whole number, got 1.5"),
    ("id length str", lambda: g.id("x", length="8"), "`id`: length must be a whole number, got '8'"),
    ("id prefix int", lambda: g.id(7), "`id`: prefix must be a string, got 7"),
    ("id sep None", lambda: g.id("x", sep=None), "`id`: sep must be a string, got None"),
    ("weighted bool weight", lambda: g.weighted([(True, "a")]), "weighted: pairs are (weight, option) with a weight >= 0, got weight True"),
    ("weighted nan weight", lambda: g.weighted({"a": float("nan")}), "weighted: pairs are (weight, option) with a weight >= 0, got weight nan"),
    ("weighted not pairs", lambda: g.weighted([1, 2]), "weighted: pairs are (weight, option), got 1"),
    ("lists max str", lambda: g.lists(1, 0, "5"), "`lists`: max_size must be a whole number, got '5'"),
    ("lists unique str", lambda: g.lists(1, unique="yes"), "`lists`: unique must be true or false, got 'yes'"),
    ("filter tries str", lambda: g.integer().filter(bool, max_tries="9"), "filter: max_tries must be a whole number, got '9'"),
    ("embeddings dims float", lambda: g.embeddings(dimensions=8.0), "embeddings: dimensions must be a whole number, got 8.0"),
    ("answer usage bool", lambda: g.answer("x", usage={"prompt_tokens": True}), "answer: usage prompt_tokens must be a whole number, got True"),
    ("answer usage negative", lambda: g.answer("x", usage={"prompt_tokens": -1}), "answer: usage prompt_tokens must be a whole number >= 0, got -1"),
    ("reply tool_calls str", lambda: g.reply("x", tool_calls="f"), "reply: tool_calls must be a list of tool calls, got str"),
    ("reply finish", lambda: g.reply("x", finish_reason="done"), "reply: finish_reason must be one of 'stop', 'length', 'tool_calls', 'content_filter', got 'done'"),
    ("long repr shortened", lambda: g.words("x" * 100), "`words`: min_words must be a whole number, got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."),
    # sizes have a ceiling, so one draw cannot stall the server
    ("words cap", lambda: g.words(1, 10_001), "`words` takes at most 10000 words, got max_words=10001"),
    ("paragraph cap", lambda: g.paragraph(1, 20_000), "`paragraph` takes at most 10000 sentences, got max_sentences=20000"),
    ("prose cap", lambda: g.prose(2, 10_001), "`prose` takes at most 10000 sentences, got max_sentences=10001"),
    ("lists cap", lambda: g.lists(1, 0, 10_001), "lists takes max_size <= 10000, got 10001"),
    ("hash_tokens cap", lambda: g.hash_tokens(1_000_001), "`hash_tokens` takes n <= 1000000, got 1000001"),
    # counts of the request: turn and round share one builder
    ("turn str", lambda: m.turn("2"), "turn: eq must be a whole number, got '2'"),
    ("turn negative", lambda: m.turn(min=-1), "turn: min must be a whole number >= 0, got -1"),
    ("turn bool", lambda: m.turn(max=True), "turn: max must be a whole number, got True"),
    ("turn eq and min", lambda: m.turn(2, min=1), "turn: give eq or min=/max=, not both"),
    ("turn min > max", lambda: m.turn(min=2, max=1), "turn: min must be <= max, got min=2 and max=1"),
    ("turn nothing", lambda: m.turn(), "turn: give eq, min= or max="),
    ("round eq and max", lambda: m.round(1, max=3), "round: give eq or min=/max=, not both"),
    ("round min > max", lambda: m.round(min=3, max=0), "round: min must be <= max, got min=3 and max=0"),
    ("round float", lambda: m.round(1.0), "round: eq must be a whole number, got 1.0"),
]


@pytest.mark.parametrize(("build", "message"), [c[1:] for c in BAD_TYPES], ids=[c[0] for c in BAD_TYPES])
def test_wrong_argument_types_are_rule_errors_when_built(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(RuleError) as info:
        build()
    assert str(info.value) == message


def test_sizes_at_the_ceiling_are_allowed() -> None:
    assert repr(g.words(0, 10_000)) == "words(0, 10000)"
    assert repr(g.lists(1, 0, 10_000)) == "lists(just(1), 0, 10000)"
    assert repr(g.hash_tokens(1_000_000)) == "hash_tokens(1000000)"
    assert (repr(m.turn(min=1, max=1)), repr(m.round(0))) == ("turn(min=1, max=1)", "round(0)")


@pytest.mark.parametrize(
    ("build", "kind", "message"), [c[1:] for c in BUILD_ERRORS], ids=[c[0] for c in BUILD_ERRORS]
)
def test_build_time_errors(build: Callable[[], Any], kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as info:
        build()
    assert str(info.value) == message


def test_rule_errors_are_synthgpt_errors_and_value_errors() -> None:
    with pytest.raises(RuleError) as info:
        g.integer(2, 1)
    assert isinstance(info.value, SynthGPTError) and isinstance(info.value, ValueError)


def test_unknown_name_error_carries_its_parts() -> None:
    with pytest.raises(UnknownNameError) as info:
        g.fake("nmae")
    assert (info.value.kind, info.value.name, info.value.suggestion) == ("faker provider", "nmae", "name")


def test_fake_fails_when_the_rule_is_built_not_when_it_draws() -> None:
    with pytest.raises(UnknownNameError):
        Rule("r", m.always(), g.objects({"who": g.fake("nmae")}))


# ------------------------------------------------------------------------------ raised while drawing


def one_rule(answer: Any) -> MockGPT:
    return MockGPT([Rule("r", m.always(), answer)])


HI = {"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]}


def never(x: int) -> bool:
    return x > 5


def not_a_generator(x: int) -> int:
    return x


def explode(x: int) -> int:
    raise ZeroDivisionError("division by zero")


DRAW_ERRORS: list[tuple[str, Any, str]] = [
    (
        "filter never accepts",
        g.integer(0, 3).filter(never),
        "rule 'r': integer(0, 3).filter(never) rejected 100 values in a row; "
        "loosen the predicate or narrow the generator",
    ),
    (
        "filter never accepts, few tries",
        g.integer(0, 3).filter(never, max_tries=5),
        "rule 'r': integer(0, 3).filter(never, max_tries=5) rejected 5 values in a row; "
        "loosen the predicate or narrow the generator",
    ),
    (
        "bind returns a value",
        g.integer().bind(not_a_generator),
        "rule 'r': integer(0, 100).bind(not_a_generator): the bound function returned int, not a generator",
    ),
    (
        "unique lists",
        g.lists(g.just(1), 2, 2, unique=True),
        "rule 'r': lists(just(1), 2, 2, unique=True): could not draw 2 distinct values",
    ),
    ("user callable raises", g.integer().map(explode), "rule 'r': ZeroDivisionError: division by zero"),
    (
        "template undefined name",
        g.template("Hello {{ city }}"),
        "rule 'r': template uses undefined name(s) 'city': "
        "neither built in, nor a generator, nor a capture of the rule's matcher",
    ),
    (
        "template undefined attribute",
        g.template("{{ captures.nope }}"),
        "rule 'r': template: 'dict object' has no attribute 'nope'",
    ),
    (
        "template random on nothing",
        g.template("{{ []|random }}"),
        "rule 'r': template: `random` filter on an empty sequence",
    ),
    (
        "tool_call without tools",
        g.tool_call(),
        "rule 'r': tool_call() without a name needs a request that declares tools",
    ),
    (
        "reply with a bad tool call",
        g.reply(tool_calls=[{"x": 1}]),
        "rule 'r': a tool call must be a tool_call(...) or a dict with 'name', got {'x': 1}",
    ),
]


@pytest.mark.parametrize(("answer", "message"), [c[1:] for c in DRAW_ERRORS], ids=[c[0] for c in DRAW_ERRORS])
def test_draw_time_errors_name_the_rule(answer: Any, message: str) -> None:
    with pytest.raises(DrawError) as info:
        one_rule(answer).generate(HI)
    assert str(info.value) == message


def test_template_unknown_faker_provider_inside_a_template() -> None:
    # built while drawing, so a draw error that names the rule, with the suggestion kept
    with pytest.raises(DrawError, match=r"template: unknown faker provider 'nmae' — did you mean 'name'\?$"):
        one_rule(g.template("{{ fake('nmae') }}")).generate(HI)


def test_a_failed_draw_leaves_no_record() -> None:
    mock = one_rule(g.integer().map(explode))
    with pytest.raises(DrawError):
        mock.generate(HI)
    assert mock.records == [] and mock.journal.total == 0


# ------------------------------------------------------------------------------ no rule matched


def test_no_rule_matched_names_the_request_and_every_rule_tried() -> None:
    mock = MockGPT(
        [
            Rule("gpt", m.model("gpt-4*"), "x"),
            Rule("weather", m.last_user(contains="weather") & m.has_tools(), "y"),
            Rule("not-system", ~m.system() | m.turn(min=3), "z"),
        ]
    )
    body = {
        "model": "claude",
        "messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "hello there, this is a rather long message that goes on and on"},
        ],
        "tools": [{"name": "search"}],
    }
    with pytest.raises(NoRuleMatched) as info:
        mock.generate(body)
    assert str(info.value) == (
        "no rule matched request(api=python, model='claude', "
        "last_user='hello there, this is a rather long message that goes on a...', tools=[search])\n"
        "rules tried, in order:\n"
        "  - gpt: model('gpt-4*')\n"
        "  - weather: last_user(contains='weather') & has_tools()\n"
        "  - not-system: ~system() | turn(min=3)"
    )
    assert isinstance(info.value, LookupError)
    assert mock.records == []


def test_no_rule_matched_on_an_empty_rule_set() -> None:
    with pytest.raises(NoRuleMatched) as info:
        MockGPT([]).generate({"model": "synth-1", "messages": [{"role": "user", "content": ""}]})
    assert str(info.value) == (
        "no rule matched request(api=python, model='synth-1', last_user='')\n"
        "rules tried, in order:\n"
        "  (the rule set is empty)"
    )


# ------------------------------------------------------------------------------ bad request dicts

BAD_REQUESTS: list[tuple[Any, str, str | None]] = [
    (
        {"model": "synth-1", "messages": [{"role": "usr", "content": "x"}]},
        "Invalid value for 'messages[0].role': "
        "Input should be 'system', 'developer', 'user', 'assistant' or 'tool'",
        "messages[0].role",
    ),
    (
        {"model": "synth-1", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
        "Invalid value for 'messages[0]': content part 0 of type 'text' needs a string 'text'",
        "messages[0]",
    ),
    (
        {"model": "synth-1", "messages": [{"role": "user", "content": [3]}]},
        "Invalid value for 'messages[0]': content part 0 must be an object or a string",
        "messages[0]",
    ),
    ({"messages": "hi"}, "Invalid value for 'messages': Input should be a valid array", "messages"),
    ({"n": 0}, "Invalid value for 'n': Input should be greater than or equal to 1", "n"),
    ({"n": 129}, "Invalid value for 'n': Input should be less than or equal to 128", "n"),
    (
        {"max_output_tokens": 0},
        "Invalid value for 'max_output_tokens': Input should be greater than or equal to 1",
        "max_output_tokens",
    ),
    ({"tools": [{"type": "function"}]}, "Invalid value for 'tools[0].name': Field required", "tools[0].name"),
    (
        {"tool_choice": "maybe"},
        "Invalid value for 'tool_choice': tool_choice must be 'auto', 'none', 'required' or a named tool, "
        "got 'maybe'",
        "tool_choice",
    ),
    ({"temperature": 1}, "Invalid value for 'temperature': Extra inputs are not permitted", "temperature"),
    ({"model": 5}, "Invalid value for 'model': Input should be a valid string", "model"),
    (["not", "a", "dict"], "the request must be a JSON object", None),
]


@pytest.mark.parametrize(("body", "message", "param"), BAD_REQUESTS)
def test_bad_request_dicts_raise_request_error_naming_the_param(
    body: Any, message: str, param: str | None
) -> None:
    for call in (ModelRequest.from_dict, MockGPT().generate):
        with pytest.raises(RequestError) as info:
            call(body)
        err = info.value
        assert (err.message, err.param) == (message, param)
        assert str(err) == (message if param is None else f"{message} (param: {param})")


def test_an_unknown_rule_name_suggests_the_closest_and_is_still_a_key_error() -> None:
    rules = RuleSet([Rule("weather", m.always(), "x"), Rule("greeting", m.always(), "y")])
    with pytest.raises(UnknownNameError) as info:
        rules["wether"]
    assert str(info.value) == "unknown rule 'wether' — did you mean 'weather'?"
    assert isinstance(info.value, KeyError) and info.value.suggestion == "weather"
    with pytest.raises(KeyError) as missing:
        rules["zz"]
    assert str(missing.value) == "unknown rule 'zz'"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: StepClock(step=float("nan")), "StepClock: step must be a finite number, got nan"),
        (lambda: StepClock(float("inf")), "StepClock: start must be a finite number, got inf"),
        (lambda: StepClock(0, "1"), "StepClock: step must be a finite number, got '1'"),
        (lambda: FixedClock(float("nan")), "FixedClock: t must be a finite number, got nan"),
        (lambda: FixedClock(True), "FixedClock: t must be a finite number, got True"),
    ],
)
def test_clocks_refuse_what_is_not_a_finite_number(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(RuleError) as info:
        build()
    assert str(info.value) == message
