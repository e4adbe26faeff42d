"""Matchers: what each one matches, their captures, how they combine, and reprs that rebuild them."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import ModelRequest
from synthgpt import matchers as m
from synthgpt.rules.matchers import Matcher


def req(**body: Any) -> ModelRequest:
    return ModelRequest.from_dict(body)


def user(text: str, **extra: Any) -> ModelRequest:
    return req(messages=[{"role": "user", "content": text}], **extra)


WEATHER_TOOL = {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}
AGENT_TURN = req(
    messages=[
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "What's the weather in Oslo?"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
    ],
    tools=[WEATHER_TOOL, {"name": "search_web"}],
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
)


def test_always_matches_anything() -> None:
    assert m.always().match(ModelRequest()) == {}


def test_model_exact_and_glob() -> None:
    assert m.model("gpt-4o")(req(model="gpt-4o"))
    assert not m.model("gpt-4o")(req(model="gpt-4o-mini"))
    assert m.model("gpt-4o*")(req(model="gpt-4o-mini"))
    assert m.model("claude-?-*")(req(model="claude-3-haiku"))
    assert not m.model("GPT-4o*")(req(model="gpt-4o"))  # model names are case-sensitive


def test_api() -> None:
    assert m.api("chat", "responses")(req(api="responses"))
    assert not m.api("messages")(req(api="chat"))


def test_last_user_contains_is_case_insensitive_unless_asked() -> None:
    r = user("Tell me about the Weather")
    assert m.last_user("weather")(r)
    assert m.last_user(contains="WEATHER")(r)
    assert not m.last_user("weather", case_sensitive=True)(r)
    assert m.last_user("Weather", case_sensitive=True)(r)


def test_last_user_reads_only_the_last_user_message() -> None:
    assert not m.last_user("first")(AGENT_TURN)
    assert m.last_user("oslo")(AGENT_TURN)
    assert m.last_user()(AGENT_TURN)
    assert not m.last_user()(req(messages=[{"role": "system", "content": "x"}]))


def test_last_user_equals_and_glob() -> None:
    assert m.last_user(equals="  hello ")(user("Hello"))
    assert not m.last_user(equals="hello")(user("hello there"))
    assert m.last_user(glob="what*oslo?")(user("What's the weather in Oslo?"))


def test_regex_named_groups_become_captures() -> None:
    got = m.last_user(regex=r"weather in (?P<city>\w+)(?: on (?P<day>\w+))?").match(AGENT_TURN)
    assert got == {"city": "Oslo"}  # unmatched optional groups are left out
    assert m.last_user(regex=r"(?P<n>\d+)").match(user("no digits")) is None


def test_system_and_developer_text() -> None:
    r = req(
        messages=[{"role": "system", "content": "You are terse."}, {"role": "developer", "content": "JSON"}]
    )
    assert m.system("terse")(r) and m.system("json")(r)
    assert m.system()(r)
    assert not m.system()(user("hi"))
    assert m.system(regex=r"(?P<style>terse|verbose)").match(r) == {"style": "terse"}


def test_any_message_with_and_without_role() -> None:
    assert m.any_message("first answer")(AGENT_TURN)
    assert m.any_message("rain", role="tool")(AGENT_TURN)
    assert not m.any_message("rain", role="user")(AGENT_TURN)
    assert m.any_message(regex=r"(?P<q>first \w+)").match(AGENT_TURN) == {"q": "first question"}


def test_tool_matchers() -> None:
    assert m.has_tools()(AGENT_TURN)
    assert m.has_tools("get_weather", "search_web")(AGENT_TURN)
    assert not m.has_tools("get_weather", "calculator")(AGENT_TURN)
    assert not m.has_tools()(user("x"))
    assert m.tool_named("search_*")(AGENT_TURN)
    assert not m.tool_named("calc*")(AGENT_TURN)
    assert m.tool_choice("named", "get_weather")(AGENT_TURN)
    assert not m.tool_choice("named", "search_web")(AGENT_TURN)
    assert m.tool_choice("auto")(user("x"))
    assert m.tool_choice("required")(user("x", tool_choice="required"))


def test_tool_results_in_the_current_turn() -> None:
    assert m.has_tool_result()(AGENT_TURN)
    assert m.has_tool_result("get_weather")(AGENT_TURN)
    assert not m.has_tool_result("search_web")(AGENT_TURN)
    assert m.has_tool_result(last=True)(AGENT_TURN)
    assert m.previous_tool_call("get_weather")(AGENT_TURN)
    assert not m.previous_tool_call("search_web")(AGENT_TURN)
    # a new user message starts a new turn: earlier tool results no longer count
    later = req(
        messages=[*(x.model_dump() for x in AGENT_TURN.messages), {"role": "user", "content": "thanks"}]
    )
    assert not m.has_tool_result()(later)
    assert not m.previous_tool_call()(later)


def test_turn() -> None:
    assert m.turn(2)(AGENT_TURN)
    assert not m.turn(1)(AGENT_TURN)
    assert m.turn(min=2)(AGENT_TURN) and m.turn(max=2)(AGENT_TURN)
    assert not m.turn(min=3)(AGENT_TURN)


def test_header_names_are_case_insensitive_and_values_exact_or_regex() -> None:
    r = user("x", headers={"X-Scenario": "flaky-42"})
    assert m.header("x-scenario")(r)
    assert m.header("X-SCENARIO", "flaky-42")(r)
    assert not m.header("x-scenario", "flaky")(r)
    assert m.header("x-scenario", regex=r"flaky-(?P<run>\d+)").match(r) == {"run": "42"}
    assert not m.header("x-other")(r)


def test_header_with_an_empty_value_matches_only_an_empty_value() -> None:
    assert not m.header("x-scenario", "")(user("x", headers={"X-Scenario": "flaky-42"}))
    assert m.header("x-scenario", "")(user("x", headers={"X-Scenario": ""}))
    assert not m.header("x-scenario", "")(user("x"))
    assert repr(m.header("x-scenario", "")) == "header('x-scenario', '')"


def test_any_message_takes_a_glob_like_the_other_text_matchers() -> None:
    assert m.any_message(glob="first *")(AGENT_TURN)
    assert m.any_message(glob="*OSLO?", role="user")(AGENT_TURN)
    assert m.any_message(glob="*Oslo?", role="user", case_sensitive=True)(AGENT_TURN)
    assert not m.any_message(glob="*OSLO?", role="user", case_sensitive=True)(AGENT_TURN)
    assert not m.any_message(glob="first", role="user")(AGENT_TURN)
    assert repr(m.any_message(glob="first *", role="user")) == "any_message(glob='first *', role='user')"


def test_wants_schema_and_reasoning() -> None:
    schema = {"kind": "json_schema", "name": "person", "schema": {"type": "object"}}
    r = user("x", response_schema=schema, reasoning={"effort": "low"})
    assert m.wants_schema()(r) and m.wants_schema("person")(r)
    assert not m.wants_schema("other")(r)
    assert m.wants_schema()(user("x", response_schema={"kind": "json_object"}))
    assert m.wants_reasoning()(r)
    assert not m.wants_schema()(user("x")) and not m.wants_reasoning()(user("x"))


def test_callables_are_matchers_and_mappings_they_return_are_captures() -> None:
    def long_prompt(r: ModelRequest) -> bool:
        return len(r.last_user) > 10

    def split(r: ModelRequest) -> dict[str, str] | None:
        head, _, tail = r.last_user.partition(":")
        return {"cmd": head, "arg": tail.strip()} if tail else None

    assert m.where(long_prompt)(user("a long enough prompt"))
    assert m.where(split).match(user("run: tests")) == {"cmd": "run", "arg": "tests"}
    combined = m.model("m") & long_prompt
    assert isinstance(combined, Matcher) and combined(user("a long enough prompt", model="m"))
    assert (long_prompt & m.model("m"))(user("a long enough prompt", model="m"))


def test_and_merges_captures_or_keeps_the_first_match_not_negates() -> None:
    r = user("order 7 for alice", headers={"x-team": "red"})
    both = m.last_user(regex=r"order (?P<n>\d+)") & m.header("x-team", regex=r"(?P<team>\w+)")
    assert both.match(r) == {"n": "7", "team": "red"}
    either = m.last_user(regex=r"for (?P<who>\w+)") | m.last_user(regex=r"order (?P<n>\d+)")
    assert either.match(r) == {"who": "alice"}
    assert (~m.model("other")).match(r) == {}
    assert (~m.model("m")).match(user("x", model="m")) is None
    assert (m.model("nope") & m.always()).match(r) is None


REPRS: list[tuple[Matcher, str]] = [
    (m.always(), "always()"),
    (m.model("gpt-4o*"), "model('gpt-4o*')"),
    (m.api("chat", "responses"), "api('chat', 'responses')"),
    (m.last_user(), "last_user()"),
    (m.last_user("Weather"), "last_user(contains='Weather')"),
    (m.last_user("Weather", case_sensitive=True), "last_user(contains='Weather', case_sensitive=True)"),
    (m.last_user(regex=r"in (?P<city>\w+)"), "last_user(regex='in (?P<city>\\\\w+)')"),
    (m.last_user(equals="hi"), "last_user(equals='hi')"),
    (m.last_user(glob="*?"), "last_user(glob='*?')"),
    (m.system("terse"), "system(contains='terse')"),
    (m.any_message("x", role="tool"), "any_message(contains='x', role='tool')"),
    (m.any_message(role="tool"), "any_message(role='tool')"),
    (m.has_tools(), "has_tools()"),
    (m.has_tools("a", "b"), "has_tools('a', 'b')"),
    (m.tool_named("get_*"), "tool_named('get_*')"),
    (m.tool_choice("named", "x"), "tool_choice('named', 'x')"),
    (m.has_tool_result("x", last=True), "has_tool_result('x', last=True)"),
    (m.previous_tool_call(), "previous_tool_call()"),
    (m.turn(2), "turn(2)"),
    (m.turn(min=1, max=3), "turn(min=1, max=3)"),
    (m.header("X-Scenario", "flaky"), "header('X-Scenario', 'flaky')"),
    (m.header("x-run", regex=r"\d+"), "header('x-run', regex='\\\\d+')"),
    (m.wants_schema("person"), "wants_schema('person')"),
    (m.wants_reasoning(), "wants_reasoning()"),
    (m.model("a") & m.api("chat") & m.has_tools(), "model('a') & api('chat') & has_tools()"),
    (m.model("a") & (m.turn(1) | m.turn(3)), "model('a') & (turn(1) | turn(3))"),
    (m.model("a") & m.turn(1) | m.turn(3), "model('a') & turn(1) | turn(3)"),
    (~m.has_tools(), "~has_tools()"),
    (~(m.model("a") | m.model("b")), "~(model('a') | model('b'))"),
]


@pytest.mark.parametrize(("matcher", "text"), REPRS, ids=[t for _, t in REPRS])
def test_repr_is_the_expression_and_rebuilds_the_matcher(matcher: Matcher, text: str) -> None:
    assert repr(matcher) == text
    namespace = {name: getattr(m, name) for name in m.__all__}
    rebuilt = eval(text, namespace)
    assert repr(rebuilt) == text
    for r in (AGENT_TURN, user("Weather in Oslo"), ModelRequest()):
        assert rebuilt.match(r) == matcher.match(r)


def test_where_repr_names_the_function() -> None:
    def my_check(r: ModelRequest) -> bool:
        return True

    assert repr(m.where(my_check)).startswith("where(") and "my_check" in repr(m.where(my_check))
