"""A batched SQLite journal (the server's): the calls of one pass of the event loop are written together,
before any of their answers is sent."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path

import httpx

from synthgpt import MockGPT
from synthgpt.journal import journal_written
from synthgpt.journal.records import record_from_dict, record_json, record_to_dict
from synthgpt.journal.sqlite import SQLiteJournal

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


def _ask(mock: MockGPT, text: str) -> None:
    mock.generate({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}, api="chat")


def _rows(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:  # another connection: what another process would read
        return conn.execute("SELECT idx, record FROM calls ORDER BY idx").fetchall()


def _batched(tmp_path: Path, seed: int = 1) -> tuple[MockGPT, SQLiteJournal, list[str]]:
    journal = SQLiteJournal(tmp_path / "j.sqlite", batched=True)
    statements: list[str] = []
    journal._conn().set_trace_callback(statements.append)  # this thread's connection: the loop's
    mock = MockGPT(seed=seed)
    mock.journal = journal
    return mock, journal, statements


def test_the_calls_of_one_pass_are_written_together_at_the_next(tmp_path: Path) -> None:
    mock, journal, statements = _batched(tmp_path)

    async def main() -> None:
        for i in range(5):  # one pass: no await between the calls
            _ask(mock, f"q{i}")
        drafted = next(r for r in mock.rules if r.name == "default")
        assert _rows(tmp_path / "j.sqlite") == []  # nothing in the file yet
        assert drafted.calls == []  # a draft reaches the rule's history as it is numbered
        assert journal.unwritten() is not None
        statements.clear()
        assert await journal_written(journal) is None
        assert journal.unwritten() is None
        # one transaction; index 0 is a multiple of the pruning period, so the prune runs in it too
        assert [s.split()[0] for s in statements] == ["BEGIN", "SELECT", *["INSERT"] * 5, "DELETE", "COMMIT"]
        assert [r.index for r in drafted.calls] == [0, 1, 2, 3, 4]

    asyncio.run(main())
    rows = _rows(tmp_path / "j.sqlite")
    kept = journal.list()
    assert [idx for idx, _ in rows] == [0, 1, 2, 3, 4]
    assert [text for _, text in rows] == [record_json(r) for r in kept]
    # the same records, rows and numbers as an unbatched journal of the same calls
    plain = MockGPT(seed=1)
    plain.journal = SQLiteJournal(tmp_path / "plain.sqlite")
    for i in range(5):
        _ask(plain, f"q{i}")

    def same(r: object) -> dict[str, object]:
        return {k: v for k, v in record_to_dict(r).items() if k != "duration_ms"}  # type: ignore[arg-type]

    assert [same(r) for r in plain.journal.list()] == [same(r) for r in kept]


def test_a_read_writes_what_waits_first_and_a_call_off_the_loop_comes_after_it(tmp_path: Path) -> None:
    mock, journal, _ = _batched(tmp_path)

    async def main() -> None:
        _ask(mock, "on the loop 0")
        _ask(mock, "on the loop 1")
        assert journal.count() == 2  # a read in this process: the waiting calls are written first
        assert [idx for idx, _ in _rows(tmp_path / "j.sqlite")] == [0, 1]
        _ask(mock, "on the loop 2")
        thread = threading.Thread(target=_ask, args=(mock, "in a thread"))
        thread.start()
        thread.join(10)
        assert await journal_written(journal) is None

    asyncio.run(main())
    kept = journal.list()
    assert [r.request.messages[-1].content for r in kept] == [
        "on the loop 0", "on the loop 1", "on the loop 2", "in a thread"
    ]
    assert [r.index for r in kept] == [0, 1, 2, 3]


def test_without_a_running_loop_a_call_is_written_at_once(tmp_path: Path) -> None:
    mock, journal, _ = _batched(tmp_path)
    _ask(mock, "sync")
    assert journal.unwritten() is None
    assert [idx for idx, _ in _rows(tmp_path / "j.sqlite")] == [0]


def test_a_stream_finished_while_its_call_waits_is_written_as_it_ended(tmp_path: Path) -> None:
    mock, journal, _ = _batched(tmp_path)

    async def main() -> None:
        out = mock.resolve({**CHAT, "stream": True}, api="chat")
        assert out.record.outcome == "streaming"
        mock.finish(out.record, None, cancelled=True, frames_sent=3)  # the client left after three frames
        assert await journal_written(journal) is None

    asyncio.run(main())
    (record,) = journal.list()
    assert (record.outcome, record.frames_sent) == ("cancelled", 3)


def test_a_batch_the_file_refuses_is_the_error_of_every_answer_waiting_for_it(tmp_path: Path) -> None:
    from synthgpt.server import create_app

    journal = SQLiteJournal(tmp_path / "j.sqlite", batched=True)
    mock = MockGPT(seed=1)
    mock.journal = journal

    async def main() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=create_app(mock))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            assert (await client.post("/v1/chat/completions", json=CHAT)).status_code == 200
            journal._conn().execute("PRAGMA query_only = ON")  # the file turns read-only
            return list(await asyncio.gather(*(
                client.post("/v1/chat/completions", json={**CHAT, "model": f"gpt-4o-{i}"}) for i in range(3)
            )))  # fmt: skip

    answers = asyncio.run(main())
    assert [a.status_code for a in answers] == [500, 500, 500]
    assert [a.json()["error"]["type"] for a in answers] == ["server_error"] * 3
    assert all("Traceback" not in a.text for a in answers)
    journal._conn().execute("PRAGMA query_only = OFF")
    assert [r.model for r in journal.list()] == ["gpt-4o"]  # the refused calls are not in the file


def test_the_server_sends_an_answer_only_once_its_call_is_in_the_file(tmp_path: Path) -> None:
    from synthgpt.server import create_app

    journal = SQLiteJournal(tmp_path / "j.sqlite", batched=True)
    mock = MockGPT(seed=1)
    mock.journal = journal
    seen: list[int] = []

    async def main() -> None:
        transport = httpx.ASGITransport(app=create_app(mock))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

            async def ask(i: int) -> None:
                body = {**CHAT, "messages": [{"role": "user", "content": f"call {i}"}]}
                answer = await client.post("/v1/chat/completions", json=body)
                assert answer.status_code == 200
                # read as another process would: the row keeps the request as its body
                rows = _rows(tmp_path / "j.sqlite")
                asked = [record_from_dict(json.loads(text)).request for _, text in rows]
                assert any(r.last_user == f"call {i}" for r in asked)
                seen.append(i)

            await asyncio.gather(*(ask(i) for i in range(12)))
            for _ in range(3):  # the memo replays the third sighting: journaled before it is sent too
                await ask(100)

    asyncio.run(main())
    assert sorted(seen) == [*range(12), 100, 100, 100]
    assert [r.index for r in journal.list()] == list(range(15))
