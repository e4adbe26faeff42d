"""respx-style assertions on the `synthgpt` fixture's journal, and what a miss reports."""

from __future__ import annotations

import re

import pytest

from synthgpt import Rule
from synthgpt import matchers as m
from synthgpt.testing import SynthGPTFixture


def _mock() -> SynthGPTFixture:
    return SynthGPTFixture(
        [
            Rule("weather", m.last_user(contains="weather"), "Sunny."),
            Rule("greeting", m.last_user(contains="hello"), "Hi!"),
            Rule("fallback", m.always(), "Fine."),
        ],
        seed=1,
    )


def _ask(mock: SynthGPTFixture, text: str, model: str = "gpt-4o") -> None:
    mock.generate({"model": model, "messages": [{"role": "user", "content": text}]}, api="chat")


def test_counts_and_last() -> None:
    mock = _mock()
    assert not mock.called and mock.call_count == 0
    mock.assert_not_called()
    _ask(mock, "what is the weather?")
    _ask(mock, "hello there", model="gpt-4o-mini")
    assert mock.called and mock.call_count == 2
    assert mock.last.rule == "greeting" and mock.last.model == "gpt-4o-mini"
    assert [c.rule for c in mock.calls] == ["weather", "greeting"]
    assert mock.calls.call_count == 2 and mock.calls.last == mock.calls[-1] == mock.last
    assert mock.rules["weather"].call_count == 1


def test_assert_called_with_checks_the_last_call() -> None:
    mock = _mock()
    _ask(mock, "what is the weather?")
    _ask(mock, "hello")
    got = mock.assert_called_with(m.last_user(contains="hello"), model="gpt-*", rule="greeting", api="chat")
    assert got.index == 1
    assert mock.assert_any_call(m.last_user(contains="weather")).index == 0
    mock.assert_called_with(lambda req: req.model == "gpt-4o")


def test_a_miss_says_what_was_expected_and_what_arrived() -> None:
    mock = _mock()
    _ask(mock, "what is the weather?")
    _ask(mock, "hello")
    with pytest.raises(AssertionError) as info:
        mock.assert_called_with(m.last_user(contains="weather"))
    assert str(info.value) == (
        "expected the last call to match last_user(contains='weather')\n"
        "but the last call was:\n"
        "  #1 rule='greeting' request(api=chat, model='gpt-4o', last_user='hello')\n"
        "calls that arrived (2):\n"
        "  #0 rule='weather' request(api=chat, model='gpt-4o', last_user='what is the weather?')\n"
        "  #1 rule='greeting' request(api=chat, model='gpt-4o', last_user='hello')"
    )
    miss = "expected a call matching model='claude*', but none did"
    with pytest.raises(AssertionError, match=re.escape(miss)):
        mock.assert_any_call(model="claude*")


def test_no_call_at_all() -> None:
    mock = _mock()
    miss = "expected the last call to match rule='x', but no call arrived"
    with pytest.raises(AssertionError, match=f"^{re.escape(miss)}$"):
        mock.assert_called_with(rule="x")
    with pytest.raises(AssertionError, match="no call arrived, so there is no last call"):
        _ = mock.last
    with pytest.raises(TypeError, match="unknown field"):
        mock.assert_called_with(modle="x")


def test_assert_all_rules_called_lists_the_unused_rules() -> None:
    mock = _mock()
    _ask(mock, "hello")
    with pytest.raises(AssertionError) as info:
        mock.assert_all_rules_called()
    assert str(info.value) == (
        "rules never called (2 of 3):\n"
        "  - weather: last_user(contains='weather')\n"
        "  - fallback: always()\n"
        "calls that arrived (1):\n"
        "  #0 rule='greeting' request(api=chat, model='gpt-4o', last_user='hello')"
    )
    _ask(mock, "weather")
    _ask(mock, "other")
    mock.assert_all_rules_called()


def test_call_count_helpers() -> None:
    mock = _mock()
    _ask(mock, "hello")
    assert mock.assert_called_once().rule == "greeting"
    _ask(mock, "x")
    with pytest.raises(AssertionError, match=r"^expected 1 call\(s\), got 2:\n  #0"):
        mock.assert_called_once()
    mock.reset()
    assert mock.call_count == 0 and not mock.rules["greeting"].called


def test_assert_called_passes_after_a_call_and_fails_before_any() -> None:
    mock = _mock()
    with pytest.raises(AssertionError) as info:
        mock.assert_called()
    assert str(info.value) == "expected at least one call, but no call arrived"
    _ask(mock, "hello")
    assert mock.assert_called() is None
    mock.reset()
    with pytest.raises(AssertionError, match=r"^expected at least one call, but no call arrived$"):
        mock.assert_called()
