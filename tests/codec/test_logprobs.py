"""Simulated logprobs: the neutral entries (`synthgpt.logprobs`) and how the Chat Completions and Responses
codecs put them on the wire, in process."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from typing import Any

import openai.types.chat as oa
import openai.types.responses as oar
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.extensions.json import JSONSnapshotExtension

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.codec.openai_responses.encode import ResponsesCodec
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.logprobs import TokenLogprob, alternatives_asked, group_by_chars, token_logprobs
from synthgpt.model import ModelOutput, ModelRequest
from synthgpt.tokens import count_tokens, token_pieces
from tests.codec._support import EVENT_SCHEMAS

CHAT = ChatCodec()
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TEXTS = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)


def check_entries(text: str, entries: list[TokenLogprob], top_n: int) -> None:
    """Every property an entry list promises, for `text` with `top_n` alternatives."""
    assert "".join(e["token"] for e in entries) == text
    assert len(entries) == count_tokens(text)
    for e in entries:
        assert list(e) == ["token", "logprob", "bytes", "top_logprobs"]
        assert e["bytes"] == list(e["token"].encode())
        assert -2.3 <= e["logprob"] < 0
        top = e["top_logprobs"]
        assert len(top) == top_n
        if not top_n:
            continue
        assert top[0] == {"token": e["token"], "logprob": e["logprob"], "bytes": e["bytes"]}
        tokens = [t["token"] for t in top]
        assert len(set(tokens)) == len(tokens), "alternatives are distinct tokens"
        lps = [t["logprob"] for t in top]
        assert all(a > b for a, b in itertools.pairwise(lps)), "each less likely than the one before"
        assert all(t["bytes"] == list(t["token"].encode()) for t in top)
        assert sum(math.exp(lp) for lp in lps) <= 1 + 1e-6, "probabilities never sum past 1"


# ------------------------------------------------------------------------------------------- neutral entries


def test_exact_entries_for_a_fixed_seed() -> None:
    assert token_logprobs("Hi there, Ana!", 7, 2) == [
        {
            "token": "Hi",
            "logprob": -0.65395019,
            "bytes": [72, 105],
            "top_logprobs": [
                {"token": "Hi", "logprob": -0.65395019, "bytes": [72, 105]},
                {"token": "hi", "logprob": -1.5257677, "bytes": [104, 105]},
            ],
        },
        {
            "token": " ther",
            "logprob": -7.4377846e-05,
            "bytes": [32, 116, 104, 101, 114],
            "top_logprobs": [
                {"token": " ther", "logprob": -7.4377846e-05, "bytes": [32, 116, 104, 101, 114]},
                {"token": "en", "logprob": -9.9357875, "bytes": [101, 110]},
            ],
        },
        {
            "token": "e",
            "logprob": -1.6244427e-07,
            "bytes": [101],
            "top_logprobs": [
                {"token": "e", "logprob": -1.6244427e-07, "bytes": [101]},
                {"token": " for", "logprob": -16.244841, "bytes": [32, 102, 111, 114]},
            ],
        },
        {
            "token": ",",
            "logprob": -0.064342104,
            "bytes": [44],
            "top_logprobs": [
                {"token": ",", "logprob": -0.064342104, "bytes": [44]},
                {"token": ' "', "logprob": -3.3662775, "bytes": [32, 34]},
            ],
        },
        {
            "token": " Ana",
            "logprob": -4.8370673e-07,
            "bytes": [32, 65, 110, 97],
            "top_logprobs": [
                {"token": " Ana", "logprob": -4.8370673e-07, "bytes": [32, 65, 110, 97]},
                {"token": " to", "logprob": -14.852109, "bytes": [32, 116, 111]},
            ],
        },
        {
            "token": "!",
            "logprob": -0.0016541952,
            "bytes": [33],
            "top_logprobs": [
                {"token": "!", "logprob": -0.0016541952, "bytes": [33]},
                {"token": " !", "logprob": -7.0331327, "bytes": [32, 33]},
            ],
        },
    ]


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, seed=st.integers(0, 2**64 - 1), top_n=st.integers(0, 20))
def test_entries_tile_the_text_and_rank_their_alternatives(text: str, seed: int, top_n: int) -> None:
    check_entries(text, token_logprobs(text, seed, top_n), top_n)


@settings(max_examples=60, deadline=None)
@given(text=TEXTS, seed=st.integers(0, 2**64 - 1), few=st.integers(0, 20), more=st.integers(0, 20))
def test_top_n_changes_only_how_many_alternatives(text: str, seed: int, few: int, more: int) -> None:
    few, more = sorted((few, more))
    small, large = token_logprobs(text, seed, few), token_logprobs(text, seed, more)
    assert [(e["token"], e["logprob"]) for e in small] == [(e["token"], e["logprob"]) for e in large]
    assert [e["top_logprobs"] for e in small] == [e["top_logprobs"][:few] for e in large]


def test_most_tokens_are_near_certain_and_some_are_not() -> None:
    lps = [e["logprob"] for e in token_logprobs("The tide comes in and goes out twice a day. " * 40, 3)]
    near = sum(lp > -0.01 for lp in lps) / len(lps)
    assert 0.6 < near < 0.98
    assert min(lps) < -0.5


def test_seed_decides_and_nothing_else() -> None:
    text = "Same text, same seed."
    assert token_logprobs(text, 11, 5) == token_logprobs(text, 11, 5)
    assert token_logprobs(text, 11, 5) != token_logprobs(text, 12, 5)
    assert token_logprobs("", 11, 5) == []


def test_top_logprobs_read_as_a_count_of_alternatives() -> None:
    given = (None, 3, 0, 20, 25, -2, True, 2.0, "3")
    assert [alternatives_asked(v) for v in given] == [0, 3, 0, 20, 20, 0, 0, 0, 0]


@pytest.mark.parametrize("top_n", [-1, 21])
def test_top_n_out_of_range_is_refused(top_n: int) -> None:
    with pytest.raises(ValueError, match="between 0 and 20"):
        token_logprobs("x", 0, top_n)


def test_whitespace_and_non_ascii_tokens_carry_their_utf8_bytes() -> None:
    entries = token_logprobs("Zürich 日本\n\n👍🏽 ", 5, 3)
    assert [e["token"] for e in entries] == ["Züri", "ch", " 日本", "\n\n👍", "🏽", " "]
    assert entries[3]["bytes"] == [10, 10, 240, 159, 145, 141]
    check_entries("Zürich 日本\n\n👍🏽 ", entries, 3)


@settings(max_examples=100, deadline=None)
@given(text=TEXTS)
def test_token_pieces_are_the_counted_tokens(text: str) -> None:
    pieces = token_pieces(text)
    assert "".join(pieces) == text
    assert len(pieces) == count_tokens(text)
    assert all(pieces)


@settings(max_examples=100, deadline=None)
@given(text=TEXTS, chars=st.integers(1, 12))
def test_groups_follow_token_boundaries(text: str, chars: int) -> None:
    entries = token_logprobs(text, 1)
    groups = group_by_chars(entries, chars)
    assert "".join(piece for piece, _ in groups) == text
    assert [e for _, members in groups for e in members] == entries
    for piece, members in groups:
        assert piece == "".join(e["token"] for e in members)
        assert len(piece) <= chars or len(members) == 1


def test_entries_are_the_same_in_a_fresh_interpreter() -> None:
    script = (
        "import json; from synthgpt.logprobs import token_logprobs; "
        "print(json.dumps(token_logprobs('Déjà vu: the same 12 tokens, again!', 99, 20)))"
    )
    here = json.dumps(token_logprobs("Déjà vu: the same 12 tokens, again!", 99, 20))
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        assert run.stdout.strip() == here


# ------------------------------------------------------------------------------------------ Chat Completions


def chat_answer(body: dict[str, Any], mock: MockGPT | None = None) -> tuple[ModelRequest, ModelOutput]:
    req = CHAT.decode({"model": "gpt-4o", **body}, {}, {})
    return req, (mock or MockGPT(seed=0)).generate(req)


def chat_chunks(req: ModelRequest, out: ModelOutput) -> list[dict[str, Any]]:
    return [json.loads(f.data) for f in CHAT.frames(out, req) if f.data != "[DONE]"]


def streamed_logprobs(chunks: list[dict[str, Any]], index: int = 0) -> list[Any] | None:
    """The content entries a client assembles from the chunks of choice `index` (the SDK helper's way:
    the first non-null `logprobs` starts the list, later chunks extend it)."""
    assembled: list[Any] | None = None
    started = False
    for chunk in chunks:
        for c in chunk["choices"]:
            if c["index"] != index or c["logprobs"] is None:
                continue
            content = c["logprobs"]["content"]
            assert c["logprobs"]["refusal"] is None
            if not started:
                assembled, started = content, True
            elif content:
                assembled = [*(assembled or []), *content]
    return assembled


TIDES = {"messages": [{"role": "user", "content": "Tell me about tides"}]}


def test_chat_body_carries_one_entry_per_token(openai_spec: Any) -> None:
    req, out = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 3})
    body = CHAT.body(out, req)
    openai_spec("CreateChatCompletionResponse", body)
    parsed = oa.ChatCompletion.model_validate(body, strict=False)
    logprobs = body["choices"][0]["logprobs"]
    assert list(logprobs) == ["content", "refusal"] and logprobs["refusal"] is None
    check_entries(out.text, logprobs["content"], 3)
    assert logprobs["content"] == token_logprobs(out.text, _choice_seed(out, 0), 3)
    assert parsed.choices[0].logprobs is not None and parsed.choices[0].logprobs.content is not None
    assert parsed.choices[0].logprobs.content[0].top_logprobs[0].token == logprobs["content"][0]["token"]


def _choice_seed(out: ModelOutput, index: int) -> int:
    from synthgpt.seeding import derive_seed

    return derive_seed(out.id_seed, "logprobs", index)


def test_chat_body_snapshot(snapshot: Any) -> None:
    mock = MockGPT(RuleSet([Rule("fixed", m.always(), "Tides rise twice a day.")]), seed=0)
    req, out = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 2}, mock)
    assert CHAT.body(out, req) == snapshot.use_extension(JSONSnapshotExtension)


def test_chat_without_top_logprobs_gives_no_alternatives() -> None:
    req, out = chat_answer({**TIDES, "logprobs": True})
    entries = CHAT.body(out, req)["choices"][0]["logprobs"]["content"]
    assert entries and all(e["top_logprobs"] == [] for e in entries)


def test_chat_logprobs_false_is_the_plain_answer() -> None:
    req, out = chat_answer({**TIDES, "logprobs": False})
    assert CHAT.body(out, req)["choices"][0]["logprobs"] is None
    assert all(c["logprobs"] is None for ch in chat_chunks(req, out) for c in ch["choices"])


def test_asking_for_logprobs_leaves_the_answer_as_it_was() -> None:
    # logprobs describe the answer; turning them on in a test must not rewrite the expected text
    _, plain = chat_answer(TIDES)
    for asked in ({"logprobs": True}, {"logprobs": True, "top_logprobs": 5}):
        req, out = chat_answer({**TIDES, **asked})
        assert out.text == plain.text
        assert CHAT.body(out, req)["id"] == CHAT.body(plain, req)["id"]
    codec = ResponsesCodec()
    base = {"model": "gpt-4o", "input": "Tell me about tides"}
    extras = ({}, LOGPROBS, {**LOGPROBS, "top_logprobs": 3}, {"include": ["reasoning.encrypted_content"]})
    texts = {MockGPT(seed=0).generate(codec.decode({**base, **extra}, {}, {})).text for extra in extras}
    assert len(texts) == 1


@pytest.mark.parametrize("chunk_chars", [1, 4, 9, 1000])
def test_chat_stream_entries_match_their_deltas_and_fold_to_the_body(
    chunk_chars: int, openai_spec: Any
) -> None:
    mock = MockGPT(
        RuleSet([Rule("r", m.always(), g.just("Tides rise and fall, twice a day: ebb & flow."))]), seed=4
    )
    req, out = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 2, "stream": True}, mock)
    out = out.model_copy(update={"stream": out.stream.model_copy(update={"chunk_chars": chunk_chars})})
    chunks = chat_chunks(req, out)
    for ch in chunks:
        openai_spec("CreateChatCompletionStreamResponse", ch)
        oa.ChatCompletionChunk.model_validate(ch)
    first, *content, finish = [ch["choices"][0] for ch in chunks]
    assert first["logprobs"] == {"content": [], "refusal": None}
    assert finish["logprobs"] is None and finish["finish_reason"] == "stop"
    for c in content:
        entries = c["logprobs"]["content"]
        assert entries and "".join(e["token"] for e in entries) == c["delta"]["content"]
        assert len(c["delta"]["content"]) <= chunk_chars or len(entries) == 1
    body = CHAT.body(out, req)
    assert streamed_logprobs(chunks) == body["choices"][0]["logprobs"]["content"]
    assert "".join(c["delta"]["content"] for c in content) == body["choices"][0]["message"]["content"]


def test_chat_stream_bytes_are_the_same_every_time() -> None:
    req, out = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 5, "stream": True})
    first = plan_wire(CHAT.frames(out, req), out.stream, CHAT, out, req).data
    req2, out2 = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 5, "stream": True})
    assert plan_wire(ChatCodec().frames(out2, req2), out2.stream, CHAT, out2, req2).data == first


def test_chat_choices_have_their_own_entries() -> None:
    req, out = chat_answer({**TIDES, "logprobs": True, "top_logprobs": 1, "n": 2, "stream": True})
    body = CHAT.body(out, req)
    lists = [c["logprobs"]["content"] for c in body["choices"]]
    for i, entries in enumerate(lists):
        check_entries(out.choices[i].text, entries, 1)
        assert streamed_logprobs(chat_chunks(req, out), i) == entries
    assert [e["logprob"] for e in lists[0]] != [e["logprob"] for e in lists[1]]


def test_chat_tool_call_answers(openai_spec: Any) -> None:
    req, out = chat_answer(
        {"messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER], "logprobs": True}
    )
    body = CHAT.body(out, req)
    openai_spec("CreateChatCompletionResponse", body)
    # a pure tool answer has null content, so no content tokens either
    assert body["choices"][0]["message"]["content"] is None
    assert body["choices"][0]["logprobs"] == {"content": None, "refusal": None}
    chunks = chat_chunks(req, out)
    for ch in chunks:
        openai_spec("CreateChatCompletionStreamResponse", ch)
    assert chunks[0]["choices"][0]["logprobs"] == {"content": None, "refusal": None}
    assert all(ch["choices"][0]["logprobs"] is None for ch in chunks[1:])
    assert streamed_logprobs(chunks) is None


def test_chat_text_then_tool_call() -> None:
    mock = MockGPT(
        RuleSet(
            [
                Rule(
                    "r",
                    m.always(),
                    g.reply(text="Let me check.", tool_calls=[g.tool_call("get_weather", {})]),
                )
            ]
        ),
        seed=1,
    )
    req, out = chat_answer(
        {"messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER], "logprobs": True}, mock
    )
    entries = CHAT.body(out, req)["choices"][0]["logprobs"]["content"]
    assert "".join(e["token"] for e in entries) == "Let me check."
    chunks = chat_chunks(req, out)
    assert streamed_logprobs(chunks) == entries
    for ch in chunks:
        c = ch["choices"][0]
        if "tool_calls" in c["delta"]:
            assert c["logprobs"] is None


def test_chat_top_logprobs_needs_logprobs() -> None:
    with pytest.raises(RequestError) as info:
        CHAT.decode({"model": "m", **TIDES, "top_logprobs": 2}, {}, {})
    assert (info.value.message, info.value.param) == (
        "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.",
        "top_logprobs",
    )


# ------------------------------------------------------------------------------------------------ Responses


def responses_mock() -> MockGPT:
    return MockGPT(
        RuleSet(
            [
                Rule(
                    "weather",
                    m.has_tools(),
                    g.reply(text="Let me check.", tool_calls=[g.tool_call("get_weather", {"city": "Paris"})]),
                ),
                Rule("text", m.always(), g.just("Hello, world! Tides: ebb & flow.")),
            ]
        ),
        seed=7,
    )


def responses_answer(body: dict[str, Any]) -> tuple[ResponsesCodec, ModelRequest, ModelOutput]:
    codec = ResponsesCodec()
    req = codec.decode({"model": "gpt-4o", "input": "Hi", **body}, {}, {})
    return codec, req, responses_mock().generate(req)


LOGPROBS = {"include": ["message.output_text.logprobs"]}


def without_bytes(entries: list[Any]) -> list[Any]:
    return [
        {
            "token": e["token"],
            "logprob": e["logprob"],
            "top_logprobs": [{"token": t["token"], "logprob": t["logprob"]} for t in e["top_logprobs"]],
        }
        for e in entries
    ]


def test_responses_body_parts_carry_logprobs(openai_spec: Any) -> None:
    codec, req, out = responses_answer({**LOGPROBS, "top_logprobs": 2})
    body = codec.body(out, req)
    openai_spec("Response", body)
    r = oar.Response.model_validate(body)
    assert body["top_logprobs"] == 2
    [part] = body["output"][0]["content"]
    check_entries("Hello, world! Tides: ebb & flow.", part["logprobs"], 2)
    parsed: Any = r.output[0]  # the SDK's union of every output item type
    assert (
        parsed.content[0].logprobs[0].top_logprobs[1].token == part["logprobs"][0]["top_logprobs"][1]["token"]
    )


def test_responses_without_include_keep_empty_logprobs() -> None:
    codec, req, out = responses_answer({"top_logprobs": 3, "include": ["reasoning.encrypted_content"]})
    body = codec.body(out, req)
    assert body["output"][0]["content"][0]["logprobs"] == []
    assert body["top_logprobs"] == 3
    events = codec.events(out, req)
    assert all(e["logprobs"] == [] for e in events if e["type"].startswith("response.output_text"))


def test_responses_default_top_logprobs_is_zero() -> None:
    codec, req, out = responses_answer(LOGPROBS)
    entries = codec.body(out, req)["output"][0]["content"][0]["logprobs"]
    assert entries and all(e["top_logprobs"] == [] for e in entries)
    assert codec.body(out, req)["top_logprobs"] == 0


def test_responses_stream_events_carry_their_tokens(openai_spec: Any) -> None:
    codec, req, out = responses_answer({**LOGPROBS, "top_logprobs": 3, "stream": True})
    frames = codec.frames(out, req)
    events = [json.loads(f.data) for f in frames]
    for e in events:
        openai_spec(EVENT_SCHEMAS[e["type"]], e)
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    for d in deltas:
        assert d["logprobs"] and "".join(lp["token"] for lp in d["logprobs"]) == d["delta"]
        assert all(list(lp) == ["token", "logprob", "top_logprobs"] for lp in d["logprobs"])
    [done] = [e for e in events if e["type"] == "response.output_text.done"]
    part = events[-1]["response"]["output"][0]["content"][0]
    assert [lp for d in deltas for lp in d["logprobs"]] == done["logprobs"] == without_bytes(part["logprobs"])
    assert events[-1]["response"] == codec.body(out, req)
    again = ResponsesCodec()
    assert [f.data for f in again.frames(out, req)] == [f.data for f in frames]


def test_responses_text_and_function_call(openai_spec: Any) -> None:
    tool = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
    codec, req, out = responses_answer({**LOGPROBS, "tools": [tool], "stream": True})
    body = codec.body(out, req)
    openai_spec("Response", body)
    assert [o["type"] for o in body["output"]] == ["message", "function_call"]
    entries = body["output"][0]["content"][0]["logprobs"]
    assert "".join(e["token"] for e in entries) == "Let me check."
    for e in codec.events(out, req):
        openai_spec(EVENT_SCHEMAS[e["type"]], json.loads(json.dumps(e)))


@pytest.mark.parametrize(
    ("extra", "message", "param", "code"),
    [
        (
            {"top_logprobs": 21},
            "Invalid 'top_logprobs': integer above maximum value. "
            "Expected a value <= 20, but got 21 instead.",
            "top_logprobs",
            "integer_above_max_value",
        ),
        (
            {"top_logprobs": -1},
            "Invalid 'top_logprobs': integer below minimum value. Expected a value >= 0, but got -1 instead.",
            "top_logprobs",
            "integer_below_min_value",
        ),
        (
            {"top_logprobs": "2"},
            "Invalid type for 'top_logprobs': expected an integer, but got a string instead.",
            "top_logprobs",
            "invalid_type",
        ),
        (
            {"include": "message.output_text.logprobs"},
            "Invalid type for 'include': expected an array of strings, but got a string instead.",
            "include",
            "invalid_type",
        ),
        (
            {"include": [1]},
            "Invalid type for 'include[0]': expected a string, but got an integer instead.",
            "include[0]",
            "invalid_type",
        ),
    ],
)
def test_responses_logprob_fields_are_checked(
    extra: dict[str, Any], message: str, param: str, code: str
) -> None:
    with pytest.raises(RequestError) as info:
        ResponsesCodec().decode({"model": "m", "input": "Hi", **extra}, {}, {})
    assert (info.value.message, info.value.param, info.value.code) == (message, param, code)


def _nones(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(map(_nones, value.values()))
    return sum(map(_nones, value)) if isinstance(value, list) else 0


@pytest.mark.parametrize("top", [None, 3])
def test_a_logprobs_body_tells_the_encoder_every_null_it_holds(top: int | None) -> None:
    """`body_nulls` must count the `refusal: null` of a choice's logprobs too: a count short of the body's
    nulls sent every logprobs answer through a read-back of its whole text (~0.4 ms with 5 alternatives)."""
    extra = {} if top is None else {"top_logprobs": top}
    req, out = chat_answer({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
                            "logprobs": True, **extra})  # fmt: skip
    body = CHAT.body(out, req)
    assert body["choices"][0]["logprobs"]["refusal"] is None
    assert CHAT.body_nulls(body) == _nones(body) == 2
