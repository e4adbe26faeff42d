"""The syrupy extensions: `.sse` transcripts and sorted-key `.json`, with masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.codec.base import Frame
from synthgpt.testing.snapshots import (
    JSONSnapshotExtension,
    SSESnapshotExtension,
    apply_mask,
    normalize_sse,
    to_jsonable,
)

RAW = (
    b'data: {"id":"chatcmpl-1","created":1,"choices":[{"delta":{"content":"Hi"}}]}\r\n\r\n'
    b": ping\r\n\r\n"
    b"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":3}}\n\n"
    b"data: [DONE]\n\n"
)


def test_normalised_transcript_one_frame_per_block() -> None:
    assert normalize_sse(RAW) == (
        'data: {"id":"chatcmpl-1","created":1,"choices":[{"delta":{"content":"Hi"}}]}\n\n'
        ": ping\n\n"
        'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":3}}\n\n'
        "data: [DONE]\n\n"
    )


def test_masks_by_name_anywhere_and_by_dotted_path() -> None:
    text = normalize_sse(RAW, mask=["id", "created", "usage.output_tokens"])
    assert text.splitlines()[0] == (
        'data: {"id":"<masked>","created":"<masked>","choices":[{"delta":{"content":"Hi"}}]}'
    )
    assert '"usage":{"output_tokens":"<masked>"}' in text
    assert apply_mask({"a": [{"b": 1}, {"b": 2}]}, ["a.1"]) == {"a": [{"b": 1}, "<masked>"]}


def test_pretty_payloads_stay_valid_sse() -> None:
    text = normalize_sse(b'data: {"a":1,"b":[1,2]}\n\n', pretty=True)
    assert text.split("\n") == [
        "data: {", 'data:   "a": 1,', 'data:   "b": [', "data:     1,", "data:     2", "data:   ]", "data: }",
        "",
        "",
    ]
    joined = "\n".join(line.removeprefix("data: ") for line in text.strip().split("\n"))
    assert json.loads(joined) == {"a": 1, "b": [1, 2]}


def test_accepts_frames_chunks_and_text() -> None:
    frames = [Frame('{"x":1}'), Frame('{"type":"ping"}', "ping")]
    expected = 'data: {"x":1}\n\nevent: ping\ndata: {"type":"ping"}\n\n'
    assert normalize_sse(frames) == expected
    assert normalize_sse([b'data: {"x"', b':1}\n\nevent: ping\ndata: {"type":"ping"}\n\n']) == expected
    assert normalize_sse(expected) == expected
    assert normalize_sse(b'data: {"x":1}\n\ndata: {"cut') == 'data: {"x":1}\n\ndata: {"cut\n\n'
    with pytest.raises(TypeError, match="cannot snapshot int as SSE"):
        normalize_sse(42)


def test_json_form_of_records_drops_real_time() -> None:
    mock = MockGPT([Rule("r", m.always(), "ok")], seed=1)
    mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, api="chat")
    data = to_jsonable(mock.records[-1])
    assert "duration_ms" not in data
    assert data["rule"] == "r" and data["output"]["choices"][0]["parts"][0]["text"] == "ok"
    with pytest.raises(TypeError, match="cannot snapshot object as JSON"):
        to_jsonable(object())


def test_sse_snapshot(snapshot: Any) -> None:
    assert snapshot(extension_class=SSESnapshotExtension.with_mask(["id", "created"])) == RAW


def test_json_snapshot_of_a_record(snapshot: Any) -> None:
    mock = MockGPT([Rule("r", m.last_user(regex="(?P<who>\\w+)$"), "Hello there")], seed=1)
    mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi bob"}]}, api="chat")
    assert mock.records[-1] == snapshot(extension_class=JSONSnapshotExtension.with_options(mask=["seed"]))


def test_json_snapshot_sorts_keys(snapshot: Any) -> None:
    body = {"z": 1, "a": {"y": [3, {"d": 1, "c": 2}], "b": None}}
    assert body == snapshot(extension_class=JSONSnapshotExtension)
