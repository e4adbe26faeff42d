"""The prose phrase tables, compiled: a fill is the text the template, its words and the article rule give
(checked against the plain regex pass over every template), and one scan finds the answer's shape."""

from __future__ import annotations

import importlib
import itertools
import random
import re

import pytest

from synthgpt.generators.prose import _CODE, _COMPARE, _LIST, _STEPS, _Words, answer_shape
from synthgpt.generators.text import ADJECTIVES, WORDS, with_article
from synthgpt.seeding import DrawRandom

prose = importlib.import_module("synthgpt.generators.prose")  # the package exports a `prose` function

_TEMPLATES = [
    *prose._OPENERS, *prose._BODY, *prose._CLOSERS, *prose._STEP_LINES, *prose._LIST_LINES,
    *(v.replace("{l}", "an apple").replace("{r}", "a pear") for v in prose._VERDICTS),
]  # fmt: skip
_SUBJECTS = ["tide pools", "a apple", "your dog", "an owl", "TCP work", "the history of Rome", "this"]


def _reference(template: str, subject: str, adjective: str, noun: str, other: str) -> str:
    """The fill as a format and a regex pass over the whole text (the rule the tables compile)."""
    text = template.format(t=subject, a=adjective, n=noun, m=other)
    return re.sub(r"\b([Aa]) (\w+)", lambda m: with_article(m.group(2), capital=m.group(1) == "A"), text)


class _Fixed(random.Random):
    """Hands `_Words` the 64 bits that select the given word indices."""

    def __init__(self, i: int, j: int, k: int) -> None:
        self.bits = i + len(ADJECTIVES) * (j + len(WORDS) * k)

    def getrandbits(self, k: int) -> int:
        return self.bits


@pytest.mark.parametrize("template", _TEMPLATES)
def test_a_fill_is_the_template_with_its_words_and_articles(template: str) -> None:
    combos = itertools.product(range(len(ADJECTIVES)), range(0, len(WORDS), 7), range(0, len(WORDS) - 1, 11))
    for subject in _SUBJECTS:
        for i, j, k in combos:
            words = _Words(_Fixed(i, j, k), subject)
            other = WORDS[k + (k >= j)]
            assert other != WORDS[j]
            assert words.fill(template) == _reference(template, subject, ADJECTIVES[i], WORDS[j], other)


def test_fills_draw_every_word() -> None:
    words = _Words(DrawRandom(1), "tides")
    seen = {words.fill("{a} {n}") for _ in range(20_000)}
    assert {s.split()[0] for s in seen} == set(ADJECTIVES)
    assert {s.split()[1] for s in seen} == set(WORDS)


def _by_format(form: str, subject: str, adjective: str, noun: str, other: str) -> str:
    """What the fill writes by `format` (the path of a template with no function, such as a verdict)."""
    a, c = prose._ARTICLED, prose._ARTICLED_CAP
    return form.format(
        t=subject, a=adjective, n=noun, m=other,
        xa=a[adjective], xn=a[noun], xm=a[other], Xa=c[adjective], Xn=c[noun], Xm=c[other],
    )  # fmt: skip


def test_every_table_template_has_a_fill_function() -> None:
    tables = (*prose._OPENERS, *prose._BODY, *prose._CLOSERS, *prose._STEP_LINES, *prose._LIST_LINES)
    assert set(prose._FILLS) == set(tables)


@pytest.mark.parametrize("template", sorted(prose._FILLS))
def test_a_fill_function_writes_what_format_writes(template: str) -> None:
    made, form = prose._FILLS[template], prose._compile(template)
    rng = random.Random(template)
    subjects = [*_SUBJECTS, "it's a {t} \\n", "caf\u00e9 {{x}}", "'''", ""]
    for _ in range(3000):
        adjective, noun, other = rng.choice(ADJECTIVES), rng.choice(WORDS), rng.choice(WORDS)
        subject = rng.choice(subjects)
        assert made(subject, adjective, noun, other) == _by_format(form, subject, adjective, noun, other)


@pytest.mark.parametrize("form", ["it's {n}, a \\ {xa}", '"{Xm}" {t}{a}', "{t}", "", "'''", "no slots"])
def test_quotes_and_backslashes_in_a_form_are_written_as_they_are(form: str) -> None:
    made = prose._as_function(form)
    assert made is not None
    for a, n, m in itertools.product(ADJECTIVES, WORDS[:5], WORDS[-5:]):
        assert made("tides", a, n, m) == _by_format(form, "tides", a, n, m)


@pytest.mark.parametrize("form", ["{{literal}} {n}", "{n!r}", "{q}", "{n:>5}", "two\nlines {n}", "{0}"])
def test_forms_the_functions_do_not_cover_have_none(form: str) -> None:
    assert prose._as_function(form) is None


_ASKS = [
    "how do I write a python function",
    "compare rust vs go",
    "list 5 ideas",
    "tell me about tides",
    "how to set up the code",
    "what is the difference between cats and dogs",
    "give me tips on steps",
    "recommend a sql query",
    "walk me through it",
    "ideas vs options",
    "steps to compare",
    "```x```",
    "which is better than the other",
    "guide to the best examples",
    "a script with options",
    "",
]


_PIECES = (
    "How", "how", "to", "do", "I", "you", "Steps", "step", "guide", "walk me through", "set up", "setup",
    "vs.", "VS", "versus", "Compare", "comparison", "difference between", "better than", "list", "Ideas",
    "tip", "ways", "options", "examples", "suggestions", "recommended", "Python", "SQL", "code_review",
    "python-based",
    "```", "class", "method", "tide", "pools", "the", "\u017fcript", "K\u212aELVIN", "caf\u00e9", "!", "?",
    "1", "_", "(", "`", "x", "'", "\n",
)


def _reference_shape(text: str) -> str:
    if prose._GREETING.match(text):
        return "greeting"
    patterns = (("code", _CODE), ("compare", _COMPARE), ("steps", _STEPS), ("list", _LIST))
    return next((shape for shape, p in patterns if p.search(text)), "prose")


@pytest.mark.parametrize("text", _ASKS)
def test_the_shape_is_the_first_pattern_that_matches(text: str) -> None:
    assert answer_shape(text) == _reference_shape(text)


def test_the_word_prefilter_never_changes_a_shape() -> None:
    rng = random.Random(11)
    seps = (" ", "  ", "-", ", ", "")
    for _ in range(50_000):
        text = "".join(rng.choice(_PIECES) + rng.choice(seps) for _ in range(rng.randint(1, 6)))
        assert answer_shape(text) == _reference_shape(text), text


def _digits_reference(x: int) -> tuple[str, str, str]:
    """The three words of 64 random bits as mixed-radix digits, one division at a time (the rule the
    `_PAIRS` table reads with one remainder of the 64-bit number)."""
    x, i = divmod(x, len(ADJECTIVES))
    x, j = divmod(x, len(WORDS))
    k = x % (len(WORDS) - 1)
    return ADJECTIVES[i], WORDS[j], WORDS[k + (k >= j)]


def test_the_pair_table_gives_the_words_the_digits_give() -> None:
    made = prose._as_function("{a}|{n}|{m}|{t}")
    assert made is not None
    span = prose._WORDS_SPAN
    edges = [0, 1, span - 1, span, span + 1, 2**64 - 1, 2**64 - span, 2**63, 12345 * span + span - 1]
    rng = random.Random(3)
    xs = [*edges, *(rng.getrandbits(64) for _ in range(30_000)), *range(0, span, 211)]
    for subject in ("tides", "", "caf\u00e9 \u00fcber", "a apple"):
        words = _Words(DrawRandom(0), subject)
        for x in xs:
            assert words.fill_from(made, x) == "|".join([*_digits_reference(x), words.subject]), x


def test_a_format_fill_gives_the_words_the_digits_give() -> None:
    for seed in range(3000):
        x = DrawRandom(seed).getrandbits(64)
        filled = _Words(DrawRandom(seed), "tides").fill("{a}|{n}|{m}|{t}")
        assert filled == "|".join([*_digits_reference(x), "tides"])
