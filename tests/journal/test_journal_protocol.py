"""Every journal is a `CallJournal` and filters, pages and counts alike (the seam a new store implements):
in memory, SQLite, and Redis (a real redis-server, `tests/state/_redis.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.journal import CallJournal, Journal, MemoryJournal, SQLiteJournal
from synthgpt.journal.query import CallQuery
from synthgpt.state import RedisState
from tests.state._redis import REDIS, RedisServer


def _filled(journal: CallJournal) -> MockGPT:
    mock = MockGPT(seed=3)
    mock.journal = journal
    asks = [("gpt-4o", "hi"), ("gpt-4o-mini", "hello"), ("claude-x", "weather?"), ("gpt-4o", "yo")]
    for model, text in asks:
        mock.generate({"model": model, "messages": [{"role": "user", "content": text}]})
    return mock


@pytest.fixture(params=["memory", "sqlite", "redis"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CallJournal]:
    if request.param == "memory":
        yield Journal(10)
    elif request.param == "sqlite":
        yield SQLiteJournal(tmp_path / "calls.sqlite", maxlen=10)
    else:
        if REDIS is None:
            pytest.skip("redis-server is not installed (apt-get install -y redis-server; make test does)")
        server = RedisServer(tmp_path)
        server.start()
        state = RedisState(server.url)
        try:
            yield state.journal(10)
        finally:
            state.close()
            server.stop()


def test_every_journal_is_a_call_journal(journal: CallJournal) -> None:
    assert isinstance(journal, CallJournal)
    assert MemoryJournal is Journal


def test_query_and_count_filter_by_globs_and_page(journal: CallJournal) -> None:
    _filled(journal)
    assert journal.count() == len(journal) == journal.total == 4
    assert journal.count(model="gpt-4o*") == 3
    assert [r.index for r in journal.query(model="gpt-4o*")] == [0, 1, 3]
    assert [r.index for r in journal.query(model="gpt-4o*", offset=1, limit=1)] == [1]
    assert [r.request.model for r in journal.query(model="gpt-4o")] == ["gpt-4o", "gpt-4o"]
    assert journal.count(rule="nope", api="chat") == 0 and journal.query(api="embeddings") == []
    page, total = CallQuery.from_params({"model": "gpt-*", "offset": "2", "limit": "5"}).run(journal)
    assert ([r.index for r in page], total) == ([3], 3)
    journal.clear()
    assert (journal.count(), journal.total) == (0, 4)
