"""`records.record_json` writes a record's row text from its models, without pydantic's dumps: proof that
it is the text the dumps gave (`_old_text`: orjson of `record_to_dict`, sorted keys, the standard encoder
past orjson's range), for every request the decode corpus decodes, answers of every kind, and awkward
values, and that what it cannot vouch for is written the old way."""

from __future__ import annotations

import datetime
import enum
import json
import math
import uuid
from typing import Any

import orjson
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.journal import CallRecord, Delivery
from synthgpt.journal.records import _written, record_from_dict, record_json, record_to_dict
from synthgpt.model import (
    Choice,
    ErrorSpec,
    FrozenDict,
    FrozenList,
    Message,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    ResponseSchema,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
    built,
)
from tests.codec import decode_corpus
from tests.codec.test_decode_equivalence import _same_types
from tests.codec.test_openai_chat import WEATHER


def _old_dict(record: CallRecord) -> dict[str, Any]:
    """`record_to_dict` as it was: the two pydantic dumps."""
    return {
        "index": record.index, "api": record.api, "model": record.model, "rule": record.rule,
        "seed": str(record.seed), "at": record.at, "duration_ms": record.duration_ms,
        "captures": dict(record.captures), "outcome": record.outcome, "frames_sent": record.frames_sent,
        "request": record.request.model_dump(mode="json", by_alias=True),
        "output": record.output.model_dump(mode="json"),
    }  # fmt: skip


def _old_text(record: CallRecord) -> str:
    """The SQLite journal's row text as it was written (`sqlite._row_json(record_to_dict(record))`)."""
    data = _old_dict(record)
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _record(request: ModelRequest, output: ModelOutput, **kw: Any) -> CallRecord:
    fields: dict[str, Any] = {"index": 7, "rule": "r", "seed": 2**64 - 1, "at": 1767225600.25,
                              "duration_ms": 0.1234, **kw}  # fmt: skip
    return CallRecord(request=request, output=output, **fields)


def _assert_same(record: CallRecord, *, fast: bool = True) -> None:
    assert record_json(record) == _old_text(record)
    if fast:
        assert _written(record) is not None
    _assert_same_dict(record)


def _assert_same_dict(record: CallRecord) -> None:
    """`record_to_dict` gives the dict it gave: equal, keys in the same order, values of the same types."""
    got, want = record_to_dict(record), _old_dict(record)
    assert got == want or math.isnan(record.at)
    assert repr(got) == repr(want)


def _mock() -> MockGPT:
    return MockGPT(
        [
            Rule("tools", m.has_tools(), g.tool_call("get_weather", {"city": "Zürich", "t": 1e-7})),
            Rule("vectors", m.api("embeddings"), g.embeddings(dimensions=8)),
            Rule("thinking", m.last_user(contains="think"),
                 g.reply("the answer \u2028 \x00", reasoning=g.reasoning())),
            Rule("both", m.last_user(contains="both"),
                 g.reply("calling", tool_calls=[g.tool_call("get_weather")])),
            Rule("streamed", m.last_user(contains="stream"), "streamed answer",
                 stream={"chunk_chars": 3, "interval_ms": 1.5, "jitter_ms": 1e-5, "wire_chunk_bytes": 7,
                         "keepalive_every": 2, "faults": [{"kind": "truncate", "after": 2}]}),
            Rule("pinned", m.last_user(contains="pinned"), "ab",
                 stream={"deltas": ["a", "b"], "id": "mock-1", "created": 5}),
            Rule("down", m.last_user(contains="down"),
                 error={"status": 503, "headers": {"retry-after": "1"}, "retry_after_ms": 1000,
                        "body": {"error": {"list": [1, 2.5, {"é": None}], "tiny": 1e-9}}}),
            Rule("plain_error", m.last_user(contains="plain error"), error={"status": 429}),
            Rule("filtered", m.last_user(contains="filter"),
                 g.answer("no", finish_reason="content_filter", usage={"cached_tokens": 3})),
            Rule("echo", m.last_user(contains="say"), "well, hello there"),
            Rule("schema", m.last_user(contains="json"), g.from_request_schema()),
            Rule("default", m.always(), g.prose()),
        ],
        seed=3,
    )  # fmt: skip


def _ask(text: str, **kw: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **kw}


ASKS: list[dict[str, Any]] = [
    _ask("hello there"),
    _ask("hello there", max_output_tokens=3),  # cut: finish `length`
    _ask("say hello", extra={"stop": ["hel", "zz"]}),  # a stop sequence: the choice says which
    _ask("hello", n=3),
    _ask("weather?", tools=[WEATHER], tool_choice="required", extra={"temperature": 0.2}),
    _ask("think first", reasoning={"effort": "high", "budget_tokens": 2048, "summary": "auto"}),
    _ask("think first", max_output_tokens=5, reasoning={"effort": "low"}),
    _ask("both, please", tools=[WEATHER], parallel_tool_calls=False),
    _ask("please stream this", stream=True, stream_options={"include_usage": True}),
    _ask("pinned please", stream=True),
    _ask("down"),
    _ask("plain error"),
    _ask("filter me"),
    _ask("json", response_schema={"name": "o", "strict": True, "schema": {
        "type": "object", "properties": {"x": {"type": "number", "minimum": 1e-5}}, "required": ["x"]}}),
    {"model": "text-embedding-3-small", "api": "embeddings", "inputs": ["one", "two"], "dimensions": 8},
    {"model": "gpt-4o", "headers": {"X-Trace": "1"}, "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "a"},
                                     {"type": "image_url", "image_url": {"url": "data:x"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"c":1}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "cold", "name": "get_weather"},
        {"role": "user", "content": "and?"}]},
]  # fmt: skip


@pytest.mark.parametrize("ask", ASKS, ids=range(len(ASKS)))
def test_every_kind_of_answer_is_written_as_the_dumps_wrote_it(ask: dict[str, Any]) -> None:
    record = _mock().resolve(ask).record
    _assert_same(record)


def test_the_kinds_of_answers_are_all_there() -> None:
    """The asks above do give each kind of output the writer handles."""
    mock = _mock()
    outputs = [mock.resolve(ask).record.output for ask in ASKS]
    parts = {type(p) for o in outputs for c in o.choices for p in c.parts}
    assert parts == {TextOut, ToolCallPart, ReasoningPart}
    assert {c.finish_reason for o in outputs for c in o.choices} >= {"stop", "length", "content_filter"}
    assert any(c.stop_sequence for o in outputs for c in o.choices)
    assert any(len(o.choices) == 3 for o in outputs)
    assert any(o.embeddings for o in outputs)
    assert any(o.error is not None and o.error.body for o in outputs)
    assert any(o.stream.faults and o.stream.interval_ms for o in outputs)
    assert any(o.stream.deltas and o.stream.id and o.stream.created for o in outputs)
    assert any(o.usage.cached_tokens and o.usage.reasoning_tokens == 0 for o in outputs)
    assert any(o.usage.reasoning_tokens for o in outputs)


def _unwired(request: ModelRequest) -> ModelRequest:
    """`request` without the wire it was decoded from: written as its fields."""
    copied = request.model_copy()
    copied.__pydantic_private__["_wire"] = None  # type: ignore[index]
    return copied


def test_every_decoded_request_is_written_as_the_dumps_wrote_it() -> None:
    """Every request the corpus decodes (every API, hostile values included), with its answer: written
    from the models, to the old text (none needs the old path: decoded requests are plain JSON values).
    Kept with its wire (as the server's are), the row holds the wire instead, everything else as before,
    and reads back to the same request, type for type."""
    mock, codecs = decode_corpus.MockGPT(seed=0), decode_corpus._codecs()
    outputs = [_mock().resolve(ask).record.output for ask in ASKS]
    written = 0
    for i, (route, raw) in enumerate(decode_corpus.corpus()):
        _, req = decode_corpus.outcome(mock, codecs, route, raw)
        if req is None:
            continue
        try:
            output = mock.resolve(req).record.output
        except Exception:  # some decoded requests have no answer (a model not served): any output will do
            output = outputs[i % len(outputs)]
        for out in (output, outputs[i % len(outputs)]):
            record = _record(_unwired(req), out)
            assert _written(record) is not None, (route, raw[:200])
            assert record_json(record) == _old_text(record), (route, raw[:200])
            _assert_same_dict(record)
            wired = _record(req, out)
            row = json.loads(record_json(wired))
            assert "request" not in row and row["wire"]["body"].encode() == raw, route
            old = json.loads(_old_text(wired))
            assert row.keys() - {"wire"} == old.keys() - {"request"}
            assert all(row[k] == old[k] for k in row.keys() - {"wire"})
            back = record_from_dict(row)
            assert back == wired, route
            _same_types(back.request, req, route)
            assert back.request.model_fields_set == req.model_fields_set
        written += 1
    assert written > 1000


def test_the_record_fields_are_written_as_before() -> None:
    request, output = ModelRequest(), ModelOutput()
    for fields in [
        {"index": -1},  # a SQLite draft's placeholder
        {"index": 0, "seed": 0, "at": 0, "duration_ms": 0},  # ints where floats go: written as given
        {"at": 1e-7, "duration_ms": 1e300},
        {"at": float("nan"), "duration_ms": float("inf")},  # null, as orjson writes them
        {"captures": {"city": "Zürich", "n": "1"}, "delivery": Delivery("fault", 12)},
        {"captures": FrozenDict({"a": "b"})},
        {"delivery": Delivery("streaming")},
        {"seed": 2**70},  # written as a string
    ]:
        record = _record(request, output, **fields)
        assert record_json(record) == _old_text(record), fields
        _assert_same_dict(record)


class _Colour(enum.Enum):
    RED = "red"
    TINY = 1e-7


class _Number(enum.IntEnum):
    ONE = 1


class _Str(str):
    pass


class _Int(int):
    pass


EXTRAS: list[tuple[dict[Any, Any], bool]] = [
    # (extra, whether the fast path writes it)
    ({"temperature": 0.7, "top_p": 1.0, "seed": 3, "user": "u", "store": False, "stop": None}, True),
    ({"temperature": 1e-05, "tiny": 0.00001234, "neg": -2.5e-7, "big": 1e16, "huge": 1.5e300}, True),
    ({"nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf")}, True),
    ({"max": 2**64 - 1, "min": -(2**63)}, True),
    ({"wide": 2**64}, False),  # beyond orjson: the standard encoder, ASCII, as before
    ({"wide": -(2**63) - 1, "text": "Zürich"}, False),
    ({"unicode": "Zürich \u2028 \u2029 \x7f \x00 \x1f \ufeff \U0001f600", "quote": '"\\/'}, True),
    ({"ключ": 1, "a": 2, "Z": 3, "\U0001f600": 4, "é": 5, "": 6}, True),
    ({"nested": {"b": [1, 2.5, {"z": None, "a": "é"}], "a": (1, "two")}, "deep": [[[[[]]]]]}, True),
    ({"logprobs": True, "top_logprobs": 3, "include": ["x"]}, True),
    ({"enum": _Colour.RED, "tiny_enum": _Colour.TINY, "int_enum": _Number.ONE}, True),
    ({"uuid": uuid.UUID(int=7)}, True),
    ({"frozen": FrozenDict({"a": FrozenList([1, FrozenDict({"b": 2})])})}, True),
    ({"tuple_key_set": {1}}, False),
    ({"bytes": b"raw"}, False),
    ({"date": datetime.date(2024, 1, 2), "when": datetime.datetime(2024, 1, 2, 3, 4, 5)}, False),
    ({"sub": _Str("s")}, False),
    ({"sub": _Int(5)}, False),
    ({"keys": {1: "int key"}}, False),
    ({"model": ModelOutput()}, True),  # a model in a value: dumped by its own serializer
    ({"schema": ResponseSchema(name="n", schema={"a": 1})}, True),  # by alias, as the request is
]


@pytest.mark.parametrize(("extra", "fast"), EXTRAS, ids=range(len(EXTRAS)))
@pytest.mark.parametrize("where", ["extra", "stream_options", "tool", "schema"])
def test_awkward_values_are_written_as_before_or_the_old_way(extra: dict[Any, Any], fast: bool,
                                                             where: str) -> None:  # fmt: skip
    base: dict[str, Any] = {"model": "m", "messages": (built(Message, role="user", content="x"),)}
    if where == "extra":
        request = built(ModelRequest, **base, extra=extra)
    elif where == "stream_options":
        request = built(ModelRequest, **base, stream_options=extra)
    elif where == "tool":
        tool = ModelRequest(tools=[WEATHER]).tools[0]
        request = built(ModelRequest, **base, tools=(tool.model_copy(update={"parameters": extra}),))
    else:
        schema = ResponseSchema(name="s")
        request = built(ModelRequest, **base, response_schema=schema.model_copy(update={"schema_": extra}))
    record = _record(request, ModelOutput())
    assert (_written(record) is not None) is fast
    assert record_json(record) == _old_text(record)
    if fast:
        _assert_same_dict(record)


def test_a_fragment_in_a_request_is_written_where_the_dump_refused_it() -> None:
    """The one difference: orjson writes an `orjson.Fragment` as its text, which pydantic cannot dump (no
    request holds one but by a caller's choice)."""
    request = built(ModelRequest, extra={"raw": orjson.Fragment(b"[1]")})
    record = _record(request, ModelOutput())
    assert '"extra":{"raw":[1]}' in record_json(record)
    with pytest.raises(Exception, match="Fragment"):
        _old_text(record)


def test_the_output_fields_are_written_as_the_dumps_wrote_them() -> None:
    request = ModelRequest(messages=[{"role": "user", "content": "x"}])
    plans = [
        StreamPlan(),
        ModelOutput.model_fields["stream"].default,
        built(StreamPlan, first_delay_ms=3, interval_ms=2.5, jitter_ms=0),  # ints in float fields: 3.0
        StreamPlan(interval_ms=float("inf")),  # null
        StreamPlan(deltas=("a", "é"), faults=[{"kind": "disconnect", "after": 3}, {"kind": "malformed"}]),
        StreamPlan(id="x", created=0),
    ]
    for plan in plans:
        for _ in range(2):  # the second time from the plans' kept texts
            _assert_same(_record(request, ModelOutput(stream=plan)))
    choices = [
        Choice(),
        Choice(parts=[TextOut(text="a"), ToolCallPart(id="c", name="f", arguments='{"a":1e-7}')],
               finish_reason="tool_calls"),
        Choice(parts=[ReasoningPart(text="r", signature="s"), TextOut(text="t")], stop_sequence="END"),
        Choice(parts=[TextOut(text="")], stop_sequence=""),  # an empty stop sequence is still dumped
    ]  # fmt: skip
    _assert_same(_record(request, ModelOutput(choices=choices)))
    usage = Usage(prompt_tokens=2**63, completion_tokens=1, reasoning_tokens=1, cached_tokens=1)
    _assert_same(_record(request, ModelOutput(usage=usage, id_seed=2**64 - 1, created=-1, rule="é")))
    _assert_same(_record(request, ModelOutput(embeddings=((0.5, -1e-7, 1e300), (), (1, 2)))))
    _assert_same(_record(request, ModelOutput(embeddings=((0.5, float("nan")),))))
    errors = [
        ErrorSpec(),
        ErrorSpec(status=404, message="m", type="t", code="c", param="p", retry_after_ms=5,
                  headers={"a": "b"}, body={"x": [1, {"y": (2, 3)}], "z": 1e-7}),
        ErrorSpec(body={}),
    ]  # fmt: skip
    for error in errors:
        _assert_same(_record(request, ModelOutput(error=error)))


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic's, on values not of their field's type
def test_what_the_dumps_write_otherwise_takes_the_old_path() -> None:
    request = ModelRequest(messages=[{"role": "user", "content": "x"}])

    class MyPlan(StreamPlan):
        pass

    class MyRequest(ModelRequest):
        pass

    odd: list[CallRecord] = [
        _record(request, ModelOutput.model_construct(embeddings=((1, 2),))),  # ints: dumped as floats
        _record(request, ModelOutput.model_construct(embeddings=([0.5],))),
        _record(request, ModelOutput(stream=MyPlan())),
        _record(MyRequest(messages=[{"role": "user", "content": "x"}]), ModelOutput()),
        _record(request, built(ModelOutput, choices=(Choice(parts=(built(TextOut, text=_Str("s")),)),))),
        # a model in an error's body: the output is dumped without aliases (`schema_`)
        _record(request, ModelOutput(error=ErrorSpec(body={"schema": ResponseSchema(schema={})}))),
        _record(request, ModelOutput(), captures={"k": _Str("v")}),
        _record(request, ModelOutput(), at=datetime.datetime(2024, 1, 2)),  # not a float: orjson's date
        _record(request, built(ModelOutput, stream=built(StreamPlan, interval_ms=True))),
        _record(built(ModelRequest, extra={"text": "lone \ud800"}), ModelOutput()),  # the standard encoder
    ]  # fmt: skip
    for record in odd:
        assert _written(record) is None
        assert record_json(record) == _old_text(record)
        _assert_same_dict(record)
    # the standard encoder's text where orjson refuses: ASCII-escaped, as it always was
    assert "\\ud800" in record_json(odd[-1])


def test_a_float_field_holding_an_int_is_written_as_a_float() -> None:
    plan = built(StreamPlan, first_delay_ms=3)
    text = record_json(_record(ModelRequest(), ModelOutput(stream=plan)))
    assert '"first_delay_ms":3.0' in text
    assert math.isclose(json.loads(text)["output"]["stream"]["first_delay_ms"], 3)


def test_each_dict_is_a_fresh_one() -> None:
    """Callers may change what `record_to_dict` gives them: a plan's dump is kept, never handed out."""
    plan = StreamPlan(deltas=("a", "b"), faults=[{"kind": "disconnect", "after": 3}])
    record = _record(ModelRequest(), ModelOutput(stream=plan))
    first = record_to_dict(record)
    stream = first["output"]["stream"]
    stream["faults"][0]["after"] = 99
    stream["faults"].append({})
    stream["deltas"].append("c")
    stream["chunk_chars"] = 0
    first["output"]["choices"][0]["parts"].append({})
    first["output"]["usage"]["prompt_tokens"] = -1
    _assert_same(record)
    assert record.output.usage.prompt_tokens == 0 and record.output.stream.faults[0].after == 3
