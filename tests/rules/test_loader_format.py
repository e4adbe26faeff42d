"""The rule-file format: every construct loads into the Rule objects the Python DSL builds."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.clock import FixedClock, StepClock
from synthgpt.model import ErrorSpec, Fault, StreamPlan
from synthgpt.rules.loader import LoadedRules, RuleFileError, load_files, load_text


def load(text: str, path: str = "rules.yaml") -> LoadedRules:
    return load_text(textwrap.dedent(text), path)


def one(match: str, answer: str) -> str:
    """repr of the single rule of a file with this match and answer (YAML fragments)."""
    loaded = load(f"rules:\n  - name: r\n    match: {match}\n    {answer}\n")
    return repr(loaded.ruleset.rules[0])


def ask(loaded: LoadedRules, text: str = "hi", **extra: Any) -> Any:
    mock = MockGPT(loaded.ruleset, seed=loaded.seed or 0, clock=loaded.clock)
    return mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra})


# ------------------------------------------------------------------------------------------- matchers


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ("always", "always()"),
        ("has_tools", "has_tools()"),
        ("{has_tools: true}", "has_tools()"),
        ("{has_tools: null}", "has_tools()"),
        ("{has_tools: [a, b]}", "has_tools('a', 'b')"),
        ("{last_user: weather}", "last_user(contains='weather')"),
        ("{last_user: {regex: 'w(?P<x>a)'}}", "last_user(regex='w(?P<x>a)')"),
        ("{model: 'gpt-4o*'}", "model('gpt-4o*')"),
        ("{api: [chat, responses]}", "api('chat', 'responses')"),
        ("{turn: 2}", "turn(2)"),
        ("{turn: {min: 2, max: 3}}", "turn(min=2, max=3)"),
        ("{round: 0}", "round(0)"),
        ("{round: {min: 4}}", "round(min=4)"),
        ("{tool_result: get_weather}", "tool_result('get_weather')"),
        ("{tool_result: {name: w, contains: rain}}", "tool_result('w', contains='rain')"),
        ("{has_tool_result: {name: w, last: true}}", "has_tool_result('w', last=True)"),
        ("{previous_tool_call: w}", "previous_tool_call('w')"),
        ("{header: [x-env, test]}", "header('x-env', 'test')"),
        ("{tool_choice: required}", "tool_choice('required')"),
        ("{wants_schema: user}", "wants_schema('user')"),
        ("{any_message: {contains: hi, role: user}}", "any_message(contains='hi', role='user')"),
        ("{last_user: hi, has_tools: true}", "last_user(contains='hi') & has_tools()"),
        ("[{last_user: hi}, has_tools]", "last_user(contains='hi') & has_tools()"),
        ("{all: [{last_user: hi}, {turn: 1}]}", "last_user(contains='hi') & turn(1)"),
        ("{any: [{last_user: hi}, {turn: 1}]}", "last_user(contains='hi') | turn(1)"),
        ("{not: {last_user: hi}}", "~last_user(contains='hi')"),
        ("{not: {any: [has_tools, wants_schema]}}", "~(has_tools() | wants_schema())"),
    ],
)
def test_match_forms(match: str, expected: str) -> None:
    assert one(match, "output: {text: x}") == f"Rule('r', {expected}, reply(text=just('x')))"


# ----------------------------------------------------------------------------------------- generators


@pytest.mark.parametrize(
    ("generate", "expected"),
    [
        ("prose", "prose(3, 5)"),
        ("{prose: null}", "prose(3, 5)"),
        ("{uuid: true}", "uuid()"),
        ("{integer: [1, 6]}", "integer(1, 6)"),
        ("{integer: {lo: 1, hi: 6}}", "integer(1, 6)"),
        ("{integer: 7}", "integer(7, 100)"),
        ("{fake: city}", "fake('city')"),
        ("{fake: {provider: date, pattern: '%Y'}}", "fake('date', pattern='%Y')"),
        ("{id: user}", "id('user', length=24)"),
        ("{just: {id: user}}", "just({'id': 'user'})"),
        ("{just: null}", "just(None)"),
        ("{just: []}", "just([])"),
        ("{choice: [a, b]}", "choice(['a', 'b'])"),
        ("{one_of: [{fake: city}, Paris]}", "one_of(fake('city'), just('Paris'))"),
        ("{weighted: {sun: 3, rain: 1}}", "weighted([(3, just('sun')), (1, just('rain'))])"),
        ("{weighted: [[3, {fake: city}], [1, x]]}", "weighted([(3, fake('city')), (1, just('x'))])"),
        (
            "{objects: {id: {id: user}, age: {integer: [18, 60]}}}",
            "objects({'id': id('user', length=24), 'age': integer(18, 60)})",
        ),
        (
            "{objects: {n: 1, tags: [a, {words: [1, 2]}]}}",
            "objects({'n': just(1), 'tags': [just('a'), words(1, 2)]})",
        ),
        ("{lists: {fake: name}}", "lists(fake('name'), 0, 5)"),
        ("{lists: [{fake: name}, 1, 3]}", "lists(fake('name'), 1, 3)"),
        (
            "{lists: {element: {integer: [1, 2]}, max_size: 2, unique: true}}",
            "lists(integer(1, 2), 0, 2, unique=True)",
        ),
        (
            "{tool_call: [get_weather, {city: {fake: city}}]}",
            "tool_call('get_weather', objects({'city': fake('city')}))",
        ),
        ("{tool_call: {name: lookup, args: {id: 42}}}", "tool_call('lookup', just({'id': 42}))"),
        (
            "{tool_call: [lookup, {id: {id: ord}}]}",
            "tool_call('lookup', objects({'id': id('ord', length=24)}))",
        ),
        ("{template: 'Hi {{ last_user }}'}", "template('Hi {{ last_user }}')"),
        (
            "{reply: {text: hi, tool_calls: [{tool_call: w}], finish_reason: stop}}",
            "reply(text=just('hi'), tool_calls=[tool_call('w')], finish_reason='stop')",
        ),
        ("{from_request_schema: true}", "from_request_schema()"),
        (
            "{from_request_schema: {overrides: {user.name: {fake: name}}}}",
            "from_request_schema({'user.name': fake('name')})",
        ),
    ],
)
def test_generator_forms(generate: str, expected: str) -> None:
    assert one("always", f"generate: {generate}") == f"Rule('r', always(), {expected})"


def test_from_schema_keeps_the_schema_verbatim() -> None:
    # `id` and `items` are generator-looking keys inside a schema: they stay schema keywords
    loaded = load(
        """
        rules:
          - name: r
            match: always
            generate:
              from_schema:
                schema: {type: object, properties: {id: {type: integer, minimum: 1, maximum: 9}},
                         required: [id], additionalProperties: false}
        """
    )
    assert json.loads(ask(loaded).text).keys() == {"id"}


# --------------------------------------------------------------------------------------------- answers


def test_output_fixed_answer() -> None:
    loaded = load(
        """
        rules:
          - name: fixed
            match: always
            output:
              text: Checking.
              reasoning: Think first.
              tool_calls:
                - {name: get_weather, arguments: {city: Paris}}
                - {name: get_time, arguments: '{"tz":"CET"}', id: call_fixed}
              usage: {prompt_tokens: 5, completion_tokens: 7}
        """
    )
    out = ask(loaded)
    assert out.text == "Checking."
    assert out.reasoning == "Think first."
    assert [(t.name, t.arguments) for t in out.tool_calls] == [
        ("get_weather", '{"city":"Paris"}'),
        ("get_time", '{"tz":"CET"}'),
    ]
    assert out.tool_calls[1].id == "call_fixed"
    assert out.tool_calls[0].id.startswith("call_")
    assert out.finish_reason == "tool_calls"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (5, 7)


def test_output_finish_reason_and_template_and_schema() -> None:
    loaded = load(
        """
        rules:
          - name: cut
            match: {last_user: cut}
            output: {text: Half an, finish_reason: length}
          - name: echo
            match: {last_user: {regex: "say (?P<word>\\\\w+)"}}
            template: "You said {{ word }} ({{ captures.word | upper }})."
          - name: doc
            match: always
            schema: {type: object, properties: {n: {type: integer, minimum: 3, maximum: 3}}, required: [n]}
            overrides: {n: {just: 3}}
        """
    )
    assert ask(loaded, "cut it").finish_reason == "length"
    assert ask(loaded, "say cheese").text == "You said cheese (CHEESE)."
    assert ask(loaded, "x").text == '{"n":3}'


def test_stream_error_times_reasoning_and_source() -> None:
    loaded = load(
        """
        rules:
          - name: flaky
            match: always
            times: 1
            reasoning: false
            error: {status: 429, message: slow down, headers: {retry-after: "1"}}
            stream: {first_delay_ms: 10, faults: [{kind: disconnect, after: 2}]}
          - name: after
            match: always
            output: {text: ok}
        """
    )
    flaky = loaded.ruleset["flaky"]
    assert flaky.error == ErrorSpec(status=429, message="slow down", headers={"retry-after": "1"})
    assert flaky.stream == StreamPlan(first_delay_ms=10, faults=(Fault(kind="disconnect", after=2),))
    assert (flaky.times, flaky.reasoning, flaky.source) == (1, False, "rules.yaml:3:5")
    assert loaded.origins["after"].line == 9
    mock = MockGPT(loaded.ruleset)
    first = mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": "a"}]})
    assert first.error is not None and first.error.status == 429
    assert mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": "a"}]}).text == "ok"


def test_top_level_settings() -> None:
    loaded = load(
        """
        seed: 42
        clock: step:100:5
        models: [gpt-4o, synth-1]
        rules: []
        """
    )
    assert loaded.seed == 42
    assert isinstance(loaded.clock, StepClock) and loaded.clock.now() == 100
    assert loaded.models == ("gpt-4o", "synth-1") == loaded.ruleset.models
    number = load("clock: 1700000000\n")
    assert isinstance(number.clock, FixedClock) and number.clock.now() == 1_700_000_000
    assert load("").ruleset.rules == [] and load("").seed is None


def test_bare_list_of_rules_and_json_and_yaml_merge() -> None:
    as_list = load("- {name: a, match: always, output: {text: x}}\n")
    assert [r.name for r in as_list.ruleset] == ["a"]
    as_json = load_text(
        '{"seed": 3,\t"rules": [{"name": "a", "match": "always", "generate": {"number": [1e0, 2]}}]}',
        "rules.json",
    )
    assert (as_json.seed, repr(as_json.ruleset.rules[0].generator)) == (3, "number(1, 2, decimals=2)")
    merged = load(
        """
        rules:
          - &first {name: a, match: {last_user: a}, output: {text: shared}}
          - {<<: *first, name: b, match: {last_user: b}}
        """
    )
    assert [(r.name, repr(r.matcher)) for r in merged.ruleset] == [
        ("a", "last_user(contains='a')"),
        ("b", "last_user(contains='b')"),
    ]
    assert ask(merged, "b").text == "shared"


def test_script_and_sequence() -> None:
    loaded = load(
        """
        rules:
          - name: steps
            match: {last_user: go}
            script:
              - output: {tool_calls: [{name: a}]}
              - output: {text: done}
          - name: retry
            match: always
            sequence:
              - error: {status: 503}
              - output: {text: second}
                stream: {chunk_chars: 1}
        """
    )
    assert repr(loaded.ruleset["retry"].generator) == (
        "sequence(error(503), answer(reply(text=just('second')), stream={'chunk_chars': 1}))"
    )
    mock = MockGPT(loaded.ruleset)
    x = {"model": "synth-1", "messages": [{"role": "user", "content": "x"}]}
    assert mock.generate(x).error.status == 503  # type: ignore[union-attr]
    second = mock.generate(x)
    assert (second.text, second.stream.chunk_chars) == ("second", 1)
    assert (
        mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": "x"}]}).text == "second"
    )  # the last repeats


# ---------------------------------------------------------------------------------------------- includes


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_includes_are_relative_loaded_first_and_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        tmp_path,
        "shared/base.yaml",
        "seed: 1\nmodels: [m1]\nrules: [{name: base, match: {turn: 9}, output: {text: b}}]\n",
    )
    write(
        tmp_path,
        "shared/errors.yaml",
        "include: base.yaml\nrules: [{name: err, match: {turn: 8}, error: {}}]\n",
    )
    write(
        tmp_path,
        "main.yaml",
        """
        seed: 5
        models: [m2, m1]
        include: [shared/base.yaml, shared/errors.yaml]
        rules: [{name: main, match: always, output: {text: m}}]
    """,
    )
    monkeypatch.chdir(tmp_path)
    loaded = load_files(["main.yaml"])
    assert [r.name for r in loaded.ruleset] == ["base", "err", "main"]
    assert loaded.seed == 5  # the including file wins over its includes
    assert loaded.models == ("m2", "m1")
    assert loaded.files == (Path("main.yaml"), Path("shared/base.yaml"), Path("shared/errors.yaml"))
    assert loaded.origins["err"].path == "shared/errors.yaml"


def test_several_files_and_seed_from_the_first_that_sets_it(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", "rules: [{name: a, match: {turn: 2}, output: {text: a}}]\n")
    b = write(
        tmp_path, "b.yaml", "seed: 9\nclock: fixed:5\nrules: [{name: b, match: always, output: {text: b}}]\n"
    )
    loaded = load_files([a, b])
    assert [r.name for r in loaded.ruleset] == ["a", "b"]
    assert (loaded.seed, repr(loaded.clock)) == (9, "FixedClock(5)")


def test_load_files_error_carries_every_error(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "r.yaml",
        """
        rules:
          - {name: a, match: alway, output: {text: x}}
          - {name: b, match: always, generate: {intger: 1}}
    """,
    )
    with pytest.raises(RuleFileError) as info:
        load_files([p])
    assert [str(e) for e in info.value.errors] == [
        f"{p}:3:22: unknown matcher 'alway' — did you mean 'always'?",
        f"{p}:4:41: unknown generator 'intger' — did you mean 'integer'?",
    ]
    assert (info.value.path, info.value.line, info.value.col) == (str(p), 3, 22)


def test_schema_key_and_extension_keys_are_ignored() -> None:
    loaded = load(
        """
        $schema: ../../synthgpt/rules/rulefile.schema.json
        x-answers:
          ok: &ok {text: fine}
        rules:
          - {name: a, match: always, output: *ok}
        """
    )
    assert repr(loaded.ruleset.rules[0]) == "Rule('a', always(), reply(text=just('fine')))"
    as_json = load_text('{"$schema": "rulefile.schema.json", "rules": []}', "rules.txt", json_syntax=True)
    assert as_json.ruleset.rules == []


def test_yaml_dates_stay_text() -> None:
    loaded = load("rules: [{name: a, match: always, generate: {just: {day: 2024-01-02, at: 2024-01-02T10:00:00Z}}}]")  # noqa: E501
    assert ask(loaded).text == '{"day":"2024-01-02","at":"2024-01-02T10:00:00Z"}'


def test_loaded_rules_build_their_mock() -> None:
    from synthgpt.testing import SynthGPTFixture

    loaded = load("seed: 42\nclock: fixed:100\nrules: [{name: a, match: always, output: {text: x}}]\n")
    mock = loaded.mock()
    assert (type(mock), mock.seed, mock.clock.now(), mock.rules is loaded.ruleset) == (MockGPT, 42, 100, True)
    other = loaded.mock(7, FixedClock(5), cls=SynthGPTFixture, journal_size=3)
    assert (type(other), other.seed, other.clock.now(), other.journal.maxlen) == (SynthGPTFixture, 7, 5, 3)
    bare = load("rules: []\n").mock()
    assert (bare.seed, type(bare.clock)) == (0, FixedClock)
