"""`stream.wire_chunk_bytes` on long answers: the scheduler writes thousands of undelayed writes in a row
(it used to recurse once per write and died with RecursionError past ~300, cutting the stream)."""

from __future__ import annotations

import httpx
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.testing import LiveServer

BODY = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "long"}]}


@pytest.mark.parametrize(("chars", "chunk", "frame_chars"), [(600, 64, 4), (100_000, 7, 400)])
def test_a_long_answer_in_small_wire_chunks_arrives_whole(chars: int, chunk: int, frame_chars: int) -> None:
    text = ("synthgpt streams every byte " * (chars // 28 + 1))[:chars]
    whole = MockGPT(seed=1, rules=[Rule("long", m.always(), text, stream={"chunk_chars": frame_chars})])
    plan = {"chunk_chars": frame_chars, "wire_chunk_bytes": chunk}
    cut = MockGPT(seed=1, rules=[Rule("long", m.always(), text, stream=plan)])
    with LiveServer(whole) as a, LiveServer(cut) as b:
        expected = httpx.post(a.url + "/v1/chat/completions", json=BODY, timeout=30).content
        pieces: list[bytes] = []
        with httpx.stream("POST", b.url + "/v1/chat/completions", json=BODY, timeout=30) as reply:
            assert reply.status_code == 200
            pieces.extend(reply.iter_raw())
    got = b"".join(pieces)
    assert got.endswith(b"data: [DONE]\n\n")
    assert got == expected
    assert len(got) > chars
