"""Turn-aware matching, scripts and sequences: what agent loops need from rule files."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from synthgpt import DrawError, MockGPT, ModelOutput, ModelRequest, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.rules.loader import load_text
from synthgpt.rules.script import Script, script, sequence

USER = {"role": "user", "content": "book a trip"}


def call(cid: str, name: str, args: str = "{}") -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": args}


def result(cid: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def req(*messages: dict[str, Any]) -> ModelRequest:
    return ModelRequest.from_dict({"model": "synth-1", "messages": list(messages)})


ONE_ROUND = (
    USER,
    {"role": "assistant", "tool_calls": [call("a", "search"), call("b", "weather")]},
    result("a", '{"id": "F1"}'),
    result("b", "sunny"),
)


@pytest.mark.parametrize(
    ("messages", "rounds"),
    [
        ((USER,), 0),
        (ONE_ROUND, 1),
        # a Responses-style history: one assistant message per call, then the results
        (
            (
                USER,
                {"role": "assistant", "tool_calls": [call("a", "search")]},
                {"role": "assistant", "tool_calls": [call("b", "weather")]},
                result("a", "x"),
                result("b", "y"),
            ),
            1,
        ),
        ((*ONE_ROUND, {"role": "assistant", "tool_calls": [call("c", "book")]}, result("c", "ok")), 2),
        # a new user message starts a new turn
        ((*ONE_ROUND, {"role": "assistant", "content": "done"}, {"role": "user", "content": "again"}), 0),
    ],
)
def test_tool_rounds(messages: tuple[dict[str, Any], ...], rounds: int) -> None:
    r = req(*messages)
    assert m.tool_rounds(r) == rounds
    assert m.round(rounds)(r) and not m.round(rounds + 1)(r)
    assert m.round(min=rounds)(r) and not m.round(min=rounds + 1)(r)
    assert m.round(max=rounds)(r)


def test_tool_result_matcher() -> None:
    r = req(*ONE_ROUND)
    assert m.tool_result()(r)
    assert m.tool_result("weather", contains="SUNNY")(r)
    assert not m.tool_result("search", contains="sunny")(r)
    assert m.tool_result("search", regex=r'"id": "(?P<flight>\w+)"').match(r) == {"flight": "F1"}
    assert not m.tool_result("book")(r)
    # results of an earlier turn do not count
    assert not m.tool_result()(req(*ONE_ROUND, {"role": "user", "content": "next"}))
    with pytest.raises(ValueError, match="round: min must be a whole number >= 0, got -1"):
        m.round(min=-1)
    with pytest.raises(ValueError, match="round: give eq, min= or max="):
        m.round()


def test_template_reads_tool_results_and_round() -> None:
    t = g.template(
        "{{ round }}: {{ tool_result('search').id }} / {{ tool_result('weather') }} / {{ tool_result() }}"
    )
    assert t.example(request=req(*ONE_ROUND)) == "1: F1 / sunny / sunny"
    with pytest.raises(DrawError, match="template: no result of tool 'book' in the current turn"):
        g.template("{{ tool_result('book') }}").example(request=req(*ONE_ROUND))


SCRIPTED = """
rules:
  - name: trip
    match: {last_user: trip}
    script:
      - generate: {tool_call: [search, {q: {template: "{{ last_user }}"}}]}
      - generate: {tool_call: [book, {flight: {template: "{{ tool_result('search').id }}"}}]}
      - template: "Booked {{ tool_result('book').ref }}."
"""


def test_script_steps_follow_the_conversation_not_the_call_order() -> None:
    loaded = load_text(textwrap.dedent(SCRIPTED))
    step2 = req(USER, {"role": "assistant", "tool_calls": [call("a", "search")]}, result("a", '{"id": "F9"}'))
    step3 = req(
        *step2.model_dump()["messages"],
        {"role": "assistant", "tool_calls": [call("b", "book")]},
        result("b", '{"ref": "XK7"}'),
    )
    mock = MockGPT(loaded.ruleset)
    # asked out of order, and twice: each request gets its own step every time
    outs = [mock.generate(r) for r in (step3, step2, req(USER), step2, step3)]
    assert [o.text or o.tool_calls[0].arguments for o in outs] == [
        "Booked XK7.",
        '{"flight":"F9"}',
        '{"q":"book a trip"}',
        '{"flight":"F9"}',
        "Booked XK7.",
    ]
    # past the last step, the last step answers again
    step4 = req(
        *step3.model_dump()["messages"],
        {"role": "assistant", "tool_calls": [call("c", "book")]},
        result("c", '{"ref": "ZZ"}'),
    )
    assert mock.generate(step4).text == "Booked ZZ."


def test_sequence_follows_the_call_order_and_resets() -> None:
    mock = MockGPT([Rule("r", m.always(), sequence("one", "two"))])
    texts = [mock.generate(req(USER)).text for _ in range(3)]
    assert texts == ["one", "two", "two"]
    mock.reset()
    assert mock.generate(req(USER)).text == "one"


def test_script_validation_and_repr() -> None:
    assert repr(script("a", g.integer(1, 2))) == "script(just('a'), integer(1, 2))"
    assert repr(Script(["x"], by="call")) == "sequence(just('x'))"
    with pytest.raises(ValueError, match="script needs at least one step"):
        script()
    with pytest.raises(ValueError, match="steps go by 'round' or 'call', got 'turn'"):
        Script(["x"], by="turn")  # type: ignore[arg-type]


AGENT = """
rules:
  - name: stop
    match: {round: {min: 3}}
    output: {text: Stopping after three rounds.}
  - name: call-tools
    match: has_tools
    generate: {tool_call: lookup}
"""


def run_loop(mock: MockGPT, tool: Callable[[dict[str, Any]], Any], limit: int = 20) -> list[ModelOutput]:
    """A naive agent: calls tools for as long as the model asks for them."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    tools = [{"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]
    outs = []
    for _ in range(limit):
        out = mock.generate({"model": "synth-1", "messages": messages, "tools": tools})
        outs.append(out)
        if not out.tool_calls:
            return outs
        messages.append(
            {"role": "assistant", "tool_calls": [call(t.id, t.name, t.arguments) for t in out.tool_calls]}
        )
        messages += [result(t.id, json.dumps(tool(json.loads(t.arguments)))) for t in out.tool_calls]
    raise AssertionError("the loop never ended")


def test_a_round_guard_ends_any_loop() -> None:
    outs = run_loop(MockGPT(load_text(textwrap.dedent(AGENT)).ruleset), lambda args: {"ok": True})
    assert [o.rule for o in outs] == ["call-tools", "call-tools", "call-tools", "stop"]
    assert outs[-1].text == "Stopping after three rounds."
