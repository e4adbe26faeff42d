"""A stop sequence is found in the answer text as one stream, even where a rule's output splits that text
into parts and the sequence straddles two of them. Checked in the engine (parts, finish, usage) and through
the official SDKs against the app (Chat: content and `finish_reason`; Messages: `stop_reason` and the
echoed `stop_sequence`), streaming and not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.model import Choice, ReasoningPart, TextOut, ToolCallPart
from synthgpt.testing import anthropic_client, openai_client

FIRST, SECOND = "Hello wo", "rld. Bye now."  # joined: "Hello world. Bye now."
SPLIT = Choice(parts=(TextOut(text=FIRST), TextOut(text=SECOND)))
CALL = ToolCallPart(id="call_1", name="lookup", arguments='{"q":"x"}')
ASK: Any = [{"role": "user", "content": "hi"}]


def mock_of(choice: Choice = SPLIT) -> MockGPT:
    return MockGPT([Rule("split", m.always(), choice)], seed=0)


def generate(stop: list[str], choice: Choice = SPLIT) -> Any:
    return mock_of(choice).generate({"model": "synth-1", "messages": ASK, "extra": {"stop": stop}})


# ------------------------------------------------------------------------------------------------ engine


@pytest.mark.parametrize(
    ("stop", "parts", "seq", "tokens"),
    [
        # begins in the first part, ends in the second: the first part is cut, the second dropped
        (["world"], (TextOut(text="Hello "),), "world", 3),
        # begins at position 0 of the second part: the first part is kept whole
        (["rld"], (TextOut(text=FIRST),), "rld", 3),
        # ends exactly at the boundary
        (["wo"], (TextOut(text="Hello "),), "wo", 3),
        # at the very start: no text is left
        (["Hello"], (), "Hello", 0),
        # one straddling and one wholly in the second part: the straddling one ends first
        (["Bye", "lo wor"], (TextOut(text="Hel"),), "lo wor", 1),
        # overlapping, different starts: the one whose end comes first stops generation
        # (the parts stay as drawn: usage counts each, as for any answer of several parts)
        (["world. Bye", "ld"], (TextOut(text=FIRST), TextOut(text="r")), "ld", 4),
        # the same end: the longer one (generation stops before it)
        (["world", "lo world"], (TextOut(text="Hel"),), "lo world", 1),
        # the same start: the shorter one ends first and is the one reported
        (["world", "wor"], (TextOut(text="Hello "),), "wor", 3),
        (["wor", "world"], (TextOut(text="Hello "),), "wor", 3),
        # the same start inside one part, as before the parts were joined
        (["Bye now", "Bye"], (TextOut(text=FIRST), TextOut(text="rld. ")), "Bye", 6),
    ],
)
def test_engine_cuts_at_the_first_stop_across_parts(
    stop: list[str], parts: tuple[TextOut, ...], seq: str, tokens: int
) -> None:
    out = generate(stop)
    assert out.choices == (Choice(parts=parts, finish_reason="stop", stop_sequence=seq),)
    assert out.usage.completion_tokens == tokens


def test_engine_no_stop_found_leaves_the_parts_as_drawn() -> None:
    out = generate(["nowhere", "dlrow"])
    assert out.choices == (SPLIT,)
    assert out.usage.completion_tokens == 8


def test_engine_parts_between_text_parts_are_kept_only_before_the_stop() -> None:
    thought = ReasoningPart(text="the world is round", signature="sig")  # reasoning is never searched
    both = Choice(
        parts=(thought, TextOut(text=FIRST), CALL, TextOut(text=SECOND), CALL), finish_reason="tool_calls"
    )
    straddling = generate(["world"], both)
    assert straddling.choices == (
        Choice(parts=(thought, TextOut(text="Hello ")), finish_reason="stop", stop_sequence="world"),
    )
    # the call came before the sequence began: it was made, so it stays
    after_call = generate(["rld."], both)
    assert after_call.choices == (
        Choice(parts=(thought, TextOut(text=FIRST), CALL), finish_reason="stop", stop_sequence="rld."),
    )
    # completion tokens: the reasoning, the kept text and the kept call's name and arguments
    assert (straddling.usage.completion_tokens, straddling.usage.reasoning_tokens) == (6 + 3, 6)
    assert (after_call.usage.completion_tokens, after_call.usage.reasoning_tokens) == (6 + 3 + 2 + 9, 6)


def test_engine_token_limit_applies_after_the_stop() -> None:
    out = mock_of().generate(
        {"model": "synth-1", "messages": ASK, "max_output_tokens": 1, "extra": {"stop": ["world"]}}
    )
    assert out.choices == (Choice(parts=(TextOut(text="Hell"),), finish_reason="length"),)
    assert out.usage.completion_tokens == 1


# ------------------------------------------------------------------------------------------ chat via SDK


@pytest.fixture
def oai() -> Iterator[openai.OpenAI]:
    with openai_client(mock_of(), _strict_response_validation=True) as c:
        yield c


@pytest.fixture
def ant() -> Iterator[anthropic.Anthropic]:
    with anthropic_client(mock_of(), _strict_response_validation=True) as c:
        yield c


CASES = [
    (["world"], "Hello ", "world", 3),
    (["rld"], FIRST, "rld", 3),
    (["world. Bye", "ld"], "Hello wor", "ld", 4),
    (["world", "wor"], "Hello ", "wor", 3),
]


@pytest.mark.parametrize(("stop", "content", "seq", "tokens"), CASES)
def test_chat_stop_across_parts_create_and_stream_agree(
    oai: openai.OpenAI, stop: list[str], content: str, seq: str, tokens: int
) -> None:
    done = oai.chat.completions.create(model="gpt-4o", messages=ASK, stop=stop)
    [choice] = done.choices
    assert (choice.message.content, choice.finish_reason, choice.message.tool_calls) == (
        content,
        "stop",
        None,
    )
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens, done.usage.total_tokens) == (
        8,
        tokens,
        8 + tokens,
    )

    chunks = list(
        oai.chat.completions.create(
            model="gpt-4o",
            messages=ASK,
            stop=stop,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].usage == done.usage


def test_chat_without_a_stop_sends_the_joined_text(oai: openai.OpenAI) -> None:
    done = oai.chat.completions.create(model="gpt-4o", messages=ASK)
    assert (done.choices[0].message.content, done.choices[0].finish_reason) == (FIRST + SECOND, "stop")
    assert done.usage is not None and done.usage.completion_tokens == 8


# ------------------------------------------------------------------------------------- messages via SDK


@pytest.mark.parametrize(("stop", "content", "seq", "tokens"), CASES)
def test_anthropic_stop_across_parts_create_and_stream_agree(
    ant: anthropic.Anthropic, stop: list[str], content: str, seq: str, tokens: int
) -> None:
    msg = ant.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=200,
        messages=ASK,
        stop_sequences=stop,
    )
    assert (msg.stop_reason, msg.stop_sequence) == ("stop_sequence", seq)
    assert [(b.type, b.text) for b in msg.content if b.type == "text"] == [("text", content)]
    assert len(msg.content) == 1
    assert msg.usage.output_tokens == tokens
    with ant.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=200,
        messages=ASK,
        stop_sequences=stop,
    ) as s:
        streamed = s.get_final_message()
    assert streamed.model_dump() == msg.model_dump()


def test_anthropic_unmatched_stop_ends_the_turn_with_the_joined_text(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=200,
        messages=ASK,
        stop_sequences=["dlrow"],
    )
    assert (msg.stop_reason, msg.stop_sequence) == ("end_turn", None)
    assert [(b.type, b.text) for b in msg.content if b.type == "text"] == [("text", FIRST + SECOND)]


def _first_stop(text: str, stops: list[str]) -> tuple[int, int, str] | None:
    """The stop generation ends at, as each stop looked for on its own finds it: the first to end; on a
    tie, the longer."""
    hits = [(at + len(s), at, s) for s in stops if (at := text.find(s)) >= 0]
    return min(hits) if hits else None


@pytest.mark.parametrize("seed", range(6))
def test_many_stops_over_a_long_answer_end_where_each_looked_for_alone_would(seed: int) -> None:
    """Over a long answer the leftmost of many stops is found in one pass first, then only the stops that
    fit from there to its end are looked for: the same stop, overlaps and ties included."""
    import random

    from synthgpt.engine.shaping import apply_stop

    rng = random.Random(seed)
    text = "".join(rng.choice("abcde ") for _ in range(40_000))
    drawn = ("".join(rng.choice("abcde ") for _ in range(rng.randint(3, 9))) for _ in range(300))
    stops = list(dict.fromkeys(drawn))
    if seed % 2:
        stops = [s + "z" for s in stops[:-3]] + stops[-3:]  # most never occur
    want = _first_stop(text, stops)
    got = apply_stop(Choice(parts=(TextOut(text=text),), finish_reason="stop"), tuple(stops))
    assert want is not None
    assert got.stop_sequence == want[2] and got.text == text[: want[1]]
    absent = tuple(s + "z" for s in stops)
    none = apply_stop(Choice(parts=(TextOut(text=text),), finish_reason="stop"), absent)
    assert none.stop_sequence is None and none.text == text


@pytest.mark.parametrize(
    ("stops", "seq", "cut"),
    [
        (["abcdefgh", "cd"], "cd", 2),  # begins later, ends first
        (["gh", "defgh"], "defgh", 3),  # the same end: the longer
        (["h!", "abc"], "abc", 0),
    ],
)
def test_many_stops_end_at_the_first_to_end_not_the_first_to_begin(
    stops: list[str], seq: str, cut: int
) -> None:
    from synthgpt.engine.shaping import apply_stop

    filler = "x " * 20_000
    absent = [f"never {i}" for i in range(200)]  # many stops over a long answer: the one-pass search
    choice = Choice(parts=(TextOut(text=filler + "abcdefgh!"),), finish_reason="stop")
    got = apply_stop(choice, (*absent, *stops))
    assert (got.stop_sequence, got.text) == (seq, filler + "abcdefgh"[:cut])
