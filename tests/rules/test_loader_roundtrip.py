"""A rule file and the same rules written in Python give identical rules and identical answers."""

from __future__ import annotations

import textwrap
from typing import Any

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.clock import FixedClock
from synthgpt.rules.loader import load_text
from synthgpt.rules.script import script, sequence

RULE_FILE = """
seed: 42
clock: fixed:1700000000
rules:
  - name: weather
    match:
      last_user: {contains: weather}
      has_tools: true
    generate:
      tool_call: [get_weather, {city: {fake: city}, days: {integer: [1, 7]}}]
  - name: profile
    match: {model: "gpt-4o*", not: {wants_schema: null}}
    generate:
      objects:
        id: {id: user}
        age: {integer: [18, 60]}
        tags: {lists: [{choice: [red, green, blue]}, 1, 3]}
        score: {weighted: [[3, {number: [0, 1]}], [1, {just: null}]]}
  - name: doc
    match: {wants_schema: invoice}
    generate: {from_request_schema: {overrides: {total: {integer: [10, 20]}}}}
  - name: greet
    match: {any: [{last_user: {regex: "^hi (?P<who>\\\\w+)"}}, {turn: {min: 3}}]}
    template: "Hello {{ captures.who|default('again') }}, {{ fake('first_name') }} here; {{ integer(1, 6) }}."
    stream: {chunk_chars: 3, faults: [{kind: truncate, after: 5}]}
  - name: trip
    match: {last_user: trip, has_tools: [search]}
    script:
      - generate: {tool_call: [search, {q: {template: "{{ last_user }}"}}]}
      - output: {text: "Found it.", usage: {completion_tokens: 3}}
  - name: flaky
    match: {last_user: flaky}
    sequence:
      - error: {status: 503, message: busy}
      - output: {text: fine}
  - name: limited
    match: {last_user: once}
    times: 1
    reasoning: false
    output:
      text: Only once.
      tool_calls: [{name: note, arguments: {x: 1}}]
      finish_reason: stop
  - name: default
    match: always
    generate: {summary: {max_chars: 80, count: 2}}
"""


def python_rules() -> RuleSet:
    return RuleSet(
        [
            Rule(
                "weather",
                m.last_user(contains="weather") & m.has_tools(),
                g.tool_call("get_weather", {"city": g.fake("city"), "days": g.integer(1, 7)}),
            ),
            Rule(
                "profile",
                m.model("gpt-4o*") & ~m.wants_schema(),
                g.objects(
                    {
                        "id": g.id("user"),
                        "age": g.integer(18, 60),
                        "tags": g.lists(g.choice(["red", "green", "blue"]), 1, 3),
                        "score": g.weighted([(3, g.number(0, 1)), (1, g.just(None))]),
                    }
                ),
            ),
            Rule("doc", m.wants_schema("invoice"), g.from_request_schema({"total": g.integer(10, 20)})),
            Rule(
                "greet",
                m.last_user(regex=r"^hi (?P<who>\w+)") | m.turn(min=3),
                g.template(
                    "Hello {{ captures.who|default('again') }}, {{ fake('first_name') }} here; "
                    "{{ integer(1, 6) }}."
                ),
                stream={"chunk_chars": 3, "faults": [{"kind": "truncate", "after": 5}]},
            ),
            Rule(
                "trip",
                m.last_user("trip") & m.has_tools("search"),
                script(
                    g.tool_call("search", {"q": g.template("{{ last_user }}")}),
                    g.answer(g.reply(text="Found it."), usage={"completion_tokens": 3}),
                ),
            ),
            Rule("flaky", m.last_user("flaky"), sequence(g.error(503, "busy"), g.reply(text="fine"))),
            Rule(
                "limited",
                m.last_user("once"),
                g.reply(
                    text="Only once.",
                    tool_calls=[{"name": "note", "arguments": {"x": 1}}],
                    finish_reason="stop",
                ),
                times=1,
                reasoning=False,
            ),
            Rule("default", m.always(), g.summary(max_chars=80, count=2)),
        ]
    )


TOOLS = [{"name": n, "parameters": {"type": "object", "properties": {}}} for n in ("get_weather", "search")]
INVOICE = {
    "type": "object",
    "properties": {"total": {"type": "integer"}, "paid": {"type": "boolean"}},
    "required": ["total", "paid"],
    "additionalProperties": False,
}
REQUESTS: list[dict[str, Any]] = [
    {"model": "synth-1", "messages": [{"role": "user", "content": "weather in Oslo?"}], "tools": TOOLS},
    {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "me"}]},
    {
        "model": "synth-1",
        "messages": [{"role": "user", "content": "bill"}],
        "response_schema": {"name": "invoice", "schema": INVOICE},
    },
    {"model": "synth-1", "messages": [{"role": "user", "content": "hi Ada"}], "stream": True},
    {
        "model": "synth-1",
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "d"},
            {"role": "user", "content": "e"},
        ]
    },
    {"model": "synth-1", "messages": [{"role": "user", "content": "plan a trip"}], "tools": TOOLS},
    {
        "model": "synth-1",
        "messages": [
            {"role": "user", "content": "plan a trip"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "search", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "tools": TOOLS,
    },
    {"model": "synth-1", "messages": [{"role": "user", "content": "flaky"}]},
    {"model": "synth-1", "messages": [{"role": "user", "content": "flaky"}]},
    {"model": "synth-1", "messages": [{"role": "user", "content": "once"}], "reasoning": {"effort": "low"}},
    {"model": "synth-1", "messages": [{"role": "user", "content": "once"}]},
    {"model": "synth-1", "messages": [{"role": "user", "content": "anything"}]},
]


def answers(mock: MockGPT) -> list[str]:
    return [mock.generate(r).model_dump_json() for r in REQUESTS]


def test_same_rules() -> None:
    loaded = load_text(textwrap.dedent(RULE_FILE), "rules.yaml")
    assert [repr(r) for r in loaded.ruleset] == [repr(r) for r in python_rules()]


def test_same_answers() -> None:
    loaded = load_text(textwrap.dedent(RULE_FILE), "rules.yaml")
    assert loaded.seed == 42 and repr(loaded.clock) == "FixedClock(1700000000)"
    from_file = MockGPT(loaded.ruleset, seed=loaded.seed, clock=loaded.clock)
    from_python = MockGPT(python_rules(), seed=42, clock=FixedClock(1_700_000_000))
    got = answers(from_file)
    assert got == answers(from_python)
    assert [r.rule for r in from_file.records] == [
        "weather",
        "profile",
        "doc",
        "greet",
        "greet",
        "trip",
        "trip",
        "flaky",
        "flaky",
        "limited",
        "default",
        "default",
    ]
    # the answers are what the rules say, not just equal to each other
    records = from_file.records
    assert records[5].output.tool_calls[0].arguments == '{"q":"plan a trip"}'
    assert (records[6].output.text, records[6].output.usage.completion_tokens) == ("Found it.", 3)
    assert records[7].output.error is not None and records[7].output.error.status == 503
    assert records[8].output.text == "fine"
    assert records[9].output.reasoning == ""  # reasoning: false, even though the request asked
