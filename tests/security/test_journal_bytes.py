"""The journal and the rules' call histories are bounded by bytes as well as by count (issue 11, §4:
20 large answers took a server from 46 MB to 899 MB)."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.codec import interned
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.journal import DEFAULT_JOURNAL_BYTES, Journal, record_bytes
from synthgpt.pipeline import answer, finish_answered
from synthgpt.rules.rule import KEEP_CALLS_BYTES
from synthgpt.server.run import ServeConfig, build_mock

MB = 1024 * 1024
KB = 1024
BIG = "legal clause. " * (100 * KB // 14)  # ~100 KB of answer text


def _ask(text: str) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


def test_the_journal_keeps_what_fits_in_its_bytes() -> None:
    mock = MockGPT([Rule("big", m.always(), BIG)], journal_bytes=500 * KB)
    for i in range(40):
        mock.generate(_ask(f"call {i}"))
    kept = mock.journal.list()
    assert mock.journal.bytes <= 500 * KB
    assert 3 <= len(kept) <= 5  # each record holds ~100 KB
    assert [r.index for r in kept] == list(range(40 - len(kept), 40))  # the newest, in order
    assert mock.journal.total == 40
    assert mock.journal.bytes == sum(map(record_bytes, mock.journal._records))


def test_the_newest_record_is_kept_whatever_its_size() -> None:
    mock = MockGPT([Rule("big", m.always(), BIG)], journal_bytes=1000)
    mock.generate(_ask("a"))
    mock.generate(_ask("b"))
    assert [r.request.last_user for r in mock.journal.list()] == ["b"]


def test_rule_histories_are_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert KEEP_CALLS_BYTES == 16 * MB
    monkeypatch.setattr("synthgpt.rules.rule.KEEP_CALLS_BYTES", 400 * KB)
    rule = Rule("big", m.always(), BIG)
    mock = MockGPT([rule], journal_bytes=MB)
    for i in range(30):
        mock.generate(_ask(f"call {i}"))
    assert rule.call_count == 30
    assert rule._bytes <= 400 * KB
    assert [c.index for c in rule.calls] == list(range(30 - len(rule.calls), 30))
    assert 3 <= len(rule.calls) <= 4
    rule.reset()
    assert rule._bytes == 0 and rule.calls == []


def test_count_bound_still_holds_and_small_calls_are_cheap() -> None:
    mock = MockGPT([Rule("r", m.always(), "ok")], journal_size=50)
    for i in range(200):
        mock.generate(_ask(f"{i}"))
    assert len(mock.journal) == 50 and mock.journal.bytes < 50 * 8 * 1024
    mock.journal.clear()
    assert mock.journal.bytes == 0


def test_defaults_and_flags() -> None:
    assert Journal().max_bytes == DEFAULT_JOURNAL_BYTES == 64 * MB
    assert build_mock(ServeConfig(journal_bytes=2 * MB)).journal.max_bytes == 2 * MB
    with pytest.raises(ValueError, match="journal bytes must be >= 1, got 0"):
        Journal(10, 0)


def test_every_record_is_packed_as_it_is_kept_and_reuses_one_pickler_faithfully() -> None:
    from synthgpt.journal.memory import PackedRecord

    mock = MockGPT(seed=1)
    live = [mock.generate(_ask(f"call {i} " + "x" * i)) for i in range(36)]
    records = mock.journal.list()
    kept = list(mock.journal._records)
    assert all(isinstance(r, PackedRecord) for r in kept) and len({r.payload for r in kept}) == 36
    # each packed record rebuilt as its own
    assert [r.request.last_user for r in records] == [f"call {i} " + "x" * i for i in range(36)]
    assert [r.output.text for r in records] == [a.text for a in live]


def test_a_replayed_call_is_packed_once_and_sized_as_the_call_it_repeats() -> None:
    """A replay (the server's memo) journals the same request and output again: packed once for all its
    replays, and, kept live (no journal), it takes the original record's size instead of walking them once
    more; that size is what a walk would give."""
    from synthgpt.journal.memory import PackedRecord, _live_bytes

    mock = MockGPT([Rule("text", m.always(), "Looking it up." + "x" * 50)], seed=1)
    first = mock.resolve(_ask("find the order")).record
    rule = next(r for r in mock.rules if r.name == first.rule)
    again, third = mock.replay(rule, first), mock.replay(rule, first)
    kept = list(mock.journal._records)
    assert all(isinstance(r, PackedRecord) for r in kept)
    assert kept[0].payload == kept[1].payload and kept[2].payload is kept[1].payload  # the replays share one
    assert (third.index, mock.journal.total, mock.journal.bytes) == (2, 3, 3 * record_bytes(kept[0]))
    assert mock.journal.list()[1:] == [again, third] and again.output is first.output

    unkept = MockGPT([Rule("text", m.always(), "Looking it up." + "x" * 50)], seed=1, journal_size=0)
    first = unkept.resolve(_ask("find the order")).record
    rule = next(r for r in unkept.rules if r.name == first.rule)
    again = unkept.replay(rule, first)
    assert first.nbytes == _live_bytes(first) > 0  # the rule's history sized the live record once
    assert again.nbytes == first.nbytes == _live_bytes(again)
    assert rule._calls[-1] is again and rule._bytes == 2 * first.nbytes

def _conversation(messages: int, text: str = "hi") -> dict[str, object]:
    """Each message its own text: the decoder keeps a conversation's messages, and one text sent 20,000
    times is one message object held 20,000 times (the bounds then count more than is held)."""
    said = [{"role": "user", "content": f"{text} {i}"} for i in range(messages)]
    return {"model": "gpt-4o", "messages": said}


def _answer(mock: MockGPT, body: dict[str, object]) -> None:
    """One call as the server answers it: parsed from JSON (each string its own object), then finished."""
    answered = answer(mock, ChatCodec(), json.dumps(body).encode(), {}, {}, path="/v1/chat/completions")
    assert answered.status == 200, answered.data[:300]
    finish_answered(mock, answered)


def _forget_kept_parts() -> None:
    """Empty what the process keeps of requests' parts for later ones (the decoders' kept messages and
    tools, the texts and counts kept for those objects): held there, a record's parts are not its own."""
    from synthgpt import model
    from synthgpt.engine import budget

    interned.forget()
    model._KEPT_TEXTS.clear()
    budget._TOOLS_COUNTED.clear()


def _held_by_one_call(mock: MockGPT, body: dict[str, object]) -> tuple[int, int]:
    """(bytes the process holds after one call, `record_bytes` of its record), traced by tracemalloc."""
    _answer(mock, body)  # warm: caches filled on a first call are not the record's
    for rule in mock.rules:
        rule.reset()
    _forget_kept_parts()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        _answer(mock, body)
        _forget_kept_parts()  # the record's parts then are held by the record alone
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    record = next(r.last for r in mock.rules if r.last is not None)
    return held, record_bytes(record)


def _tool_call(i: int) -> dict[str, object]:
    return {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}


SHAPES: dict[str, dict[str, object]] = {
    "one-message": _ask("hi"),
    "20k-short-messages": _conversation(20_000),
    "2k-long-messages": _conversation(2_000, "x" * 1_000),
    "5k-tool-calls": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [_tool_call(i) for i in range(5_000)]},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"} for i in range(5_000)),
    ]},
    "5k-parts": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}] * 5_000},
    ]},
    "64-choices": {**_ask("Write a long essay about dragons"), "n": 64},
    "logprobs": {**_ask("Write a long essay about dragons"), "n": 16, "logprobs": True, "top_logprobs": 20},
    "128-tools": {**_ask("hi"), "tools": [
        {"type": "function", "function": {"name": f"t{i}", "description": "d" * 100, "parameters": {
            "type": "object", "properties": {"a": {"type": "string"}}}}}
        for i in range(128)
    ]},
}  # fmt: skip


@pytest.mark.parametrize("body", SHAPES.values(), ids=SHAPES.keys())
def test_a_live_record_is_sized_as_what_it_holds(body: dict[str, object]) -> None:
    """The byte bounds are only as good as `record_bytes`: it counted texts alone, so a conversation of
    20,000 short messages counted 44 KB and held 13.6 MB (tool calls 70x, parts 140x, tools 44x)."""
    held, counted = _held_by_one_call(MockGPT(journal_size=0), body)
    assert 0.5 < held / counted < 2, (held, counted)


def test_calls_with_many_messages_are_held_within_the_byte_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten conversations of 20,000 messages (13.6 MB each held live, a 0.6 MB body each) kept 136 MB
    with a journal of 16 MB: now what the journal and the rule's history may hold (the newest record each
    whatever its size, so one or two records)."""
    monkeypatch.setattr("synthgpt.rules.rule.KEEP_CALLS_BYTES", 16 * MB)
    mock = MockGPT(journal_bytes=16 * MB)
    body = _conversation(20_000)
    _answer(mock, body)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            _answer(mock, body)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert mock.journal.bytes <= 16 * MB + 14 * MB
    assert held < 36 * MB, held


def test_a_record_over_a_megabyte_is_packed_as_soon_as_it_is_kept() -> None:
    """Kept live for 16 calls, a large record's objects were walked by every full collection of the cyclic
    collector (`/healthz` waited 120-175 ms behind a few such calls); packed at once, it holds none. Every
    record is packed at once now, the small ones too."""
    from synthgpt.journal.memory import PackedRecord

    mock = MockGPT(seed=1)
    _answer(mock, _ask("a small call"))
    _answer(mock, _conversation(2_000))  # ~1.4 MB live
    small, large = mock.journal._records
    assert isinstance(small, PackedRecord) and isinstance(large, PackedRecord)
    rule = next(r for r in mock.rules if r.last is not None and r.last.index == 1)
    assert isinstance(rule._calls[-1], PackedRecord)  # the rule's history keeps it packed too
    kept = mock.journal.list()[-1]
    assert len(kept.request.messages) == 2_000 and kept.index == 1 and kept.delivery.outcome == "done"
    assert mock.journal.bytes == record_bytes(small) + record_bytes(large) < 200 * KB
