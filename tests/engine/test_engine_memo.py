"""The engine's memo: a request given as a dict, sent a third time, is replayed, never when it must not be."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import MockGPT, Rule, StepClock
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.engine.memo import MAX_KEY_BYTES, DrawMemo, KeptAnswers


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def _kept(mock: MockGPT) -> int:
    memo: DrawMemo = mock._memo
    return len(memo)


def test_a_third_call_is_replayed_and_journaled_like_a_draw() -> None:
    mock = MockGPT(seed=3)
    outs = [mock.generate(ask("Tell me about tide pools")) for _ in range(4)]
    assert _kept(mock) == 1
    assert outs[2] is outs[1] and outs[3] is outs[1]  # the kept output, not a copy: outputs are frozen
    assert outs[0] == outs[1]
    records = mock.records
    assert [r.index for r in records] == [0, 1, 2, 3]
    assert [r.output for r in records] == outs
    rule = mock.rules.rules[[r.name for r in mock.rules].index(records[0].rule)]
    assert rule.call_count == 4
    fresh = MockGPT(seed=3)
    assert fresh.generate(ask("Tell me about tide pools")) == outs[3]


def test_key_order_does_not_matter_and_the_api_does() -> None:
    mock = MockGPT(seed=1)
    a = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi there"}]}
    b = {"messages": [{"content": "hi there", "role": "user"}], "model": "gpt-4o"}
    mock.generate(a)
    mock.generate(b)
    assert _kept(mock) == 1
    assert mock.generate(a) is mock.generate(b)
    anthropic = mock.generate(a, api="anthropic_messages")
    assert mock.journal.list()[-1].request.api == "anthropic_messages"
    assert anthropic == MockGPT(seed=1).generate(a, api="anthropic_messages")


def test_call_order_dependent_answers_are_never_replayed() -> None:
    counting = Rule("count", m.always(), g.template("call {{ call_index }}"))
    mock = MockGPT([counting], seed=1)
    texts = [mock.generate(ask("same")).choices[0].text for _ in range(4)]
    assert texts == ["call 0", "call 1", "call 2", "call 3"]
    assert _kept(mock) == 0
    once = Rule("once", m.always(), g.reply(text="first"), times=1)
    limited = MockGPT([once, Rule("rest", m.always(), g.reply(text="rest"))])
    assert [limited.generate(ask("same")).choices[0].text for _ in range(4)] == ["first"] + ["rest"] * 3
    assert _kept(limited) == 0


def test_a_moving_clock_keeps_nothing() -> None:
    mock = MockGPT(seed=1, clock=StepClock(1_700_000_000, 1))
    created = [mock.generate(ask("same")).created for _ in range(4)]
    assert created == [1_700_000_000, 1_700_000_001, 1_700_000_002, 1_700_000_003]
    assert _kept(mock) == 0


def test_new_rules_and_a_reset_empty_the_memo() -> None:
    mock = MockGPT([Rule("a", m.always(), g.reply(text="from a"))], seed=1)
    for _ in range(3):
        assert mock.generate(ask("same")).choices[0].text == "from a"
    assert _kept(mock) == 1
    mock.rules.rules.insert(0, Rule("b", m.always(), g.reply(text="from b")))
    assert mock.generate(ask("same")).choices[0].text == "from b"
    assert _kept(mock) == 0
    mock.generate(ask("same"))
    mock.generate(ask("same"))
    assert _kept(mock) == 1
    mock.reset()
    assert _kept(mock) == 0 and mock.records == []


def test_requests_it_cannot_key_are_drawn_every_time() -> None:
    mock = MockGPT(seed=1)
    big = ask("x" * MAX_KEY_BYTES)
    wide = ask("same", extra={"seed_hint": 10**30})
    for req in (big, wide):
        first = mock.generate(req)
        for _ in range(3):
            assert mock.generate(req) == first
    assert _kept(mock) == 0
    req = mock.journal.list()[-1].request
    for _ in range(3):
        mock.generate(req)  # a ModelRequest: decoded already, not keyed
    assert _kept(mock) == 0


@pytest.mark.parametrize("entries", [0, 2])
def test_the_memo_is_bounded(entries: int) -> None:
    mock = MockGPT(seed=1)
    mock._memo = DrawMemo(max_entries=entries)
    for i in range(5):
        for _ in range(3):
            mock.generate(ask(f"question {i}"))
    assert _kept(mock) == entries
    small = MockGPT(seed=1)
    small._memo = DrawMemo(max_bytes=100)  # no answer fits
    for _ in range(3):
        small.generate(ask("same"))
    assert _kept(small) == 0


def test_a_key_seen_once_is_forgotten_after_the_1024_newer_ones() -> None:
    # the keys seen once are a bounded queue: the oldest goes first, its next sighting counts as a first
    memo: KeptAnswers[str, int] = KeptAnswers(8, 1 << 20)
    gen = (1,)
    assert memo.sighting(gen, "oldest") == (None, None)
    assert memo.sighting(gen, "kept") == (None, None)
    for i in range(1023):
        assert memo.sighting(gen, f"newer {i}") == (None, None)
    assert memo.sighting(gen, "kept") == (None, gen)  # among the 1,024 newest: its second sighting
    assert memo.sighting(gen, "kept") == (None, None)  # and it starts over
    assert memo.sighting(gen, "oldest") == (None, None)  # forgotten: a first sighting again
    assert memo.sighting(gen, "oldest") == (None, gen)


def test_a_sighting_looks_up_and_says_when_to_keep_in_one_step() -> None:
    memo: KeptAnswers[str, int] = KeptAnswers(8, 1 << 20)
    gen = (1,)
    assert memo.sighting(gen, "k") == (None, None)  # a first sighting: nothing to keep yet
    assert memo.sighting(gen, "k") == (None, gen)  # the second: keep its answer, under this generation
    memo.store(gen, "k", 7, 10)
    assert memo.sighting(gen, "k") == (7, None)  # the third: answered from the memo
    assert (memo.hits, memo.misses) == (1, 2)
    assert memo.sighting((2,), "k") == (None, None) and len(memo) == 0  # a new generation empties it
    assert memo.sighting((2,), "k") == (None, (2,))
    memo.store((2,), "k", 8, 10)
    assert memo.sighting(None, "k") == (None, None) and len(memo) == 0  # no generation: nothing kept
    assert memo.sighting(None, "k") == (None, None)  # nor kept on the second sighting


def test_a_first_sighting_does_not_work_out_the_generation() -> None:
    """A load of distinct requests (every sighting a first) pays for one hash and two looks, not for the
    generation: it is asked for only to answer a kept value or to keep one."""
    asked: list[object] = []

    def generation_of(source: object) -> tuple[object, ...]:
        asked.append(source)
        return (1,)

    memo: KeptAnswers[str, int] = KeptAnswers(8, 1 << 20, generation_of)
    for i in range(100):
        assert memo.sighting("engine", f"distinct {i}") == (None, None)
    assert asked == []
    assert memo.sighting("engine", "distinct 7") == (None, (1,))  # a second sighting: kept under it
    memo.store((1,), "distinct 7", 70, 10)
    assert memo.sighting("engine", "distinct 7") == (70, None)  # a hit: checked against it
    assert asked == ["engine", "engine"]


def test_a_generation_changed_meanwhile_is_found_before_anything_is_answered() -> None:
    """The memo learns of new rules (a new generation) at its next hit or second sighting, and empties
    itself then: a value kept under the old generation is never answered."""
    now = [(1,)]
    memo: KeptAnswers[str, int] = KeptAnswers(8, 1 << 20, lambda _: now[0])
    memo.sighting(None, "a")
    assert memo.sighting(None, "a") == (None, (1,))
    memo.store((1,), "a", 1, 10)
    now[0] = (2,)  # the rules changed
    for i in range(10):  # first sightings do not look
        memo.sighting(None, f"other {i}")
    assert len(memo) == 1
    assert memo.sighting(None, "a") == (None, None) and len(memo) == 0  # found: emptied, not answered
    memo.store((1,), "a", 1, 10)  # an answer drawn under the old generation is not kept
    assert len(memo) == 0
