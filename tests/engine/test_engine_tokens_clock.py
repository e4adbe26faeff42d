"""The deterministic tokenizer, the seeding helpers and the injected clocks."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import FixedClock, MockGPT, Rule, StepClock, SystemClock
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.clock import Clock, parse_clock
from synthgpt.gil import LONG_TEXT
from synthgpt.seeding import canonical_json, derive_seed, token_from_seed
from synthgpt.tokens import count_message_tokens, count_tokens, cut_to_tokens, token_spans

# ------------------------------------------------------------------------------------------ tokenizer


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        ("one two six", ["one", " two", " six"]),
        ("Hello, world!", ["Hell", "o", ",", " worl", "d", "!"]),
        ("internationalization", ["inte", "rnat", "iona", "liza", "tion"]),
        ("  lead", ["  lead"]),
        ("end  ", ["end", "  "]),
        ("a.b", ["a", ".", "b"]),
        ("héllo wörld", ["héll", "o", " wörl", "d"]),
        ("日本語テキスト", ["日本語テ", "キスト"]),
        ('{"a":1}', ["{", '"', "a", '"', ":", "1", "}"]),
    ],
)
def test_token_spans(text: str, tokens: list[str]) -> None:
    assert [text[a:b] for a, b in token_spans(text)] == tokens
    assert count_tokens(text) == len(tokens)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(text=st.text(max_size=200), limit=st.integers(0, 60))
def test_spans_tile_the_text_and_cuts_fall_on_token_boundaries(text: str, limit: int) -> None:
    spans = token_spans(text)
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(b > a for a, b in spans)
    prefix, used, was_cut = cut_to_tokens(text, limit)
    assert text.startswith(prefix)
    assert used == count_tokens(prefix) == min(limit, count_tokens(text))
    assert was_cut == (prefix != text)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=80) | st.text(max_size=40))
def test_the_ascii_count_is_the_regex_count(text: str) -> None:
    # ASCII text is counted by whole-string passes, other text by the pattern: both give the pattern's count
    assert count_tokens(text) == len(token_spans(text))


def _long(unit: str, tail: str = "") -> str:
    return unit * (2 * LONG_TEXT // len(unit) + 3) + tail


@pytest.mark.parametrize(
    "text",
    [
        _long("word "),  # pieces cut at whitespace after a word
        _long("abcdefghij  \t", "end  "),  # long words, whitespace runs, whitespace at the very end
        _long("z" + " " * 50),  # a piece's length mostly lands inside a whitespace run
        _long("x"),  # no whitespace at all: one piece
        _long("héllo wörld, ", "日本語"),  # not ASCII: the pattern counts each piece
        _long("a b")[:LONG_TEXT] + "é" + _long(" ... ;; q"),  # ASCII pieces and one that is not
        "y" * (LONG_TEXT + 5) + " tail",  # the only cut is past the first piece's length
    ],
    ids=["words", "long-words", "whitespace-runs", "no-whitespace", "not-ascii", "mixed", "late-cut"],
)
def test_a_long_text_counted_in_pieces_is_counted_as_one(text: str) -> None:
    """A text longer than `LONG_TEXT` is counted a piece at a time (the GIL let go between pieces): the
    pieces' counts add up to the pattern's count of the whole text."""
    assert len(text) > LONG_TEXT
    assert count_tokens(text) == len(token_spans(text))


def _cut_token_by_token(text: str, limit: int) -> tuple[str, int, bool]:
    """`cut_to_tokens` as one loop over the tokens."""
    if limit <= 0:
        return "", 0, bool(text)
    n = 0
    for _, end in token_spans(text):
        n += 1
        if n == limit:
            return text[:end], n, end < len(text)
    return text, n, False


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=120) | st.text(max_size=60),
       limit=st.integers(-1, 50))  # fmt: skip
def test_a_cut_is_the_one_counting_token_by_token_gives(text: str, limit: int) -> None:
    assert cut_to_tokens(text, limit) == _cut_token_by_token(text, limit)


_WORDY = st.text(alphabet=st.sampled_from("abcdefghij  \t\n.,;!'\"-"), min_size=200, max_size=1500)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=_WORDY, limit=st.integers(1, 400))
def test_a_long_cut_is_the_one_counting_token_by_token_gives(text: str, limit: int) -> None:
    # ASCII text is cut from its characters' classes, 64 tokens a match: limits across those runs
    assert cut_to_tokens(text, limit) == _cut_token_by_token(text, limit)


@pytest.mark.parametrize("limit", [63, 64, 65, 128, 129, 200])
@pytest.mark.parametrize("text", ["word " * 64, "ab " * 200, "x" * 4 * 129, "a," * 150, " " * 10 + "w" * 700])
def test_a_cut_at_the_runs_edges_is_the_one_counting_token_by_token_gives(text: str, limit: int) -> None:
    assert cut_to_tokens(text, limit) == _cut_token_by_token(text, limit)


def test_cut_to_tokens() -> None:
    assert cut_to_tokens("one two six", 2) == ("one two", 2, True)
    assert cut_to_tokens("one two", 5) == ("one two", 2, False)
    assert cut_to_tokens("abc", 0) == ("", 0, True)
    assert cut_to_tokens("", 0) == ("", 0, False)


def test_message_tokens_add_a_fixed_overhead() -> None:
    assert count_message_tokens([]) == 3
    assert count_message_tokens(["hi"]) == 3 + 4 + 1
    assert count_message_tokens(["one two", "six"]) == 3 + (4 + 2) + (4 + 1)


def test_prompt_tokens_count_tool_calls_and_tool_definitions() -> None:
    mock = MockGPT([Rule("r", m.always(), "x")])
    plain = {"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]}
    with_tool = {**plain, "tools": [{"name": "f", "description": "d", "parameters": {"type": "object"}}]}
    assert mock.generate(plain).usage.prompt_tokens == 8
    # 8 per tool + "f d " + canonical JSON of the parameters
    assert mock.generate(with_tool).usage.prompt_tokens == 8 + 8 + count_tokens('f d {"type":"object"}')


# ------------------------------------------------------------------------------------------ seeding


def test_derive_seed_is_pinned_and_length_prefixed() -> None:
    assert derive_seed("a", 1) == derive_seed("a", "1")
    assert derive_seed("ab", "c") != derive_seed("a", "bc")
    assert derive_seed() == 3244421341483603138  # XXH3-64 of no bytes: 0x2D06800538D394C2
    assert derive_seed(0, "rule", 123) == 12931225397231525884
    assert 0 <= derive_seed("x") < 2**64


def test_token_from_seed_and_canonical_json() -> None:
    assert (token_from_seed(1, 10), token_from_seed(2, 10)) == ("byj8UOpFdJ", "HrJKcbaO3P")  # pinned
    assert token_from_seed(1, 40) == "byj8UOpFdJb2JStQQcZh50AGFxMt222fva5eKCFP"
    assert token_from_seed(7, 6, alphabet="ab") == "babbaa"
    assert token_from_seed(1, 40).startswith(token_from_seed(1, 10))
    assert token_from_seed(1, 200).startswith(token_from_seed(1, 64))
    assert len(token_from_seed(1, 200)) == 200 and token_from_seed(1, 0) == ""
    with pytest.raises(ValueError, match="token alphabet must be 1 to 256 ASCII characters"):
        token_from_seed(1, 4, alphabet="αβ")
    assert token_from_seed(7, 6, alphabet="ab") in {
        "".join(p) for p in __import__("itertools").product("ab", repeat=6)
    }
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'


# ------------------------------------------------------------------------------------------ clocks


def test_fixed_clock() -> None:
    clock = FixedClock()
    assert clock.now() == clock.now() == 1_767_225_600.0
    assert repr(clock) == "FixedClock(1767225600)"
    assert repr(FixedClock(1.5)) == "FixedClock(1.5)"
    assert isinstance(clock, Clock)


def test_step_clock_advances_on_every_read() -> None:
    clock = StepClock(100, step=1.5)
    assert [clock.now() for _ in range(4)] == [100.0, 101.5, 103.0, 104.5]
    assert repr(clock) == "StepClock(100, step=1.5)"
    assert repr(StepClock()) == "StepClock(1767225600, step=1)"


def test_step_clock_counts_reads_exactly_across_threads() -> None:
    clock = StepClock(0, step=1)
    seen: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = [clock.now() for _ in range(100)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(seen) == [float(i) for i in range(800)]


def test_system_clock_reads_the_wall_clock() -> None:
    before = time.time()
    now = SystemClock().now()
    assert before - 1 <= now <= time.time() + 1
    assert repr(SystemClock()) == "SystemClock()"


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ("fixed", "FixedClock(1767225600)"),
        ("fixed:1700000000", "FixedClock(1700000000)"),
        ("fixed:12.5", "FixedClock(12.5)"),
        ("step", "StepClock(1767225600, step=1)"),
        ("step:10", "StepClock(10, step=1)"),
        ("step:10:0.5", "StepClock(10, step=0.5)"),
        ("system", "SystemClock()"),
    ],
)
def test_parse_clock(spec: str, text: str) -> None:
    assert repr(parse_clock(spec)) == text


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "fixed:x",
        "step:a:b",
        "system:1",
        "wall",
        "FIXED",
        "fixed:",
        "fixed:nan",
        "fixed:inf",
        "fixed:1e400",
        "step:",
        "step:1:",
        "step::1",
        "step:1:2:3",
        "step:1:-inf",
        "system:",
    ],
)
def test_parse_clock_rejects_anything_else(spec: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_clock(spec)
    assert str(info.value) == (
        f"bad clock {spec!r}: use fixed, fixed:<unix-seconds>, step:<start>[:<step>] or system"
    )


ASK = {"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]}


def test_created_comes_from_the_injected_clock() -> None:
    rules = [Rule("r", m.always(), g.words())]
    assert MockGPT(rules).generate(ASK).created == 1_767_225_600
    assert MockGPT(rules, clock=g.fixed_clock(1_700_000_000.9)).generate(ASK).created == 1_700_000_000
    stepping = MockGPT(rules, clock=g.step_clock(50, 10))
    assert [stepping.generate(ASK).created for _ in range(3)] == [50, 60, 70]
    assert isinstance(g.system_clock(), SystemClock)


def test_templates_see_the_clock_reading() -> None:
    mock = MockGPT(
        [Rule("r", m.always(), g.template("{{ now|int }} #{{ call_index }}"))], clock=StepClock(10, step=5)
    )
    assert [mock.generate(ASK).text for _ in range(3)] == ["10 #0", "15 #1", "20 #2"]


class _WholeSeconds:
    """A clock of the user's own that reads ints, where the `Clock` protocol says float."""

    def now(self) -> float:
        return 1_700_000_000


def test_a_clock_reading_ints_draws_what_its_float_reading_draws() -> None:
    # compiled (synthgpt.native) the draw takes `now` as a float whatever the clock gives; the engine
    # makes it one first, so templates see the same reading compiled and pure
    rules = [Rule("r", m.always(), g.template("{{ now }}"))]
    ints, floats = MockGPT(rules, clock=_WholeSeconds()), MockGPT(rules, clock=FixedClock(1_700_000_000))
    assert ints.generate(ASK).text == floats.generate(ASK).text == "1700000000.0"
    at = ints.journal.list()[-1].at
    assert at == 1_700_000_000.0 and type(at) is float
