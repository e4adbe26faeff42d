"""The SQLite and Redis journals' rows keep a served request as its wire (body, kept headers, path
parameters, stream flag and the codec's name, `codec.named`), and any process decodes it again to the request
the rule answered."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.codec import ChatCodec
from synthgpt.codec.named import CODEC_NAMES, codec_named, wire_name
from synthgpt.journal import record_from_dict, record_to_dict
from synthgpt.journal.records import record_json
from synthgpt.journal.sqlite import SQLiteJournal
from synthgpt.pipeline import answer
from synthgpt.render import _codec as render_codec
from synthgpt.server.routes import API_ROUTES

HEADERS = {"content-type": "application/json", "authorization": "Bearer sk-secret", "x-app": "rows"}


def _settings(codec: object) -> dict[str, Any]:
    return {k: v for k, v in vars(codec).items() if isinstance(v, bool)} if hasattr(codec, "__dict__") else {}


def test_every_codec_the_server_and_render_use_has_a_name_that_makes_it_again() -> None:
    codecs = [r.codec() if isinstance(r.codec, type) else r.codec for r in API_ROUTES]
    apis = ("chat", "responses", "messages", "gemini", "bedrock", "cohere", "ollama")
    codecs += [render_codec(api, stream) for api in apis for stream in (False, True)]
    named = set()
    for codec in codecs:
        name = wire_name(codec)
        assert name is not None, codec
        again = codec_named(name)
        assert type(again) is type(codec) and _settings(again) == _settings(codec), name
        assert wire_name(again) == name
        named.add(name)
    assert named == set(CODEC_NAMES)  # and no name is left that nothing uses


def test_a_codec_of_another_class_has_no_name_and_its_requests_are_written_whole() -> None:
    class MyChat:  # a codec of the user's own (wrapping the built-in one: compiled, it cannot be subclassed)
        api = "chat"

        def __init__(self) -> None:
            self._inner = ChatCodec()

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    assert wire_name(MyChat()) is None
    raw = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode()
    record = answer(MockGPT(seed=1), MyChat(), raw, HEADERS, {}, path="/v1/chat/completions").generation
    assert record is not None
    row = json.loads(record_json(record.record))
    assert "wire" not in row and row["request"]["messages"][0]["content"] == "hi"
    assert record_from_dict(row) == record.record


def test_a_name_no_codec_has_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match=r"no codec is named 'chat-v9'.*another version of synthgpt"):
        codec_named("chat-v9")


# a body whose text SQLite's JSON functions would rewrite if the row held it as JSON: an integer past 64
# bits, a float written with an exponent, a key order, spaces, an escaped and an unescaped non-ASCII text
_AWKWARD = (
    b'\xef\xbb\xbf{ "messages" : [ {"role":"user","content":"Z\\u00fcrich \xf0\x9f\x8c\x8a tide pools?"} ],'
    b' "model":"gpt-4o", "seed": 123456789012345678901234567890, "temperature": 1.0E-1, "stream": true }'
)


def test_a_rewritten_row_still_decodes_to_its_request(tmp_path: Path) -> None:
    """`finished` rewrites a stream's row with SQLite's `json_set`: the body, held as a string, survives."""
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT(seed=4)
    mock.journal = journal
    answered = answer(mock, ChatCodec(), _AWKWARD, HEADERS, {}, path="/v1/chat/completions")
    assert answered.status == 200 and answered.generation is not None
    record = answered.generation.record
    assert record.request.extra["seed"] == 123456789012345678901234567890
    record.delivery.__init__("cancelled", 3)  # type: ignore[misc]  # how the stream ended
    journal.finished(record)
    (text,) = sqlite3.connect(tmp_path / "j.sqlite").execute("SELECT record FROM calls").fetchone()
    row = json.loads(text)
    assert row["outcome"] == "cancelled" and row["wire"]["body"].encode() == _AWKWARD
    assert row["wire"]["headers"] == [["content-type", "application/json"], ["x-app", "rows"]]
    back = journal.list()[0]
    assert back == record and (back.outcome, back.frames_sent) == ("cancelled", 3)
    assert back.request.model_dump() == record.request.model_dump()


_READER = """
import json, sys
from synthgpt.journal import record_to_dict
from synthgpt.journal.sqlite import SQLiteJournal
print(json.dumps([record_to_dict(r) for r in SQLiteJournal(sys.argv[1]).list()], sort_keys=True))
"""


def test_another_process_reads_every_apis_request_back(tmp_path: Path) -> None:
    """Rows written here, read by a fresh interpreter: the same records, as `record_to_dict` gives them."""
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    mock = MockGPT(seed=5)
    mock.journal = journal
    asks: list[tuple[str, dict[str, Any], dict[str, str]]] = [
        ("/v1/chat/completions", {"model": "gpt-4o", "messages": [{"role": "user", "content": "tides"}]}, {}),
        ("/v1/messages", {"model": "claude-sonnet-4-5", "max_tokens": 50,
                          "messages": [{"role": "user", "content": "tide pools"}]}, {}),
        ("/v1/responses", {"model": "gpt-4o", "input": "tide pools", "stream": True}, {}),
        ("/v1/embeddings", {"model": "text-embedding-3-small", "input": ["a", "b"]}, {}),
        ("/v1beta/models/{model}:streamGenerateContent",
         {"contents": [{"role": "user", "parts": [{"text": "tide pools"}]}]}, {"model": "gemini-2.5-flash"}),
        ("/api/generate", {"model": "llama3", "prompt": "tide pools"}, {}),
        ("/model/{model_id:path}/converse", {"messages": [{"role": "user", "content": [{"text": "tides"}]}]},
         {"model_id": "anthropic.claude-3-haiku"}),
    ]  # fmt: skip
    routes = {r.path: r.codec for r in API_ROUTES}
    records = []
    for path, body, params in asks:
        codec = routes[path]
        codec = codec() if isinstance(codec, type) else codec
        answered = answer(mock, codec, json.dumps(body).encode(), HEADERS, params, path=path)
        assert answered.status == 200 and answered.generation is not None, (path, answered.body)
        records.append(answered.generation.record)
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        rows = [json.loads(t) for (t,) in conn.execute("SELECT record FROM calls ORDER BY idx")]
    assert all("request" not in row and "wire" in row for row in rows)
    names = ["chat", "messages", "responses", "embeddings", "gemini-stream", "ollama-generate", "bedrock"]
    assert [row["wire"]["codec"] for row in rows] == names
    out = subprocess.run([sys.executable, "-c", _READER, str(tmp_path / "j.sqlite")], capture_output=True,
                         check=True, timeout=120).stdout  # fmt: skip
    want = json.dumps([record_to_dict(r) for r in records], sort_keys=True)
    assert json.loads(out) == json.loads(want)
