"""A served request is journaled as the bytes it was decoded from (`codec.envelope.Wire`), not packed: decoded
again when the journal is read, it is the request the rule answered, field for field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.codec import ChatCodec, ResponsesCodec
from synthgpt.codec import envelope as envelope_module
from synthgpt.codec.envelope import Wire
from synthgpt.journal import PackedRecord, record_bytes
from synthgpt.journal.packing import unpack_output
from synthgpt.model import ModelRequest
from synthgpt.pipeline import Accepted, Answered, accept, answer
from tests.codec import decode_corpus
from tests.codec.test_decode_equivalence import _same_types

HEADERS = {"content-type": "application/json", "authorization": "Bearer sk-secret", "x-app": "wire-test"}


def _wire(req: ModelRequest) -> Wire | None:
    wire: Wire | None = req.__pydantic_private__["_wire"]  # type: ignore[index]
    return wire


def test_every_accepted_body_of_the_corpus_decodes_again_to_its_request() -> None:
    """Over every API's valid and hostile bodies: each accepted request keeps its body as its wire, and
    decoding that again gives the same request, type for type, with the same fields set and fingerprint."""
    mock, codecs = MockGPT(seed=0), decode_corpus._codecs()
    accepted = 0
    for route, raw in decode_corpus.corpus():
        codec, params = codecs[route]
        got = accept(mock, codec, raw, decode_corpus.HEADERS, params, path=route)
        if isinstance(got, Answered):
            continue
        accepted += 1
        wire = _wire(got.request)
        assert wire is not None, route
        assert wire.raw is raw and wire.codec is codec
        again = wire.decode()
        assert again == got.request, route
        _same_types(again, got.request, route)
        assert again.model_fields_set == got.request.model_fields_set
        assert again.fingerprint() == got.request.fingerprint()
    assert accepted > 1000


def _chat(text: str) -> bytes:
    return json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).encode()


def test_the_journal_keeps_a_served_request_as_its_bytes_and_reads_it_back_equal() -> None:
    mock, codec = MockGPT(seed=3), ChatCodec()
    first = _chat("Tell me about tide pools")
    answered = answer(mock, codec, first, HEADERS, {}, path="/v1/chat/completions")
    assert answered.status == 200 and answered.generation is not None
    live = answered.generation.record
    kept = mock.journal._records[0]
    assert isinstance(kept, PackedRecord)
    assert kept.wire is not None and kept.wire.raw is first  # the bytes received, not a copy
    assert unpack_output(kept.payload) == live.output  # only the answer was packed
    header_bytes = sum(len(k) + len(v) + 160 for k, v in kept.wire.headers.pairs)  # credentials dropped
    assert record_bytes(kept) == len(kept.payload) + 256 + len(first) + 96 + header_bytes
    back = mock.journal.list()[0]
    assert back == live and back.request is not live.request
    _same_types(back.request, live.request, "request")
    assert back.request.header("authorization") is None and back.request.header("x-app") == "wire-test"
    rule = next(r for r in mock.rules if r.name == live.rule)
    assert rule._calls[0] is kept and rule.calls[0] == live  # the rule's history holds the same packed record


def test_a_request_answered_as_a_stream_by_its_route_decodes_again_as_one() -> None:
    """`render --stream` (and Gemini's stream route) ask for a stream whatever the body says."""
    got = accept(MockGPT(seed=0), ChatCodec(), _chat("stream it"), HEADERS, {}, path="/v1/chat/completions",
                 stream=True)  # fmt: skip
    assert isinstance(got, Accepted) and got.request.stream
    wire = _wire(got.request)
    assert wire is not None and wire.stream and wire.decode() == got.request


def test_a_continued_responses_request_is_packed_whole() -> None:
    """A request whose decoding read the Responses store is not its bytes alone: packed as before."""
    mock, codec = MockGPT(seed=3), ResponsesCodec()
    body = {"model": "gpt-4o", "input": "Name a color"}
    one = answer(mock, codec, json.dumps(body).encode(), HEADERS, {}, path="/v1/responses")
    previous = json.loads(one.body)["id"]
    continued = {**body, "input": "Another", "previous_response_id": previous}
    two = answer(mock, codec, json.dumps(continued).encode(), HEADERS, {}, path="/v1/responses")
    assert one.generation is not None and two.generation is not None
    assert _wire(one.generation.request) is not None
    assert _wire(two.generation.request) is None
    again = accept(mock, codec, json.dumps(continued).encode(), HEADERS, {}, path="/v1/responses")
    assert isinstance(again, Accepted) and not again.replayable and _wire(again.request) is None
    live = two.generation.record
    first, second = mock.journal._records[0], mock.journal._records[1]
    assert isinstance(first, PackedRecord) and first.wire is not None
    assert isinstance(second, PackedRecord) and second.wire is None
    back = mock.journal.list()[1]
    assert back == live and len(back.request.messages) == 3  # the earlier turn, as the store gave it


def _accepted(body: bytes, headers: dict[str, str] = HEADERS) -> ModelRequest:
    got = accept(MockGPT(seed=0), ChatCodec(), body, headers, {}, path="/v1/chat/completions")
    assert isinstance(got, Accepted)
    return got.request


@pytest.mark.parametrize("update", [{"stream": True}, {"api": "messages"}, {"model": "other"}])
def test_a_copy_with_changes_keeps_no_wire(update: dict[str, Any]) -> None:
    """Its bytes decode to the original, not to the copy (`MockGPT.resolve(..., api=...)` copies so)."""
    req = _accepted(_chat("hello there"))
    assert _wire(req) is not None
    copied = req.model_copy(update=update)
    assert _wire(copied) is None and _wire(req) is not None
    assert _wire(req.model_copy()) is _wire(req)  # an identical copy decodes alike


def test_a_request_resolved_as_another_api_is_journaled_as_itself() -> None:
    mock = MockGPT(seed=0)
    req = _accepted(_chat("hello there"))
    record = mock.resolve(req, api="messages").record
    kept = mock.journal._records[0]
    assert isinstance(kept, PackedRecord) and kept.wire is None
    assert mock.journal.list()[0].request == record.request and record.request.api == "messages"


def test_requests_with_the_same_headers_hold_one_copy_of_them() -> None:
    one, two = _accepted(_chat("a")), _accepted(_chat("b"))
    wire_one, wire_two = _wire(one), _wire(two)
    assert wire_one is not None and wire_two is not None and wire_one.headers is wire_two.headers
    bound = envelope_module._headers_of.cache_info().maxsize
    assert bound is not None
    for i in range(bound + 10):  # headers come from clients: the sets kept are bounded
        _accepted(_chat("c"), {**HEADERS, "x-n": str(i)})
    assert envelope_module._headers_of.cache_info().currsize <= bound


def test_a_wire_weighs_its_headers_for_the_byte_bound() -> None:
    """Held once when equal, the headers are counted all the same: a client may send large ones, which
    the packed request counted too."""
    small = _wire(_accepted(_chat("a")))
    large = _wire(_accepted(_chat("a"), {**HEADERS, "x-large": "v" * 50_000}))
    assert small is not None and large is not None
    assert large.nbytes - small.nbytes == len("x-large") + 50_000 + 160
