"""`/_synthgpt/calls`: filters, pages and JSONL export, on the in-memory and the SQLite journal."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.journal.records import record_from_dict
from synthgpt.journal.sqlite import SQLiteJournal
from synthgpt.server.run import ServeConfig, build_mock
from synthgpt.testing import InProcessTransport2


def _mock(journal: Path | None = None) -> MockGPT:
    rules = [Rule("weather", m.last_user(contains="weather"), "Sunny."), Rule("other", m.always(), "Ok.")]
    mock = MockGPT(rules)
    if journal is not None:
        mock.journal = SQLiteJournal(journal)
    return mock


def _client(mock: MockGPT) -> httpx2.Client:
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    calls = [("gpt-4o", "weather?"), ("gpt-4o-mini", "hi"), ("gpt-4o", "weather!"), ("claude-x", "yo"),
             ("gpt-4o-mini", "weather now")]  # fmt: skip
    for i, (model, text) in enumerate(calls):
        body = {"model": model, "messages": [{"role": "user", "content": text}]}
        r = client.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, (i, r.text)
    return client


@pytest.fixture(params=["memory", "sqlite"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> httpx2.Client:
    return _client(_mock(tmp_path / "j.sqlite" if request.param == "sqlite" else None))


def test_filters_are_globs(client: httpx2.Client) -> None:
    r = client.get("/_synthgpt/calls", params={"rule": "weather"})
    assert [c["index"] for c in r.json()] == [0, 2, 4] and r.headers["x-total-count"] == "3"
    r = client.get("/_synthgpt/calls", params={"model": "gpt-4o*", "rule": "other"})
    assert [c["index"] for c in r.json()] == [1]
    assert client.get("/_synthgpt/calls", params={"api": "messages"}).json() == []
    assert len(client.get("/_synthgpt/calls").json()) == 5


def test_pages_carry_the_total_and_the_next_link(client: httpx2.Client) -> None:
    r = client.get("/_synthgpt/calls", params={"model": "gpt-4o*", "limit": 2})
    assert [c["index"] for c in r.json()] == [0, 1]
    assert r.headers["x-total-count"] == "4"
    assert r.headers["link"] == '</_synthgpt/calls?model=gpt-4o%2A&offset=2&limit=2>; rel="next"'
    last = client.get("/_synthgpt/calls", params={"model": "gpt-4o*", "limit": 2, "offset": 2})
    assert [c["index"] for c in last.json()] == [2, 4] and "link" not in last.headers


def test_jsonl_export_round_trips(client: httpx2.Client) -> None:
    r = client.get("/_synthgpt/calls", params={"format": "jsonl", "rule": "weather"})
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = r.text.splitlines()
    records = [record_from_dict(json.loads(line)) for line in lines]
    assert [x.index for x in records] == [0, 2, 4]
    assert records[0].output.text == "Sunny." and records[0].request.last_user == "weather?"


@pytest.mark.parametrize(
    ("params", "param", "message"),
    [
        ({"limit": "0"}, "limit", "Invalid 'limit': must be between 1 and 10000, got 0."),
        ({"offset": "x"}, "offset", "Invalid 'offset': expected an integer, got 'x'."),
        ({"offset": "-1"}, "offset", "Invalid 'offset': must be between 0 and 1000000000000, got -1."),
        (
            {"offset": "10000000000000"},
            "offset",
            "Invalid 'offset': must be between 0 and 1000000000000, got 10000000000000.",
        ),
        ({"format": "xml"}, "format", "Invalid 'format': expected 'json' or 'jsonl', got 'xml'."),
    ],
)
def test_bad_parameters_are_400s(
    client: httpx2.Client, params: dict[str, str], param: str, message: str
) -> None:
    r = client.get("/_synthgpt/calls", params=params)
    assert r.status_code == 400
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    assert r.json() == {"error": error}


def test_delete_clears_the_shared_journal(tmp_path: Path) -> None:
    db = tmp_path / "j.sqlite"
    client = _client(_mock(db))
    assert client.delete("/_synthgpt/calls").json() == {"deleted": 5}
    assert client.get("/_synthgpt/calls").json() == [] and SQLiteJournal(db).list() == []


def test_serve_config_journal_option(tmp_path: Path) -> None:
    mock = build_mock(ServeConfig(journal=str(tmp_path / "calls.sqlite"), journal_size=2))
    assert isinstance(mock.journal, SQLiteJournal) and mock.journal.maxlen == 2
    from synthgpt.cli import build_parser

    args = build_parser().parse_args(["serve", "--journal", "x.sqlite"])
    assert args.journal == "x.sqlite"
    from synthgpt.server.run import ConfigError

    with pytest.raises(ConfigError, match="cannot open the journal"):
        build_mock(ServeConfig(journal=str(tmp_path)))  # a directory is not a database
