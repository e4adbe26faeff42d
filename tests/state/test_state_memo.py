"""`--state-memo-us N`: an answer that took at least N µs to draw is kept in Redis, and another replica
replays its bytes instead of drawing it; cheap answers and call-order-dependent ones are never kept."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bench.cases import NESTED_SCHEMA
from synthgpt.state import RedisState
from tests.state._redis import RedisServer, Replicas

RULES = """\
rules:
  - name: flaky
    match: {last_user: flaky}
    sequence:
      - output: {text: step one}
      - output: {text: step two}
  - name: default
    match: always
    generate: {summary: {max_chars: 80}}
"""
FORMAT = {"type": "json_schema", "json_schema": {"name": "order", "strict": True, "schema": NESTED_SCHEMA}}
ASK = [{"role": "user", "content": "an order please"}]
SCHEMA = {"model": "gpt-4o", "messages": ASK, "response_format": FORMAT}
FLAKY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "flaky"}]}


class Pair(Replicas):
    """Two replicas with `--state-memo-us` and no memo of their own: only the shared one replays."""

    def __init__(self, url: str, memo_us: int, rules: Path) -> None:
        super().__init__(rules, url, 2, state_memo_us=memo_us, memo_entries=0)

    def memo(self, i: int) -> object:
        state = self.apps[i].state.state_store
        assert isinstance(state, RedisState) and state.memo is not None
        return state.memo


@pytest.fixture
def pair_of(redis_server: RedisServer, tmp_path: Path) -> Iterator[type[Pair]]:
    made: list[Pair] = []
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)

    def make(memo_us: int) -> Pair:
        made.append(Pair(redis_server.url, memo_us, rules))
        return made[-1]

    yield make  # type: ignore[misc]
    for p in made:
        p.close()


def memo_keys(url: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match="synthgpt:memo:*"))
    finally:
        client.close()


def test_a_second_replica_replays_an_expensive_answer(pair_of: type[Pair], redis_server: RedisServer) -> None:
    pair = pair_of(1)  # every answer taking 1 µs or more: all of them
    a, b = pair.clients
    first = a.post("/v1/chat/completions", json=SCHEMA)
    assert first.status_code == 200, first.text
    for _ in range(100):  # kept in the background: nobody waits for it
        if memo_keys(redis_server.url):
            break
        time.sleep(0.05)
    assert len(memo_keys(redis_server.url)) == 1
    again = b.post("/v1/chat/completions", json=SCHEMA)
    assert (again.status_code, again.content) == (200, first.content)  # the same bytes, not drawn again
    assert again.headers["x-request-id"] == first.headers["x-request-id"]
    assert (pair.memo(0).hits, pair.memo(1).hits) == (0, 1)  # type: ignore[attr-defined]
    calls = b.get("/_synthgpt/calls").json()
    assert [c["rule"] for c in calls] == ["default", "default"]  # the replay is journaled as a call
    assert json.loads(again.content)["choices"][0]["message"]["content"]


def test_cheap_answers_and_call_order_dependent_ones_are_never_kept(
    pair_of: type[Pair], redis_server: RedisServer
) -> None:
    pair = pair_of(10**9)  # nothing takes 1000 s to draw
    a, b = pair.clients
    for client in (a, b, a):
        assert client.post("/v1/chat/completions", json=SCHEMA).status_code == 200
    assert memo_keys(redis_server.url) == []
    cheap = pair_of(1)
    a, b = cheap.clients
    steps = [c.post("/v1/chat/completions", json=FLAKY).json()["choices"][0]["message"]["content"]
             for c in (a, b)]  # fmt: skip
    assert steps == ["step one", "step two"]  # a sequence is drawn every time, never replayed
    assert memo_keys(redis_server.url) == []
