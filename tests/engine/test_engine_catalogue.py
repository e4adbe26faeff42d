"""Snapshots pinning what every generator and combinator draws, and the repr that rebuilds it.

A change in any value here means answers users have pinned in their own fixtures would change: update the
snapshot only for a deliberate change, and say so in the changelog.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel
from syrupy.assertion import SnapshotAssertion

from synthgpt import MockGPT, ModelRequest, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators import DrawContext, Generator

REQUEST = ModelRequest.from_dict(
    {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": (
                    "Tell me about the weather in Paris. Trains are late again! What about budget planning?"
                ),
            },
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                    "required": ["city"],
                },
            }
        ],
        "response_schema": {
            "kind": "json_schema",
            "name": "forecast",
            "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
                "required": ["city", "celsius"],
            },
        },
    }
)


def double(x: int) -> int:
    return x * 2


def is_even(x: int) -> bool:
    return x % 2 == 0


def sized_words(n: int) -> Generator[str]:
    return g.words(n, n)


CATALOGUE: dict[str, Generator[Any]] = {
    "just": g.just({"a": [1, 2]}),
    "integer": g.integer(-5, 5),
    "number": g.number(0.5, 9.75, decimals=3),
    "number_raw": g.number(0, 1, decimals=None),
    "boolean": g.boolean(),
    "boolean_p": g.boolean(0.9),
    "choice": g.choice(["red", "green", g.integer(1, 3)]),
    "id": g.id("user"),
    "id_sep": g.id("ord", length=8, sep="-"),
    "uuid": g.uuid(),
    "words": g.words(2, 4),
    "sentence": g.sentence(),
    "paragraph": g.paragraph(2, 3),
    "prose": g.prose(),
    "fake_name": g.fake("name"),
    "fake_city": g.fake("city"),
    "fake_kwargs": g.fake("date", pattern="%Y-%m-%d"),
    "fake_locale": g.fake("name", locale="fr_FR"),
    "summary": g.summary(max_chars=40, count=2),
    "last_user": g.last_user(),
    "echo": g.echo(),
    "template": g.template(
        "{{ model }}/{{ turn }}: {{ city }} {{ integer(1, 6) }} {{ fake('first_name') }} "
        "{{ ['x','y','z']|random }} {{ system }} {{ now }} {{ call_index }}"
    ),
    "hash_tokens": g.hash_tokens(5),
    "tool_call_args": g.tool_call("get_weather", {"city": g.fake("city"), "unit": "celsius"}),
    "tool_call_schema": g.tool_call(),
    "reasoning": g.reasoning(),
    "reasoning_text": g.reasoning("A literal thought."),
    "reasoning_template": g.reasoning(g.template("Think about {{ city }}.")),
    "reply": g.reply(text=g.sentence(3, 4), tool_calls=[g.tool_call("get_weather", {"city": "Oslo"})]),
    "reply_reasoning": g.reply(text="ok", reasoning="because", finish_reason="stop"),
    "one_of": g.one_of("a", g.integer(10, 20), {"k": g.boolean()}),
    "or_operator": g.just("left") | g.just("right"),
    "weighted": g.weighted([(3, "common"), (1, "rare")]),
    "weighted_mapping": g.weighted({"x": 1, "y": 2.5}),
    "objects": g.objects({"id": g.id("u"), "age": g.integer(18, 60), "tags": ["a", g.words(1, 1)]}),
    "json_object": g.json_object({"ok": True, "n": g.integer()}),
    "lists": g.lists(g.integer(0, 9), 2, 4),
    "lists_unique": g.lists(g.choice(["a", "b", "c", "d"]), 3, 3, unique=True),
    "map": g.integer(1, 5).map(double),
    "bind": g.integer(1, 3).bind(sized_words),
    "filter": g.integer(0, 100).filter(is_even),
    "filter_tries": g.integer(0, 100).filter(is_even, max_tries=7),
    "answer": g.answer(g.words(1, 2), stream={"chunk_chars": 2}, finish_reason="length"),
    "error": g.error(429, "slow down", code="rate_limit_exceeded"),
    "from_schema": g.from_schema(
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 3}, "tag": {"enum": ["a", "b"]}},
            "required": ["n", "tag"],
        }
    ),
    "from_request_schema": g.from_request_schema(),
    "embeddings": g.embeddings(dimensions=4),
    "lifted_nested": g.lift({"xs": [g.integer(0, 1), {"y": g.boolean()}]}),
}


def plain(value: Any) -> Any:
    """Drawn values as plain data, so the snapshot shows fields rather than object reprs."""
    if isinstance(value, BaseModel):
        return {"<type>": type(value).__name__, **plain(value.model_dump())}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "<type>": type(value).__name__,
            **{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def draw(gen: Generator[Any], seed: int) -> Any:
    ctx = DrawContext(REQUEST, seed, now=1_767_225_600, captures={"city": "Paris"}, rule="catalogue")
    return plain(gen.draw(ctx))


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_generator_catalogue(name: str, snapshot: SnapshotAssertion) -> None:
    gen = CATALOGUE[name]
    assert {"repr": repr(gen), "draws": [draw(gen, seed) for seed in (0, 1, 2)]} == snapshot


def test_catalogue_covers_every_registered_generator() -> None:
    missing = [n for n in g.REGISTRY if not any(k == n or k.startswith(n + "_") for k in CATALOGUE)]
    assert missing == []


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_repr_rebuilds_the_generator(name: str) -> None:
    """Evaluating a repr in the DSL's namespace gives a generator with the same repr and the same draws."""
    gen = CATALOGUE[name]
    namespace: dict[str, Any] = {n: getattr(g, n) for n in g.__all__}
    namespace.update(double=double, is_even=is_even, sized_words=sized_words)
    text = repr(gen)
    if text.startswith("["):  # a bare list of generators is what `lift([...])` builds
        text = f"lift({text})"
    rebuilt = eval(text, namespace)
    assert repr(rebuilt) == repr(gen)
    assert [draw(rebuilt, s) for s in (0, 1)] == [draw(gen, s) for s in (0, 1)]


# ------------------------------------------------------------------------------------ whole answers


def catalogue_mock() -> MockGPT:
    return MockGPT(
        seed=42,
        clock=g.fixed_clock(1_700_000_000),
        rules=[
            Rule(
                "weather",
                m.last_user(contains="weather") & m.has_tools(),
                g.tool_call("get_weather", {"city": g.fake("city")}),
            ),
            Rule(
                "city",
                m.last_user(regex=r"capital of (?P<country>\w+)"),
                g.template("The capital of {{ country }} is {{ fake('city') }}."),
            ),
            Rule("structured", m.wants_schema(), g.from_request_schema()),
            Rule(
                "profile", m.model("gpt-4o*"), g.json_object({"id": g.id("user"), "age": g.integer(18, 60)})
            ),
            Rule("think", m.wants_reasoning(), g.sentence()),
            Rule("tool-result", m.has_tool_result(), g.template("Got: {{ tool_results[0].content }}")),
            Rule(
                "flaky",
                m.header("x-scenario", "flaky"),
                g.words(),
                stream={"faults": [{"kind": "disconnect", "after": 2}]},
            ),
            Rule("broken", m.last_user(contains="break"), error={"status": 503, "message": "overloaded"}),
            Rule("default", m.always(), g.summary(max_chars=120, count=2)),
        ],
    )


CONVERSATIONS: dict[str, dict[str, Any]] = {
    "tool_call": {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "What's the weather like?"}],
        "tools": [
            {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
    },
    "captures": {"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]},
    "structured": {
        "model": "m",
        "messages": [{"role": "user", "content": "a person"}],
        "response_schema": {
            "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        },
    },
    "profile": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "me"}]},
    "reasoning": {
        "model": "o3",
        "messages": [{"role": "user", "content": "Plan a budget"}],
        "reasoning": {"effort": "low"},
    },
    "tool_result": {
        "model": "m",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21C"},
        ],
    },
    "faults": {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "headers": {"X-Scenario": "flaky"},
    },
    "error": {"model": "m", "messages": [{"role": "user", "content": "please break"}]},
    "default": {
        "model": "m",
        "messages": [{"role": "user", "content": "First sentence here. Second one! Third is dropped."}],
        "n": 2,
    },
    "limit": {
        "model": "m",
        "messages": [{"role": "user", "content": "First sentence here. Second one! Third is dropped."}],
        "max_output_tokens": 3,
    },
}


@pytest.mark.parametrize("name", sorted(CONVERSATIONS))
def test_rule_catalogue_answers(name: str, snapshot: SnapshotAssertion) -> None:
    mock = catalogue_mock()
    out = mock.generate(CONVERSATIONS[name])
    record = mock.records[-1]
    assert {
        "output": out.model_dump(mode="json"),
        "record": {
            "index": record.index,
            "rule": record.rule,
            "seed": record.seed,
            "at": record.at,
            "captures": record.captures,
        },
    } == snapshot


def test_rule_reprs(snapshot: SnapshotAssertion) -> None:
    mock = catalogue_mock()
    assert [repr(r) for r in mock.rules] + [repr(mock)] == snapshot
