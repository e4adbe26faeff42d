"""`WorkersJournal` across processes: calls kept in each worker's memory, numbered from one shared counter,
gathered into the SQLite file by whichever worker reads (`synthgpt.journal.workers`)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import sqlite3
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.journal.workers import WorkersJournal

pytestmark = pytest.mark.slow

_CTX = multiprocessing.get_context("spawn")  # as uvicorn starts its workers


def _ask(mock: MockGPT, text: str) -> int:
    record = mock.resolve({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).record
    return record.index


def _worker(path: str, orders: Connection) -> None:
    """Another worker: asks what it is told and reports the index; listens for gathers meanwhile."""
    mock = MockGPT(seed=1)
    journal = WorkersJournal(path)
    mock.journal = journal
    journal.start()
    orders.send("ready")
    while True:
        text = orders.recv()
        if text is None:
            break
        if isinstance(text, tuple):  # ("mixed", n): n calls, the journal read after every fifth
            _, n = text
            for i in range(n):
                _ask(mock, f"theirs {i}")
                if i % 5 == 4:
                    journal.query()
            orders.send(n)
            continue
        orders.send(_ask(mock, text))
    journal.close()


class _Other:
    def __init__(self, path: Path) -> None:
        self.orders, theirs = _CTX.Pipe()
        self.proc = _CTX.Process(target=_worker, args=(str(path), theirs), daemon=True)
        self.proc.start()
        assert self.orders.poll(60) and self.orders.recv() == "ready"

    def ask(self, text: str | tuple[str, int]) -> int:
        self.orders.send(text)
        assert self.orders.poll(60)
        index: int = self.orders.recv()
        return index

    def stop(self) -> None:
        self.orders.send(None)
        self.proc.join(30)


def test_calls_of_every_worker_are_read_in_the_order_they_were_made(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    mock = MockGPT(seed=1)
    mock.journal = journal = WorkersJournal(path)
    journal.start()
    other = _Other(path)
    try:
        made = []
        for i in range(12):  # alternately here and in the other worker
            text = f"call {i}"
            made.append((_ask(mock, text) if i % 2 == 0 else other.ask(text), text))
        assert [index for index, _ in made] == list(range(12))
        assert journal.total == 12
        records = journal.query()
        assert [(r.index, r.request.last_user) for r in records] == made
        assert journal.count() == len(journal) == 12
        assert journal.query(offset=10)[0].index == 10 and journal[3].request.last_user == "call 3"
        # the rows say which worker made each call
        pids = dict(sqlite3.connect(path).execute("SELECT idx, pid FROM calls").fetchall())
        assert {pids[i] for i in range(0, 12, 2)} == {os.getpid()}
        assert {pids[i] for i in range(1, 12, 2)} == {other.proc.pid}
        # a clear here leaves out the other worker's calls made before it, written later or not
        other.ask("before the clear")
        journal.clear()
        assert journal.query() == [] and journal.total == 13
        assert other.ask("after the clear") == 13
        assert [r.request.last_user for r in journal.query()] == ["after the clear"]
    finally:
        other.stop()
        journal.close()


def test_a_stream_written_before_it_ended_is_rewritten_as_it_ended(tmp_path: Path) -> None:
    mock = MockGPT(seed=1)
    mock.journal = journal = WorkersJournal(tmp_path / "calls.sqlite")
    record = mock.resolve({"model": "gpt-4o", "stream": True,
                           "messages": [{"role": "user", "content": "hi"}]}).record  # fmt: skip
    record.delivery.outcome = "streaming"
    assert journal.query()[0].outcome == "streaming"  # gathered while it streams
    mock.finish(record, None, frames_sent=7)
    assert (journal.query()[0].outcome, journal.query()[0].frames_sent) == ("done", 7)
    journal.close()


def test_a_worker_gone_is_skipped_and_a_silent_one_waited_for_at_most_wait_s(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "calls.sqlite"
    mock = MockGPT(seed=1)
    mock.journal = journal = WorkersJournal(path, wait_s=0.3)
    _ask(mock, "mine")
    gone = tmp_path / "calls.sqlite.w999999999.sock"  # a worker that left its socket behind
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(gone))
    s.close()
    assert [r.request.last_user for r in journal.query()] == ["mine"]
    assert not gone.exists()
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # bound, alive (this process), never reads
    silent.bind(str(tmp_path / f"calls.sqlite.w{os.getppid()}.sock"))
    try:
        with caplog.at_level(logging.WARNING, logger="synthgpt.journal"):
            assert [r.request.last_user for r in journal.query()] == ["mine"]
        assert f"workers {os.getppid()} did not write their calls within 0.3 s" in caplog.text
    finally:
        silent.close()
        journal.close()


def test_a_worker_that_stops_writes_its_calls_first(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    other = _Other(path)
    assert [other.ask(f"call {i}") for i in range(3)] == [0, 1, 2]
    other.stop()  # gone: nobody is left to ask
    assert not list(tmp_path.glob("*.sock"))
    reader = WorkersJournal(path)
    try:
        assert [r.request.last_user for r in reader.query()] == ["call 0", "call 1", "call 2"]
    finally:
        reader.close()


def test_workers_reading_and_answering_at_once_lose_nothing_and_wait_for_nobody(tmp_path: Path) -> None:
    """Both workers answer calls and read the journal at the same time: each read is answered by the other
    worker's listening thread, whatever its own thread is doing, and every call is there once."""
    path = tmp_path / "calls.sqlite"
    mock = MockGPT(seed=1)
    mock.journal = journal = WorkersJournal(path, wait_s=30)
    journal.start()
    other = _Other(path)
    try:
        done: list[int] = []
        theirs = threading.Thread(target=lambda: done.append(other.ask(("mixed", 60))))
        theirs.start()
        for i in range(60):
            _ask(mock, f"mine {i}")
            if i % 5 == 4:
                journal.query()
        theirs.join(120)
        assert done == [60]
        records = journal.query()
        assert [r.index for r in records] == list(range(120))
        assert sorted(r.request.last_user for r in records) == sorted(
            [f"mine {i}" for i in range(60)] + [f"theirs {i}" for i in range(60)]
        )
        mine = [r.request.last_user for r in records if r.request.last_user.startswith("mine")]
        assert mine == [f"mine {i}" for i in range(60)]  # each worker's calls in the order it made them
    finally:
        other.stop()
        journal.close()
