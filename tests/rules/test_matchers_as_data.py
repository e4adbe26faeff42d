"""Matchers are values: equal when built from the same data, whatever their repr says."""

from __future__ import annotations

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
