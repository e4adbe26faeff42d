"""The SQLite journal: a drop-in Journal that keeps every record under concurrent writers."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.journal.records import record_from_dict, record_to_dict
from synthgpt.journal.sqlite import SQLiteJournal


def _ask(mock: MockGPT, text: str, model: str = "gpt-4o") -> None:
    mock.generate({"model": model, "messages": [{"role": "user", "content": text}]}, api="chat")


def test_records_round_trip_through_the_file(tmp_path: Path) -> None:
    mock = MockGPT(seed=3)
    mock.journal = SQLiteJournal(tmp_path / "j.sqlite")
    _ask(mock, "hello")
    _ask(mock, "weather?", model="gpt-4o-mini")
    kept = mock.records
    assert [r.index for r in kept] == [0, 1]
    assert [r.model for r in kept] == ["gpt-4o", "gpt-4o-mini"]
    again = SQLiteJournal(tmp_path / "j.sqlite").list()  # a second process sees the same rows
    assert again == kept
    assert record_from_dict(record_to_dict(kept[0])) == kept[0]
    assert record_to_dict(kept[0])["seed"] == str(kept[0].seed)


def test_query_filters_and_paginates_in_sql(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT()
    mock.journal = journal
    for i in range(5):
        _ask(mock, f"q{i}", model="a" if i % 2 == 0 else "b")
    assert [r.index for r in journal.query(model="a")] == [0, 2, 4]
    assert [r.index for r in journal.query(model="a", offset=1, limit=1)] == [2]
    assert journal.count(model="b") == 2
    assert journal.count(rule="default", api="chat") == 5
    assert journal.query(rule="nope") == []
    assert journal[-1].index == 4
    with pytest.raises(IndexError):
        journal[5]


def test_bounded_and_clear_keeps_the_running_total(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite", maxlen=3)
    mock = MockGPT()
    mock.journal = journal
    for i in range(5):
        _ask(mock, f"q{i}")
    assert [r.index for r in journal.list()] == [2, 3, 4]
    assert (len(journal), journal.total, journal.maxlen) == (3, 5, 3)
    journal.clear()
    assert len(journal) == 0
    _ask(mock, "after")
    assert [r.index for r in journal.list()] == [5]


def test_wal_mode_and_calls_table(tmp_path: Path) -> None:
    import sqlite3

    SQLiteJournal(tmp_path / "j.sqlite")
    conn = sqlite3.connect(tmp_path / "j.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cols = [r[1] for r in conn.execute("PRAGMA table_info(calls)")]
    assert cols == ["idx", "api", "model", "rule", "seed", "at", "duration_ms", "pid", "record"]
    conn.close()


def test_every_record_survives_concurrent_threads(tmp_path: Path) -> None:
    mock = MockGPT()
    mock.journal = SQLiteJournal(tmp_path / "j.sqlite")
    barrier = threading.Barrier(8)

    def work(t: int) -> None:
        barrier.wait()
        for i in range(25):
            _ask(mock, f"thread {t} call {i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    records = mock.records
    assert len(records) == 200
    assert [r.index for r in records] == list(range(200))  # rows in index order, none lost or repeated
    assert sorted(r.request.last_user for r in records) == sorted(
        f"thread {t} call {i}" for t in range(8) for i in range(25)
    )


_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from synthgpt import MockGPT
    from synthgpt.journal.sqlite import SQLiteJournal

    path, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    mock = MockGPT()
    mock.journal = SQLiteJournal(path)
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    for i in range(150):
        mock.generate({"model": "m", "messages": [{"role": "user", "content": f"{name} {i}"}]}, api="chat")
    """
)


@pytest.mark.slow
def test_every_record_survives_two_writer_processes(tmp_path: Path) -> None:
    db, go = tmp_path / "shared.sqlite", tmp_path / "go"
    SQLiteJournal(db)  # create the schema once; the writers race on the rows, not on the schema
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(db), name, str(go)], stderr=subprocess.PIPE)
        for name in ("p1", "p2")
    ]
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    journal = SQLiteJournal(db)
    records = journal.list()
    assert len(records) == 300 and journal.total == 300
    assert [r.index for r in records] == list(range(300))
    texts = {r.request.last_user for r in records}
    assert texts == {f"{n} {i}" for n in ("p1", "p2") for i in range(150)}
    import sqlite3

    pids = {row[0] for row in sqlite3.connect(db).execute("SELECT DISTINCT pid FROM calls")}
    assert len(pids) == 2


@pytest.mark.parametrize(
    ("pattern", "models"),
    [
        ("[!a]*", ["b", "^a", "[x"]),
        ("[^a]", ["a"]),  # a leading ^ is literal in fnmatch: the set holds ^ and a
        ("[!^]", ["a", "b"]),
        ("[x", ["[x"]),  # a [ that opens no set is itself
        ("*", ["a", "b", "ab", "^a", "[x"]),
    ],
)
def test_sql_filters_read_globs_as_fnmatch_does(tmp_path: Path, pattern: str, models: list[str]) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT()
    mock.journal = journal
    names = ("a", "b", "ab", "^a", "[x")
    for model in names:
        _ask(mock, "q", model=model)
    assert [r.model for r in journal.query(model=pattern)] == models
    assert [n for n in names if fnmatch.fnmatchcase(n, pattern)] == models  # the in-memory journal's rule
    assert journal.count(model=pattern) == len(models)


def test_rows_past_the_bound_are_pruned_in_batches_and_never_read(tmp_path: Path) -> None:
    import sqlite3

    from synthgpt.journal.sqlite import _PRUNE_EVERY

    journal = SQLiteJournal(tmp_path / "j.sqlite", maxlen=3)
    mock = MockGPT()
    mock.journal = journal
    for i in range(_PRUNE_EVERY + 10):
        _ask(mock, f"q{i}")
        newest = list(range(max(0, i - 2), i + 1))
        assert [r.index for r in journal.list()] == newest
        assert len(journal) == len(newest) and journal.count(api="chat") == len(newest)
        assert [r.index for r in journal.query(offset=1, limit=1)] == newest[1:2]
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        rows = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    assert 3 <= rows <= 3 + _PRUNE_EVERY


def test_a_call_that_ends_as_written_is_not_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    from synthgpt.server import create_app
    from synthgpt.testing import InProcessTransport2

    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT(seed=1)
    mock.journal = journal
    updates: list[int] = []
    finished = journal.finished

    def written(record: object) -> None:  # the row rewritten: a transaction of its own
        before = journal._conn().total_changes
        finished(record)  # type: ignore[arg-type]
        updates.extend([1] * (journal._conn().total_changes - before))

    monkeypatch.setattr(journal, "finished", written)
    client = httpx2.Client(transport=InProcessTransport2(create_app(mock)), base_url="http://t")
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    assert client.post("/v1/chat/completions", json=body).status_code == 200
    assert updates == []  # a JSON answer ends "done", as its row was inserted
    streamed = client.post("/v1/chat/completions", json={**body, "stream": True})
    assert streamed.status_code == 200
    last = journal.list()[-1]
    assert (last.outcome, last.frames_sent) == ("done", streamed.text.count("data: "))
    assert len(updates) == 1  # a stream's row is rewritten when it ends


def test_each_row_holds_the_whole_record_its_index_written_in_by_the_insert(tmp_path: Path) -> None:
    import json
    import sqlite3

    from synthgpt.journal.records import record_json

    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT(seed=2)
    mock.journal = journal
    for i in range(3):
        _ask(mock, f"q{i}")
    kept = mock.records
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        rows = conn.execute("SELECT idx, rule, seed, record FROM calls ORDER BY idx").fetchall()
    assert [r[0] for r in rows] == [0, 1, 2]
    for (idx, rule, seed, text), record in zip(rows, kept, strict=True):
        assert text == record_json(record)  # what a transaction writes for the record
        assert json.loads(text) == json.loads(json.dumps(record_to_dict(record)))
        assert (idx, rule, seed) == (record.index, record.rule, str(record.seed))
    assert [r.index for r in next(r for r in mock.rules if r.name == "default").calls] == [0, 1, 2]


def test_plain_builders_share_the_numbering_and_a_journal_of_none_counts(tmp_path: Path) -> None:
    from synthgpt.journal import CallRecord
    from synthgpt.model import ModelOutput, ModelRequest

    db = tmp_path / "j.sqlite"
    journal, counting = SQLiteJournal(db), SQLiteJournal(db, maxlen=0)
    mock = MockGPT(seed=2)
    mock.journal = journal
    request = ModelRequest.from_dict({"model": "m", "messages": [{"role": "user", "content": "x"}]})

    def plain(i: int) -> CallRecord:
        return CallRecord(i, request, "plain", 7, ModelOutput(), 0.0, 0.0)

    _ask(mock, "a")
    assert journal.add(plain).index == 1
    assert counting.add(plain).index == 2  # numbered, not stored
    _ask(mock, "b")
    assert journal.next_index() == 4
    journal.append(plain(4))
    _ask(mock, "c")
    assert [(r.index, r.rule) for r in journal.list()] == [
        (0, "default"), (1, "plain"), (3, "default"), (4, "plain"), (5, "default")]  # fmt: skip
    assert journal.total == counting.total == 6 and len(journal) == 5  # one file, one running total
    journal.clear()
    assert counting.add(plain).index == 6 and journal.total == 7
    _ask(mock, "d")
    assert [r.index for r in journal.list()] == [7]


def test_a_file_of_the_first_format_is_migrated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    db = tmp_path / "old.sqlite"
    mock = MockGPT(seed=2)
    mock.journal = SQLiteJournal(tmp_path / "new.sqlite")
    for i in range(3):
        _ask(mock, f"q{i}")
    kept = mock.records
    with sqlite3.connect(db) as conn:  # the first format: numbered by a counter row, ordered by `id`
        conn.executescript(
            """
            CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, idx INTEGER NOT NULL,
                api TEXT NOT NULL, model TEXT NOT NULL, rule TEXT NOT NULL, seed TEXT NOT NULL,
                at REAL NOT NULL, duration_ms REAL NOT NULL, pid INTEGER NOT NULL, record TEXT NOT NULL);
            CREATE INDEX calls_rule ON calls (rule);
            CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            INSERT INTO counters (name, value) VALUES ('total', 5);
            """
        )
        rows = sqlite3.connect(tmp_path / "new.sqlite").execute(
            "SELECT idx, api, model, rule, seed, at, duration_ms, pid, record FROM calls ORDER BY idx"
        )
        conn.executemany("INSERT INTO calls (idx, api, model, rule, seed, at, duration_ms, pid, record)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", list(rows))  # fmt: skip
    with caplog.at_level("WARNING", logger="synthgpt.journal"):
        journal = SQLiteJournal(db)
    assert "migrating the journal" in caplog.text and str(db) in caplog.text
    assert journal.list() == kept and journal.total == 5
    mock.journal = journal
    _ask(mock, "after")
    assert [r.index for r in journal.list()] == [0, 1, 2, 5]
    with sqlite3.connect(db) as conn:
        assert next(r[1] for r in conn.execute("PRAGMA table_info(calls)")) == "idx"
    assert SQLiteJournal(db).list() == journal.list()  # opened again: nothing to migrate


def test_a_calls_table_of_another_kind_is_refused(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE calls (phone TEXT, at REAL)")
    with pytest.raises(sqlite3.DatabaseError, match="not a synthgpt journal's"):
        SQLiteJournal(db)


def test_the_workers_temporary_journal_is_never_synced_and_a_named_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    import io

    from synthgpt.journal.workers import WorkersJournal
    from synthgpt.server.metrics import MULTIPROC_ENV
    from synthgpt.server.run import ServeConfig, _share_between_workers, build_mock

    def synchronous(journal: object) -> int:
        if isinstance(journal, WorkersJournal):  # the workers' own: its file is where it is synced or not
            journal = journal._file
        assert isinstance(journal, SQLiteJournal)
        return int(journal._conn().execute("PRAGMA synchronous").fetchone()[0])

    assert synchronous(SQLiteJournal(tmp_path / "a.sqlite")) == 1  # NORMAL: synced at checkpoints
    assert synchronous(SQLiteJournal(tmp_path / "b.sqlite", synced=False)) == 0  # OFF
    monkeypatch.setenv(MULTIPROC_ENV, str(tmp_path))  # the user's: kept as it is
    with contextlib.ExitStack() as cleanup:
        config = _share_between_workers(ServeConfig(workers=2), cleanup, io.StringIO())
        assert config.journal is not None and config.journal_scratch
        assert ServeConfig.from_json(config.to_json()) == config  # what the workers are given
        journal = build_mock(config).journal
        assert isinstance(journal, WorkersJournal)  # the workers' own, gathered when read
        assert synchronous(journal) == 0
        journal.close()
    named = ServeConfig(workers=2, journal=str(tmp_path / "kept.sqlite"))
    with contextlib.ExitStack() as cleanup:
        config = _share_between_workers(named, cleanup, io.StringIO())
        assert not config.journal_scratch and synchronous(build_mock(config).journal) == 1
