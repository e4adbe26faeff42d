"""Packed journal records (`journal.packing`) read back equal to the records they pack: every field value,
each object's field set, tuples as tuples; what JSON cannot hold exactly is pickled, or kept live."""

from __future__ import annotations

import weakref
from typing import Any

import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.journal import CallRecord, Journal, PackedRecord
from synthgpt.journal.packing import (
    pack,
    pack_messages,
    pack_output,
    pickled,
    unpack_messages,
    unpack_output,
    unpack_pair,
)  # fmt: skip
from synthgpt.model import Message, ModelOutput, ModelRequest, StreamPlan
from tests.codec.test_openai_chat import WEATHER


def _models(value: Any) -> list[Any]:
    """Every pydantic object in `value`, depth first."""
    from pydantic import BaseModel

    found: list[Any] = []
    if isinstance(value, BaseModel):
        found.append(value)
        for name in type(value).model_fields:
            found += _models(getattr(value, name))
    elif isinstance(value, tuple):
        for item in value:
            found += _models(item)
    return found


def _assert_same(back: tuple[ModelRequest, ModelOutput], request: ModelRequest, output: ModelOutput) -> None:
    assert back == (request, output)
    for got, want in zip(_models(back), _models((request, output)), strict=True):
        assert type(got) is type(want)
        assert got.__dict__ == want.__dict__
        assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
        assert got.model_fields_set == want.model_fields_set


def _mock() -> MockGPT:
    return MockGPT(
        [
            Rule("tools", m.has_tools(), g.tool_call("get_weather", {"city": "Paris"})),
            Rule("vectors", m.api("embeddings"), g.embeddings(dimensions=8)),
            Rule("streamed", m.last_user(contains="stream"), "streamed answer",
                 stream={"chunk_chars": 3, "faults": [{"kind": "truncate", "after": 2}]}),
            Rule("default", m.always(), g.prose()),
        ],
        seed=3,
    )  # fmt: skip


ASKS: list[dict[str, Any]] = [
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}], "max_output_tokens": 40},
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather in Paris?"}], "tools": [WEATHER],
     "tool_choice": "required", "extra": {"temperature": 0.2, "metadata": {"a": [1, 2]}}},
    {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "cold"},
        {"role": "user",
         "content": [{"type": "text", "text": "and"}, {"type": "image_url", "image_url": "x.png"}]}],
     "headers": {"X-Trace": "1"}, "reasoning": {"effort": "low"}},
    {"model": "text-embedding-3-small", "api": "embeddings", "inputs": ["one", "two"]},
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "please stream this"}], "stream": True,
     "stream_options": {"include_usage": True}},
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "json"}],
     "response_schema": {"name": "order",
                         "schema": {"type": "object", "properties": {"id": {"type": "string"}}}}},
]  # fmt: skip


@pytest.mark.parametrize("ask", ASKS, ids=["chat", "tools", "turns", "embeddings", "stream", "schema"])
def test_a_packed_pair_reads_back_equal_field_by_field(ask: dict[str, Any]) -> None:
    record = _mock().resolve(ask).record
    payload = pack(record.request, record.output)
    assert payload[:1] == b"["  # JSON: nothing in these needs pickling
    _assert_same(unpack_pair(payload), record.request, record.output)
    # read twice, the same; the objects read are new ones (a caller changing them changes nothing kept)
    again = unpack_pair(payload)
    assert again == unpack_pair(payload) and again[0] is not unpack_pair(payload)[0]


def _assert_same_output(back: ModelOutput, output: ModelOutput) -> None:
    assert back == output
    for got, want in zip(_models(back), _models(output), strict=True):
        assert type(got) is type(want)
        assert got.__dict__ == want.__dict__ and list(got.__dict__) == list(want.__dict__)
        assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
        assert got.model_fields_set == want.model_fields_set


PLAIN = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}]}


@pytest.mark.parametrize(
    ("ask", "flat"),
    [(PLAIN, True), (ASKS[0], True), *((ask, False) for ask in ASKS[1:5])],
    ids=["text", "cut text", "tools", "turns", "embeddings", "stream"],
)
def test_an_output_packed_alone_reads_back_equal_field_by_field(ask: dict[str, Any], flat: bool) -> None:
    output = _mock().resolve(ask).output
    payload = pack_output(output)
    # a text answer as the engine assembles it is one flat array of its values; any other, model by model
    assert payload.startswith(b"[-2,") is flat
    _assert_same_output(unpack_output(payload), output)
    assert unpack_output(payload) is not unpack_output(payload)  # new objects each time
    if flat:
        assert unpack_output(payload).stream is ModelOutput.model_fields["stream"].default


def test_a_text_answer_of_other_values_packs_the_general_way() -> None:
    output = _mock().resolve(PLAIN).output
    usage = output.usage.model_copy(update={"cached_tokens": 3})
    part = output.choices[0].parts[0]
    for other in (
        output.model_copy(update={"usage": usage}),  # a count the flat form does not hold
        output.model_copy(update={"created": 2**70}),  # beyond 64 bits: orjson refuses it
        output.model_copy(update={"choices": (output.choices[0].model_copy(
            update={"parts": (part.model_copy(update={"text": "lone \ud800"}),)}),)}),  # pickled
        ModelOutput(choices=output.choices, usage=output.usage, model="m"),  # a field set of its own
    ):
        payload = pack_output(other)
        assert not payload.startswith(b"[-2,")
        _assert_same_output(unpack_output(payload), other)


def test_a_field_default_packs_as_itself() -> None:
    record = _mock().resolve(ASKS[0]).record
    request, output = unpack_pair(pack(record.request, record.output))
    assert output.stream is ModelOutput.model_fields["stream"].default is record.output.stream
    assert request.fingerprint() == record.request.fingerprint()  # taken again, not carried over


def test_a_stream_plan_of_its_own_packs_with_its_faults_and_deltas() -> None:
    plan = StreamPlan(
        chunk_chars=2, interval_ms=1.5, faults=[{"kind": "disconnect", "after": 3}], deltas=("a", "b")
    )
    output = ModelOutput(stream=plan)
    request = ModelRequest(messages=[{"role": "user", "content": "x"}])
    _assert_same(unpack_pair(pack(request, output)), request, output)


@pytest.mark.parametrize(
    "extra",
    [
        {"stop": ("a", "b")},  # a tuple: JSON would give a list
        {"nan": float("nan")},
        {"big": 2**70},
        {"key": b"bytes"},
        {1: "int key"},
        {"text": "lone \ud800 surrogate"},
    ],
    ids=["tuple", "nan", "big-int", "bytes", "int-key", "surrogate"],
)
def test_what_json_cannot_hold_exactly_is_pickled(extra: dict[Any, Any]) -> None:
    request = ModelRequest.model_construct(**{**ModelRequest().__dict__, "extra": extra})
    output = ModelOutput()
    payload = pack(request, output)
    assert payload == pickled((request, output))
    back, _ = unpack_pair(payload)
    assert back.extra.keys() == extra.keys() and type(next(iter(back.extra.values()))) is type(
        next(iter(extra.values()))
    )


def test_nan_in_vectors_and_stream_floats_is_pickled() -> None:
    request = ModelRequest()
    vectors = ModelOutput(embeddings=((0.5, float("nan")),))
    assert pack(request, vectors)[:1] == b"\x80"
    paced = ModelOutput(stream=StreamPlan(interval_ms=float("inf")))
    assert pack(request, paced)[:1] == b"\x80"
    assert unpack_pair(pack(request, paced))[1].stream.interval_ms == float("inf")


def test_an_error_answer_is_pickled_with_its_frozen_dicts() -> None:
    mock = MockGPT([Rule("down", m.always(), error={"status": 503, "headers": {"retry-after": "1"}})])
    record = mock.resolve(ASKS[0]).record
    payload = pack(record.request, record.output)
    assert payload[:1] == b"\x80"
    _, output = unpack_pair(payload)
    assert output == record.output and type(output.error.headers) is type(record.output.error.headers)  # type: ignore[union-attr]


class Mine(ModelRequest):
    """A request class of a user's own: packed as pickle does, by its class."""


def test_a_subclass_of_a_model_is_pickled() -> None:
    request = Mine(messages=[{"role": "user", "content": "x"}])
    payload = pack(request, ModelOutput())
    assert payload[:1] == b"\x80" and type(unpack_pair(payload)[0]) is Mine


def test_a_record_that_cannot_be_packed_at_all_stays_live() -> None:
    journal = Journal(100)
    odd = ModelRequest.model_construct(**{**ModelRequest().__dict__, "extra": {"f": lambda: 1}})
    for i in range(3):
        request = odd if i == 0 else ModelRequest()
        journal.append(CallRecord(i, request, "r", 1, ModelOutput(), 0.0, 0.0))
    kept = list(journal._records)
    assert isinstance(kept[0], CallRecord) and isinstance(kept[1], PackedRecord)
    assert journal.list()[0].request is odd


def test_the_journal_reads_back_every_kind_of_call_equal() -> None:
    mock = _mock()
    records = [mock.resolve(ask).record for _ in range(4) for ask in ASKS]
    kept = mock.journal.list()
    assert all(isinstance(r, PackedRecord) for r in mock.journal._records)
    assert kept == records
    for got, want in zip(kept, records, strict=True):
        _assert_same((got.request, got.output), want.request, want.output)
        assert (got.index, got.rule, got.seed, got.at, got.captures) == (
            want.index, want.rule, want.seed, want.at, want.captures,
        )  # fmt: skip
        assert got.delivery is want.delivery
    rule = mock.rules["tools"]
    assert rule.calls == [r for r in records if r.rule == "tools"]


def test_a_drawn_calls_objects_are_freed_once_it_has_ended() -> None:
    """The journal packs each record as it stores it, and the rule's history keeps that same packed
    record: nothing holds the call's request and output once its caller lets go of them (they were kept
    live for the next 16 calls, and freed later, colder)."""
    mock = _mock()
    drawn = mock.resolve(ASKS[0])
    output, request = weakref.ref(drawn.output), weakref.ref(drawn.record.request)
    record = drawn.record
    kept = mock.journal._records[-1]
    assert isinstance(kept, PackedRecord) and kept.delivery is record.delivery
    assert mock.rules[record.rule]._calls[-1] is kept
    del drawn
    assert output() is not None  # the record still holds them
    del record
    assert output() is None and request() is None
    assert mock.journal[-1].output.text  # read back from the packed form


def test_a_journal_that_keeps_nothing_leaves_the_rule_its_live_record() -> None:
    mock = MockGPT(journal_size=0)
    record = mock.resolve(ASKS[0]).record
    assert len(mock.journal) == 0 and mock.rules[record.rule]._calls[-1] is record


def test_a_page_of_the_journal_rebuilds_only_its_own_records(monkeypatch: pytest.MonkeyPatch) -> None:
    mock = _mock()
    for i in range(12):
        mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": f"page {i}"}]})
    every = mock.journal.list()
    rebuilt: list[int] = []
    unpack = PackedRecord.unpack

    def counted(self: PackedRecord) -> CallRecord:
        rebuilt.append(self.index)
        return unpack(self)

    monkeypatch.setattr(PackedRecord, "unpack", counted)
    assert mock.journal.query(offset=3, limit=2) == every[3:5] and rebuilt == [3, 4]
    assert mock.journal.count() == 12 and rebuilt == [3, 4]
    assert mock.journal[-1] == every[-1] and rebuilt == [3, 4, 11]
    assert mock.journal.query(rule="default", offset=10) == every[10:] and len(rebuilt) == 3 + 12


def test_records_are_rebuilt_outside_the_journals_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kept record is packed: reading a thousand rebuilds a thousand, and a call drawn meanwhile (in
    the server's worker thread) must not wait for that behind the journal's lock."""
    mock = _mock()
    for i in range(3):
        mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": f"lock {i}"}]})
    held: list[bool] = []
    unpack = PackedRecord.unpack

    def watched(self: PackedRecord) -> CallRecord:
        held.append(mock.journal._lock.locked())
        return unpack(self)

    monkeypatch.setattr(PackedRecord, "unpack", watched)
    assert len(mock.journal.list()) == 3 and mock.journal[-1].index == 2
    assert len(mock.journal.query(offset=1)) == 2 and len(mock.journal.query(rule="default")) == 3
    assert held == [False] * 9


def test_a_value_read_back_before_is_still_compared() -> None:
    # the same JSON text from a list, then from a tuple: the tuple must not ride on the list's reading
    listed = ModelRequest(extra={"stop": ["a", "b"]})
    tupled = ModelRequest.model_construct(**{**listed.__dict__, "extra": {"stop": ("a", "b")}})
    assert pack(listed, ModelOutput())[:1] == b"["
    assert pack(listed, ModelOutput())[:1] == b"["
    payload = pack(tupled, ModelOutput())
    assert payload[:1] == b"\x80" and unpack_pair(payload)[0].extra == {"stop": ("a", "b")}


def test_an_object_shared_by_calls_packs_as_its_own_text_each_time() -> None:
    # a decoder's one tool choice and a rule's stream plan (with faults) are packed once and kept by
    # identity: each record holding them still reads back equal, field by field, as new objects
    from synthgpt.journal import packing
    from synthgpt.model import ToolChoice, built

    choice = built(ToolChoice, mode="auto")
    plan = StreamPlan(chunk_chars=2, faults=[{"kind": "disconnect", "after": 3}], deltas=("a",))
    for i in range(3):
        request = ModelRequest.model_construct(
            **{**ModelRequest().__dict__, "tool_choice": choice, "model": f"m{i}"}, _fields_set={"model"}
        )
        output = ModelOutput(stream=plan, id_seed=i)
        payload = pack(request, output)
        assert payload[:1] == b"["
        back = unpack_pair(payload)
        _assert_same(back, request, output)
        assert back[0].tool_choice is not choice and back[1].stream is not plan
    assert packing._HELD[id(choice)][0] is choice and packing._HELD[id(plan)][0] is plan


def test_a_held_class_object_json_cannot_hold_is_pickled_every_time() -> None:
    paced = StreamPlan(interval_ms=float("inf"))
    for _ in range(2):
        payload = pack(ModelRequest(), ModelOutput(stream=paced))
        assert payload[:1] == b"\x80"
        assert unpack_pair(payload)[1].stream == paced


def test_held_objects_are_bounded_and_packed_again_once_dropped() -> None:
    from synthgpt.journal import packing

    plans = [StreamPlan(chunk_chars=i + 1) for i in range(packing._HELD_MAX + 5)]
    for plan in plans + plans[:3]:
        output = ModelOutput(stream=plan)
        _assert_same(unpack_pair(pack(ModelRequest(), output)), ModelRequest(), output)
    assert len(packing._HELD) <= packing._HELD_MAX


def test_a_replayed_pair_is_packed_once_and_a_new_request_with_its_output_again() -> None:
    from synthgpt.journal.memory import _Payloads

    request, output = ModelRequest(model="a"), ModelOutput(id_seed=5)
    other = ModelRequest(model="b")
    payloads = _Payloads()
    drawn, wire = payloads.of(CallRecord(0, request, "r", 1, output, 0.0, 0.0), False)
    assert wire is None and payloads._items == {}  # a drawn call's pair is not held
    first, wire = payloads.of(CallRecord(1, request, "r", 1, output, 0.0, 0.0), True)
    assert first == drawn and first is not drawn and wire is None
    second, wire = payloads.of(CallRecord(2, request, "r", 1, output, 0.0, 0.0), True)
    assert second is first and wire is None
    third, wire = payloads.of(CallRecord(3, other, "r", 1, output, 0.0, 0.0), True)
    assert third is not first and unpack_pair(third) == (other, output)
    for i in range(40):  # many pairs: bounded, each packed right
        req = ModelRequest(model=f"x{i}")
        blob, wire = payloads.of(CallRecord(i, req, "r", 1, output, 0.0, 0.0), True)
        assert unpack_pair(blob) == (req, output)
    assert len(payloads._items) <= 16


def test_a_conversation_packs_and_reads_back_equal_message_by_message() -> None:
    # the Responses store keeps its conversations so: tool calls, a tool result, text and image parts
    messages = ModelRequest.from_dict(ASKS[2]).messages
    payload = pack_messages(messages)
    assert payload[:1] == b"["
    back = unpack_messages(payload)
    assert type(back) is tuple and back == messages and back[0] is not messages[0]
    for got, want in zip(_models(back), _models(messages), strict=True):
        assert type(got) is type(want) and got.__dict__ == want.__dict__
        assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
        assert got.model_fields_set == want.model_fields_set
    assert unpack_messages(pack_messages(())) == ()


class MyMessage(Message):
    """A message class of a user's own: packed as pickle does, by its class."""


def test_a_conversation_json_cannot_hold_is_pickled() -> None:
    messages = (Message(role="user", content="x"), MyMessage(role="assistant", content="y"))
    payload = pack_messages(messages)
    assert payload[:1] == b"\x80"
    back = unpack_messages(payload)
    assert back == messages and type(back[1]) is MyMessage
