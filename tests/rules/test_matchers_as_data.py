"""Matchers are values: equal when built from the same data, whatever their repr says."""

from __future__ import annotations

from synthgpt import ModelRequest
from synthgpt import matchers as m
from synthgpt.rules.matchers import Always, Model


def test_equal_when_built_from_the_same_arguments() -> None:
    pairs = [
        (m.model("gpt-4o"), m.model("gpt-4o")),
        (m.last_user(regex=r"(?P<city>\w+)"), m.last_user(regex=r"(?P<city>\w+)")),
        (m.model("a") & ~m.last_user("hi"), m.model("a") & ~m.last_user("hi")),
        (m.always(), m.always()),
    ]
    for a, b in pairs:
        assert a == b and hash(a) == hash(b) and a.identity == b.identity
    assert len({m.model("x"), m.model("x"), m.model("y")}) == 2


def test_different_data_is_a_different_matcher_even_with_the_same_repr() -> None:
    first = m.where(lambda r: r.model == "a")
    second = m.where(lambda r: r.model == "b")
    assert repr(first) == repr(second)  # both `where(test_…<locals>.<lambda>)`
    assert first != second
    assert m.last_user("hi") != m.last_user("hi", case_sensitive=True)
    assert m.model("a") | m.model("b") != m.model("b") | m.model("a")  # order decides the captures


def test_the_data_is_readable() -> None:
    exact, glob = m.model("gpt-4o"), m.model("gpt-4o*")
    assert isinstance(exact, Model) and (exact.pattern, exact.glob) == ("gpt-4o", False)
    assert isinstance(glob, Model) and glob.glob
    assert isinstance(m.always(), Always) and m.always().identity == (Always,)


def test_every_built_in_matcher_is_known_by_its_data_not_its_repr() -> None:
    # same repr, different meaning: a tool result answering a tool named "" is not any tool result
    assert repr(m.has_tool_result("")) == repr(m.has_tool_result()) == "has_tool_result()"
    assert m.has_tool_result("") != m.has_tool_result()
    # different repr, same meaning: the order of api kinds or tool names does not change what matches
    assert m.api("chat", "responses") == m.api("responses", "chat")
    assert m.has_tools("a", "b") == m.has_tools("b", "a")
    assert m.header("X-Team", "a") == m.header("x-team", "a")
    built = [
        m.api("chat"), m.has_tools(), m.tool_named("get_*"), m.tool_choice("named", "f"),
        m.has_tool_result("f", last=True), m.previous_tool_call("f"), m.turn(2), m.round(min=1),
        m.header("x-a", regex="b"), m.wants_schema("s"), m.wants_reasoning(), m.last_user("hi"),
        m.system(equals="be brief"), m.any_message(glob="a*", role="user"), m.tool_result("f", "ok"),
    ]  # fmt: skip
    for matcher in built:
        assert repr(matcher) not in matcher.identity  # data, not the expression that built it
        assert matcher.identity[0] is type(matcher)


def test_the_data_of_fields_counts_and_texts_is_readable() -> None:
    from synthgpt.rules.predicates import Api, Count, HasToolResult
    from synthgpt.rules.text_matchers import TextMatcher

    api = m.api("chat", "responses")
    assert isinstance(api, Api) and api.kinds == ("chat", "responses")
    rounds = m.round(min=1, max=3)
    assert isinstance(rounds, Count)
    assert (rounds.what, rounds.eq, rounds.min, rounds.max) == ("round", None, 1, 3)
    result = m.has_tool_result("f", last=True)
    assert isinstance(result, HasToolResult) and (result.name, result.last) == ("f", True)
    text = m.any_message("hi", role="user")
    assert isinstance(text, TextMatcher) and (text.source, text.role, text.test.contains) == (
        "any_message", "user", "hi"
    )  # fmt: skip


def test_a_match_without_captures_shares_one_read_only_mapping() -> None:
    from synthgpt.rules.matcher_base import NO_CAPTURES

    r = ModelRequest.from_dict({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi there"}]})
    got = (m.model("gpt-4o") & m.last_user("hi")).match(r)
    assert got is NO_CAPTURES and got == {}
    captured = (m.model("gpt-4o") & m.last_user(regex=r"(?P<word>t\w+)")).match(r)
    assert captured == {"word": "there"}
