"""The request path's shortcuts give exactly what the plain forms give: seeds, ids, an unpaced stream's
single write, the cached Faker fields of templates."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest
import xxhash

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.seeding import canonical_json, derive_seed, token_from_seed
from synthgpt.server import create_app

HEX = "0123456789abcdef"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def plain_derive_seed(*parts: object) -> int:
    h = xxhash.xxh3_64()  # updated part by part: the one-shot hash of the joined bytes must agree
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode()
        h.update(struct.pack("<I", len(data)))
        h.update(data)
    return h.intdigest()


def plain_token(seed: int, length: int, alphabet: str) -> str:
    digests = [xxhash.xxh3_128(str(seed).encode(), seed=i).digest() for i in range(length // 16 + 1)]
    return "".join(alphabet[b % len(alphabet)] for digest in digests for b in digest)[:length]


def test_seeds_and_ids_are_xxh3_as_specified() -> None:
    """The hash is XXH3 itself: a seed of no parts hashes no bytes, whose XXH3-64 is its specification's
    test value (the ids' XXH3-128 blocks are checked against `plain_token` below)."""
    assert derive_seed() == 0x2D06800538D394C2


def test_seeds_and_ids_match_the_plain_algorithms() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        seed = rng.getrandbits(64)
        parts = (seed, "label", b"\x00raw", rng.random(), "é" * rng.randrange(5))
        assert derive_seed(*parts) == plain_derive_seed(*parts)
        n = rng.randrange(0, 70)
        assert token_from_seed(seed, n, HEX) == plain_token(seed, n, HEX)
        assert token_from_seed(seed, n) == plain_token(seed, n, BASE62)
    value = {"b": [1, 2.5, None], "a": "ü", "c": {"z": 1, "y": object}}
    assert canonical_json(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def test_prefixed_seeds_and_the_answer_request_id_match_the_plain_algorithms() -> None:
    """`seed_after(seed_prefix(*a), data)` is `derive_seed(*a, data)`; the request id of an accepted
    request (its leading parts encoded once per engine seed and API) is `request_id`'s."""
    from synthgpt.pipeline import answer_request_id, request_id
    from synthgpt.seeding import seed_after, seed_prefix

    rng = random.Random(11)
    for _ in range(2000):
        seed = rng.getrandbits(rng.choice((1, 8, 64)))
        api = rng.choice(("chat", "responses", "messages", "embeddings", "é" * rng.randrange(4)))
        fingerprint = rng.getrandbits(64)
        leading = (seed, "label", b"\x00raw", rng.random(), api)[: rng.randrange(0, 6)]
        data = rng.choice((b"", b"%d" % fingerprint, "ü".encode() * rng.randrange(9)))
        assert seed_after(seed_prefix(*leading), data) == plain_derive_seed(*leading, data)
        assert seed_after(b"", data) == derive_seed(data)
        rid = answer_request_id(seed, api, fingerprint)
        assert rid == request_id(seed, api, fingerprint)
        assert rid == "req_" + plain_token(plain_derive_seed(seed, "request-id", api, fingerprint), 32, HEX)
    assert answer_request_id(True, "chat", 5) == request_id(True, "chat", 5) != request_id(1, "chat", 5)


def test_derive_seed_fast_paths_for_exact_ints_and_strs_match_the_plain_algorithm() -> None:
    import enum

    class Text(str):
        def __str__(self) -> str:
            return "other"

    class Number(enum.IntEnum):
        ONE = 1

    rng = random.Random(11)
    odd: list[object] = [True, False, Number.ONE, Text("x"), bytearray(b"ab"), None, 0, -1, -(2**70), 2**200,
                         "", b"", "x" * 255, "x" * 256, "é" * 128, b"\xff" * 300, 1.0, (1, "a")]  # fmt: skip
    for _ in range(3000):
        k = rng.randrange(0, 5)
        parts = [
            rng.choice(odd) if rng.random() < 0.3 else
            rng.getrandbits(rng.randrange(1, 80)) * rng.choice((1, -1)) if rng.random() < 0.5 else
            "".join(rng.choice("ab é😀\x00") for _ in range(rng.randrange(0, 300)))
            for _ in range(k)
        ]  # fmt: skip
        assert derive_seed(*parts) == plain_derive_seed(*parts), parts


async def test_an_unpaced_stream_is_one_body_write_without_content_length() -> None:
    app = create_app(MockGPT(), memo_entries=0)
    body = json.dumps({"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    sent: list[MutableMapping[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body.encode(), "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
        "root_path": "", "headers": [(b"content-type", b"application/json"),
                                     (b"content-length", str(len(body)).encode())],
        "server": ("t", 80), "client": ("c", 1),
    }  # fmt: skip
    await app(scope, receive, send)
    assert [msg["type"] for msg in sent] == ["http.response.start", "http.response.body"]
    assert not any(k == b"content-length" for k, _ in sent[0]["headers"])
    assert sent[1]["body"].endswith(b"data: [DONE]\n\n") and sent[1]["more_body"] is False


async def test_template_fake_fields_are_cached_by_value_and_type() -> None:
    rules = [Rule("t", m.always(), g.template("{{ fake('pyint', max_value=1) }}|{{ fake('pybool') }}"))]
    app = create_app(MockGPT(rules, seed=4))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        texts = []
        for q in ("a", "b", "a"):
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": q}]}
            texts.append((await c.post("/v1/chat/completions", json=body)).json()["choices"][0]["message"])
    ask_b = {"model": "gpt-4o", "messages": [{"role": "user", "content": "b"}]}
    fresh = MockGPT(rules, seed=4).generate(ask_b)
    assert texts[0] == texts[2] and texts[1]["content"] == fresh.text


# Text deltas written from a template (`codec/runs.py`) against `json.dumps`: tests/codec/test_frame_runs.py


def test_shared_response_objects_and_one_shot_stream_bytes_are_what_the_plain_forms_give() -> None:
    from synthgpt.codec.base import Frame, render_frame
    from synthgpt.codec.common import dumps
    from synthgpt.codec.openai_responses.encode import _response_frame
    from synthgpt.codec.sse import _render_all

    shell = {"id": "resp_1", "status": "in_progress", "output": [], "text": {"format": {"type": "text"}},
             "error": None, "temperature": 1.0}  # fmt: skip
    # the stream's events carrying a response object are wrapped around its one text (the whole streams,
    # tiny floats and `null`s included: tests/codec/test_responses_templates.py)
    for seq, kind in enumerate(("response.created", "response.in_progress", 'odd "kind"\u2028')):
        event = {"type": kind, "response": shell, "sequence_number": seq}
        assert _response_frame(kind, dumps(shell), seq).data == dumps(event)
    from synthgpt.codec.anthropic.encode import _render
    from synthgpt.codec.anthropic.encode import _render_events as render_messages

    messages: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_01", "stop_reason": None, "stop_sequence": None}},
        {"type": "ping"}, {"type": "content_block_stop", "index": 0},
        {"type": "content_block_stop", "index": True},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "null"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {}},
        {"type": "message_stop"}, {"type": "other", "x": 1e-05},
    ]  # fmt: skip
    assert render_messages(messages) == [_render(e) for e in messages] == [dumps(e) for e in messages]
    frames = [Frame('{"a":"é\u2028"}'), Frame("{}", "message_stop"), Frame("[DONE]", terminal=True)]
    assert _render_all(frames) == b"".join(render_frame(f) for f in frames)


def test_count_tokens_is_the_number_of_token_matches() -> None:
    from synthgpt.tokens import _TOKEN, count_tokens

    rng = random.Random(3)
    chars = " \t\nabcXYZ019_é,.!-—日本😀\u00a0"
    for _ in range(3000):
        text = "".join(rng.choice(chars) for _ in range(rng.randrange(0, 40)))
        assert count_tokens(text) == len(_TOKEN.findall(text))


def test_packed_journal_records_come_back_equal_with_their_field_sets() -> None:
    from synthgpt.model import ModelRequest

    mock = MockGPT(seed=2)
    asks = [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": f"hello {i}"}], "max_output_tokens": 30}
        for i in range(20)
    ]
    outputs = [mock.generate(a) for a in asks]
    # every record is kept packed, and the rule's own history holds the same ones: nothing keeps the live
    # objects
    rule = mock.rules["default"]
    assert [type(c).__name__ for c in rule._calls] == ["PackedRecord"] * 20
    assert all(c is k for c, k in zip(rule._calls, mock.journal._records, strict=True))
    assert rule.calls == mock.journal.list() and rule.last == mock.journal.list()[-1]
    for record, ask, out in zip(mock.journal.list(), asks, outputs, strict=True):
        asked = ModelRequest.from_dict(ask)
        assert record.request == asked and record.output == out
        assert record.request.model_fields_set == asked.model_fields_set
        assert record.request.messages[0].model_fields_set == asked.messages[0].model_fields_set
        assert record.output.choices[0].model_fields_set == out.choices[0].model_fields_set
        assert record.request.fingerprint() == asked.fingerprint()
        assert record.request.model_dump(exclude_unset=True) == asked.model_dump(exclude_unset=True)
        assert record.output.model_dump(exclude_unset=True) == out.model_dump(exclude_unset=True)


def test_a_rule_history_holds_the_journals_records_of_its_own_calls() -> None:
    from synthgpt import Rule, RuleSet
    from synthgpt import matchers as m

    # two rules taking turns: each rule's history holds the journal's packed records of its own calls
    mock = MockGPT(RuleSet([Rule("even", m.last_user(contains="even"), "E"), Rule("odd", m.always(), "O")]))
    for i in range(40):
        # distinct texts: a request repeated verbatim is replayed from the engine's memo (`engine.memo`)
        text = f"{'even' if i % 2 == 0 else 'odd'} {i}"
        mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": text}]})
    journal = mock.journal.list()
    kept = list(mock.journal._records)
    for name in ("even", "odd"):
        rule = mock.rules[name]
        own = [k for k in kept if k.rule == name]
        assert len(rule._calls) == 20 and all(c is k for c, k in zip(rule._calls, own, strict=True))
        assert rule.calls == [r for r in journal if r.rule == name]
    mock.journal = type(mock.journal)(100)  # a new journal packs for the rules as well
    for i in range(20):
        mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": f"odd again {i}"}]})
    calls = mock.rules["odd"]._calls
    assert len(calls) == 40 and all(type(c).__name__ == "PackedRecord" for c in calls)
    assert all(c is k for c, k in zip(list(calls)[20:], mock.journal._records, strict=True))


def test_replayed_calls_share_one_packed_answer() -> None:
    # a replay shares its request and output with the answer kept for replays: packed once for all of them
    mock = MockGPT(seed=2)
    ask = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}
    drawn = mock.resolve(ask).record
    rule = mock.rules[drawn.rule]
    for _ in range(30):
        mock.replay(rule, drawn)
    assert [type(c).__name__ for c in rule._calls] == ["PackedRecord"] * 31
    payloads = [r.payload for r in mock.journal._records]  # type: ignore[union-attr]
    assert len({id(p) for p in payloads[1:]}) == 1 and payloads[0] == payloads[1]
    assert rule.calls == mock.journal.list()


def test_raw_headers_are_what_starlette_builds() -> None:
    from starlette.responses import Response

    from synthgpt.server.responses import EventStreamBody, JsonBody, raw_headers

    cases: list[dict[str, str]] = [
        {}, {"x-request-id": "req_1", "openai-processing-ms": "41", "openai-version": "2020-10-01"},
        {"X-Request-ID": "a", "Cache-Control": "no-cache"}, {"content-type": "application/x-ndjson"},
        {"Content-Length": "3", "retry-after": "2"}, {"CONTENT-TYPE": "text/plain", "content-length": "9"},
        {"x-note": "caf\u00e9"},
    ]  # fmt: skip
    for headers in cases:
        for status in (200, 204, 304, 101, 404, 500):
            for media in ("application/json", "text/event-stream", "text/html; charset=latin-1"):
                for body in (b"", b"{}", None):
                    plain = Response(status_code=status, headers=headers, media_type=media)
                    if body is None:
                        del plain.body
                        plain.init_headers(headers)
                    else:
                        plain = Response(body, status_code=status, headers=headers, media_type=media)
                    ours = raw_headers(headers, status, None if body is None else len(body), media)
                    assert ours == plain.raw_headers, (headers, status, media, body)
        assert JsonBody(b"{}", 200, headers).raw_headers == Response(
            b"{}", headers=headers, media_type="application/json"
        ).raw_headers
        stream = Response(headers=headers, media_type="text/event-stream")
        del stream.body
        stream.init_headers(headers)
        assert EventStreamBody(b"data: 1\n\n", headers).raw_headers == stream.raw_headers
    with pytest.raises(UnicodeEncodeError):
        raw_headers({"x-bad": "\u2028"}, 200, 0, "application/json")


def test_nones_counts_the_none_values_of_a_body_and_its_named_members() -> None:
    from synthgpt.codec.common import nones

    class Equal:  # equal to everything: must not be counted as a None
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    rng = random.Random(2)
    pool: list[Any] = [None, 0, "", [], {}, Equal(), False, {"x": None}, {"x": None, "y": None}]
    for _ in range(3000):
        body = {f"k{i}": rng.choice(pool) for i in range(rng.randrange(0, 8))}
        inner = rng.sample(sorted(body), rng.randrange(0, len(body) + 1))
        plain = sum(v is None for v in body.values())
        plain += sum(v is None for k in inner if type(body[k]) is dict for v in body[k].values())
        assert nones(body, *inner) == plain
