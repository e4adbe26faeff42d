"""Articles before generated words: "an early answer", never "a early answer"."""

from __future__ import annotations

import re

import pytest

from synthgpt import ModelRequest
from synthgpt import generators as g
from synthgpt.generators.text import ADJECTIVES, article, with_article


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("early", "an"),
        ("idea", "an"),
        ("orange", "an"),
        ("umbrella", "an"),
        ("Apple", "an"),
        ("hour", "an"),
        ("honest", "an"),
        ("useful", "a"),
        ("union", "a"),
        ("euro", "a"),
        ("one", "a"),
        ("house", "a"),
        ("clear", "a"),
        ("", "a"),
    ],
)
def test_article(word: str, expected: str) -> None:
    assert article(word) == expected


def test_with_article() -> None:
    assert with_article("early") == "an early"
    assert with_article("early", capital=True) == "An early"
    assert with_article("useful", capital=True) == "A useful"


# "a"/"an" followed by one of the adjectives the generators draw, with the wrong article
_WRONG = re.compile(
    r"\b(?:[Aa] (?:" + "|".join(w for w in ADJECTIVES if article(w) == "an") + r")"
    r"|[Aa]n (?:" + "|".join(w for w in ADJECTIVES if article(w) == "a") + r"))\b"
)


def test_the_adjective_list_has_words_of_both_kinds() -> None:
    # otherwise the scan below could not catch anything
    assert {article(w) for w in ADJECTIVES} == {"a", "an"}


@pytest.mark.parametrize("gen", [g.prose(5, 5), g.reasoning()], ids=repr)
def test_generated_text_uses_the_right_article(gen: g.Generator[object]) -> None:
    req = ModelRequest.from_dict({"messages": [{"role": "user", "content": "Tell me about budget planning"}]})
    texts = []
    for seed in range(300):
        value = gen.example(seed=seed, request=req)
        texts.append(value if isinstance(value, str) else value.text)  # type: ignore[attr-defined]
    joined = "\n".join(texts)
    assert _WRONG.findall(joined) == []
    assert "an early" in joined.lower()  # the vowel case does come up
