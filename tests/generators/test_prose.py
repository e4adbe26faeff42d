"""The built-in default answer: its topic, its shape, and the whole text for representative prompts."""

from __future__ import annotations

import importlib
import random
import re
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.errors import RuleError
from synthgpt.generators.core import DrawContext
from synthgpt.generators.prose import _ANY_HINT, _SHAPES, _any_of, _Words, answer_shape, topic
from synthgpt.model import ModelRequest
from synthgpt.seeding import DrawRandom

PROMPTS = {
    "prose": "Tell me about tide pools",
    "greeting": "hi",
    "steps": "How do I set up a Postgres replica?",
    "list": "Give me some ideas for a birthday party",
    "compare": "What is the difference between TCP and UDP?",
    "compare_vs": "Compare React vs Vue",
    "code": "Write a Python function that parses CSV files",
    "code_sql": "Write an SQL query for the orders table",
    "possessive": "My dog keeps barking at night, why?",
}
prose_module = importlib.import_module("synthgpt.generators.prose")  # the package exports a `prose` function


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tell me about tide pools", "tide pools"),
        ("What's the weather in Lisbon?", "the weather"),
        ("My dog keeps barking at night", "your dog keeps barking"),
        ("Can you review your answer", "my answer"),
        ("How does TCP work?", "TCP work"),
        ("Is it true that Lisbon is old?", "true"),
        ("hi", "this"),
        ("", "this"),
        ("42 99", "this"),
        ("Explain quantum entanglement simply", "quantum entanglement"),
        ("Explain black holes in layman's terms", "black holes"),
        ("What is the capital of France?", "the capital of France"),
        ("Tell me the history of the Roman empire", "the history of the Roman empire"),
        ("Summarise the plot of Hamlet", "the plot of Hamlet"),
        ("That was a lot of fun", "fun"),  # "lot" is no topic, so neither is "lot of"
        ("the end of the", "the end"),  # nothing after "of the": no phrase
    ],
)
def test_topic(text: str, expected: str) -> None:
    assert topic(text) == expected


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        # a run longer than `limit` ends there and the next word starts another (the first longest wins)
        ("quantum entanglement experiments fail", 2, "quantum entanglement"),
        ("old quantum entanglement experiments fail often", 3, "old quantum entanglement"),
        # the words' lower case, taken from the whole text at once: a Greek final sigma stays final
        ("οδοΣ σοφιαΣ", 3, "οδος σοφιας"),
        ("Straße über İstanbul", 3, "straße über İstanbul"),
        ("?!", 3, "this"),
    ],
)
def test_topic_runs_and_cases(text: str, limit: int, expected: str) -> None:
    assert topic(text, limit) == expected


def test_a_subject_keeps_its_own_articles_fixed() -> None:
    # "a apple" as asked reads "an apple"; a subject without "a " is taken as it is
    assert _Words(random.Random(1), "a apple pie").subject == "an apple pie"
    assert _Words(random.Random(1), "A orange").subject == "An orange"
    assert _Words(random.Random(1), "tide pools").subject == "tide pools"


def test_a_second_reader_of_the_same_text_gets_the_same_reading() -> None:
    # the last reading is kept for the request's next reader: it must answer for its own text and
    # arguments only
    text = "Compare the React hooks API with Vue"
    assert topic(text) == topic(text) == "the React hooks API"
    assert topic(text, 2) == "the React hooks"
    assert topic("React", names_first=True) == "React"
    assert topic("React") == "react"
    assert answer_shape(text) == answer_shape(text) == "compare"
    assert answer_shape("hi") == "greeting"
    assert answer_shape("") == "prose"
    assert answer_shape(text + " in code") == "code"


def test_topic_keeps_a_leading_name_only_when_asked() -> None:
    assert topic("React") == "react"
    assert topic("React", names_first=True) == "React"


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("Hello there!", "greeting"),
        ("hello, can you explain caching?", "prose"),
        ("Write a bash script to rotate logs", "code"),
        ("Python vs Go for CLIs", "code"),  # a language name reads as a code question first
        ("Postgres versus MySQL", "compare"),
        ("How to bake bread", "steps"),
        ("Any tips for interviews?", "list"),
        ("Why is the sky blue?", "prose"),
    ],
)
def test_answer_shape(text: str, shape: str) -> None:
    assert answer_shape(text) == shape


@pytest.mark.parametrize("shape", ["code", "compare", "steps", "list"])
def test_every_shape_word_passes_the_one_pass_look(shape: str) -> None:
    # a text with no shape's word is prose without trying the patterns: each word of each shape must be
    # one the single look finds, or its shape would never be answered
    words = next(words for name, _, words in _SHAPES if name == shape)
    for word in words:
        assert word == "```" or _ANY_HINT.search(f" tell me about {word} here")
        assert _ANY_HINT.search(f" {word}") or word == "```"  # at the start too (the space put before)


@pytest.mark.parametrize(
    "text", ["se", "set u", "set up", "setup", "comp", "compare", "co de", "classy", "wa", "x"]
)
def test_the_shared_prefix_pattern_finds_what_a_flat_one_does(text: str) -> None:
    words = ["set up", "setup", "step", "code", "compar", "class", "ways", "walk me"]
    flat = re.compile("|".join(re.escape(w) for w in words))
    assert bool(re.search(_any_of(words), text)) == bool(flat.search(text))


def test_the_possessive_word_patterns_find_what_plain_ones_do() -> None:
    plain = re.compile(r"[^\W\d_][\w'-]*|[\d]+", re.UNICODE)
    plain_ascii = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|[0-9]+")
    rng = random.Random(5)
    alphabet = "aZq09_'- .,#!?\n\u00e9\u0663\u212a\u00b2\u017f"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert prose_module._WORD.findall(text) == plain.findall(text), text
        ascii_text = text.encode("ascii", "ignore").decode()
        assert prose_module._ASCII_WORD.findall(ascii_text) == plain_ascii.findall(ascii_text), ascii_text


class _OneByOne(random.Random):
    """A `DrawRandom`'s stream through its own methods, but not a `DrawRandom` itself: `Prose.draw` then
    makes its draws one by one. A wrapper, not a subclass: compiled (synthgpt.native), DrawRandom is a
    class that Python code cannot subclass."""

    def __init__(self, seed: int) -> None:  # no super().__init__: every draw goes to `_inner`
        self._inner = DrawRandom(seed)

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("__") or name == "_inner":
            return object.__getattribute__(self, name)
        return getattr(object.__getattribute__(self, "_inner"), name)


@pytest.mark.parametrize("bounds", [(2, 2), (3, 5), (2, 11), (8, 13)])
def test_the_batched_prose_draw_writes_what_draws_one_by_one_write(bounds: tuple[int, int]) -> None:
    gen = g.prose(*bounds)
    asks = [*PROMPTS.values(), "Tell me about a apple", "", "1 2 3", "caf\u00e9 culture in Lisbon"]
    for seed in range(400):
        message = {"role": "user", "content": asks[seed % len(asks)]}
        request = ModelRequest.from_dict({"model": "m", "messages": [message]})
        batched, one_by_one = DrawContext(request, seed), DrawContext(request, seed)
        one_by_one._rng = _OneByOne(seed)
        assert gen.draw(batched) == gen.draw(one_by_one)
        assert batched.rng.getstate() == one_by_one.rng.getstate()  # as many draws taken


def _answers(seed: int) -> dict[str, str]:
    mock = MockGPT(seed=seed, rules=[Rule("p", m.always(), g.prose())])
    return {
        name: mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).text
        for name, text in PROMPTS.items()
    }


def test_answers_snapshot(snapshot: SnapshotAssertion) -> None:
    assert _answers(0) == snapshot


def test_answers_depend_on_the_seed_only() -> None:
    first, again, other = _answers(0), _answers(0), _answers(1)
    assert first == again
    assert [k for k in first if first[k] == other[k]] == []


def test_shapes_are_markdown_a_frontend_can_render() -> None:
    out = _answers(3)
    assert "\n1. " in out["steps"] and "\n2. " in out["steps"]
    assert out["list"].count("\n- **") >= 1
    assert "| | TCP | UDP |\n|---|---|---|\n" in out["compare"]
    assert "| | React | Vue |" in out["compare_vs"]
    assert "```python\ndef parses_csv_files(" in out["code"]
    assert "```sql\nSELECT *\nFROM sql_query\n" in out["code_sql"]
    assert "your dog" in out["possessive"]


def test_code_comments_take_the_topic_without_its_determiner() -> None:
    def answer(prompt: str) -> str:
        return (
            MockGPT(seed=0)
            .generate({"model": "synth-1", "messages": [{"role": "user", "content": prompt}]})
            .text
        )

    text = answer("Write code for my monthly invoices")
    assert "your monthly invoices" in text and '"""Return the monthly invoices entries whose ' in text, text
    text = answer("Write a function, please")  # no topic: "this" in prose, nothing in the code
    assert '"""Return the matching entries whose ' in text, text


@pytest.mark.parametrize(
    ("prompt", "bullets", "numbered"),
    [
        ("Give me 5 ideas for a birthday party", 5, 0),
        ("List seven tips for better sleep", 7, 0),
        ("Give me 40 ideas for a party", 10, 0),  # at most 10
        ("How do I set up a Postgres replica in 4 steps?", 0, 4),
        ("Give me some ideas for a party", 3, 0),  # no number: the rule's bounds (3..5 lines, 1..3 items)
    ],
)
def test_lists_and_steps_have_as_many_items_as_asked(prompt: str, bullets: int, numbered: int) -> None:
    text = (
        MockGPT(seed=0).generate({"model": "synth-1", "messages": [{"role": "user", "content": prompt}]}).text
    )
    lines = text.splitlines()
    assert sum(line.startswith("- **") for line in lines) == bullets, text
    steps = [line.split(".")[0] for line in lines if line[:1].isdigit()]
    assert steps == [str(i) for i in range(1, numbered + 1)]


def test_bounds_are_checked() -> None:
    with pytest.raises(RuleError, match="at least 2 sentences"):
        g.prose(1, 3)
    with pytest.raises(RuleError, match="0 <= min <= max"):
        g.prose(5, 3)
