"""What the message-reading generators look at: a long message's head and tail, a short one whole."""

from __future__ import annotations

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators.prose import answer_shape, topic
from synthgpt.generators.reading import READ_CHARS, read_window


def test_a_message_up_to_the_limit_is_read_whole() -> None:
    text = "x" * READ_CHARS
    assert read_window(text) is text


def test_a_longer_message_is_read_as_its_head_and_tail() -> None:
    text = "a" * 5000 + "b" * 5000
    assert read_window(text) == "a" * 4096 + "\n" + "b" * 4096


FILLER = "and so on " * 2000  # 20,000 characters without a content word of three letters


def test_the_topic_of_a_long_message_comes_from_its_ends() -> None:
    # the middle's "volcanic island geology" is longer than either end's topic, but is not read
    middle = f"{FILLER} volcanic island geology formations {FILLER}"
    assert topic(f"Tell me about tide pools. {middle} Thanks!") == "tide pools"
    assert topic(f"{middle} So what about coral reefs?") == "coral reefs"


def test_the_shape_asked_at_the_end_of_a_long_message_is_seen() -> None:
    assert answer_shape(f"{FILLER}{FILLER} Give me a list of 5 ideas for a party.") == "list"


def test_summary_of_a_long_message_reads_only_its_start() -> None:
    mock = MockGPT(rules=[Rule("s", m.always(), g.summary(max_chars=50, count=2))])
    text = "First sentence here. Second one! " + "word " * 2_000_000  # 10 MB
    answer = mock.generate({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert answer.text == "First sentence here. Second one!"


def test_a_window_read_again_is_the_same_window() -> None:
    """Prose hands its window to `topic` and `answer_shape`, which window what they read themselves."""
    window = read_window("a" * 5000 + "b" * 5000)
    assert read_window(window) is window
