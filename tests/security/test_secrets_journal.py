"""No credential reaches the journal, on any route: not the JSON view, not the JSONL export, not the
SQLite file, not a rule's history (issue 11, §3: Chat and Azure chat journaled them verbatim)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx2
import pytest

from synthgpt import MockGPT
from synthgpt.codec.headers import is_credential, journal_headers
from synthgpt.journal.sqlite import SQLiteJournal
from synthgpt.server.routes import API_ROUTES
from synthgpt.testing import InProcessTransport2

SECRET = "sk-SECRET-0123456789"
CREDENTIALS = {
    "authorization": f"Bearer {SECRET}-auth",
    "x-api-key": f"{SECRET}-xapi",
    "api-key": f"{SECRET}-azure",
    "cookie": f"session={SECRET}-cookie",
    "proxy-authorization": f"Basic {SECRET}-proxy",
    "x-goog-api-key": f"{SECRET}-goog",
    "ocp-apim-subscription-key": f"{SECRET}-apim",
    "x-portkey-api-key": f"{SECRET}-gateway",
}
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
BODIES: dict[str, dict[str, Any]] = {
    "chat": CHAT,
    "responses": {"model": "gpt-4o", "input": "hi"},
    "messages": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "hi"}],
    },
    "embeddings": {"model": "text-embedding-3-small", "input": "hi"},
}


GEMINI = {"contents": [{"parts": [{"text": "hi"}]}]}
NEW_APIS: dict[str, tuple[str, dict[str, Any], dict[str, Any] | None]] = {
    # route -> (url, body, the streamed body where the stream is asked for in the body)
    ":generateContent": ("/v1beta/models/gemini-2.5-flash:generateContent", GEMINI, None),
    ":streamGenerateContent": ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", GEMINI, None),
    ":embedContent": ("/v1beta/models/text-embedding-004:embedContent",
                      {"content": GEMINI["contents"][0]}, None),
    ":batchEmbedContents": ("/v1beta/models/text-embedding-004:batchEmbedContents",
                            {"requests": [{"content": GEMINI["contents"][0]}]}, None),
    "/api/chat": ("/api/chat",
                  {"model": "llama3.2", "stream": False, "messages": [{"role": "user", "content": "hi"}]},
                  {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]}),
    "/api/generate": ("/api/generate", {"model": "llama3.2", "stream": False, "prompt": "hi"},
                      {"model": "llama3.2", "prompt": "hi"}),
    "/api/embed": ("/api/embed", {"model": "nomic-embed-text", "input": "hi"}, None),
    "/api/embeddings": ("/api/embeddings", {"model": "nomic-embed-text", "prompt": "hi"}, None),
    "/v2/chat": ("/v2/chat", {"model": "c", "messages": [{"role": "user", "content": "hi"}]},
                 {"model": "c", "stream": True, "messages": [{"role": "user", "content": "hi"}]}),
    "/converse": ("/model/m/converse", {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, None),
    "/converse-stream": ("/model/m/converse-stream",
                         {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, None),
}  # fmt: skip


def _new_api(path: str) -> str | None:
    return next((k for k in NEW_APIS if path.endswith(k) or path == k), None)


def _url(path: str) -> str:
    new = _new_api(path)
    if new is not None:
        return NEW_APIS[new][0]
    return path.replace("{deployment}", "dep") + (
        "?api-version=2024-10-21" if path.startswith("/openai") else ""
    )


def _api(path: str) -> str:
    if _new_api(path) is not None:
        return "new"
    for api in ("chat", "responses", "messages", "embeddings"):
        if api in path:
            return "chat" if api == "chat" else api
    raise AssertionError(path)


ROUTES = [r.path for r in API_ROUTES]


def test_every_api_route_is_covered() -> None:
    assert {_api(p) for p in ROUTES} == {*BODIES, "new"}
    # Gemini (v1beta and v1), Ollama, Cohere, Bedrock
    assert len([p for p in ROUTES if _new_api(p)]) == 2 * 4 + 4 + 1 + 2
    assert len(ROUTES) == 13 + 15  # pinned: a new route must be added to the calls above on purpose


@pytest.fixture
def mock(tmp_path: Path) -> MockGPT:
    mock = MockGPT(seed=0)
    mock.journal = SQLiteJournal(tmp_path / "calls.sqlite")
    return mock


def _call_every_route(client: httpx2.Client) -> None:
    for path in ROUTES:
        headers = {**CREDENTIALS, "anthropic-version": "2023-06-01", "x-trace": "kept"}
        for stream in (False, True):
            new = _new_api(path)
            if new is not None:
                body = {**((NEW_APIS[new][2] if stream else None) or NEW_APIS[new][1])}
            else:
                body = {**BODIES[_api(path)]}
                if stream and _api(path) != "embeddings":
                    body["stream"] = True
            r = client.post(_url(path), json=body, headers=headers)
            assert r.status_code == 200, (path, r.text)


def test_no_credential_in_any_journal_form(mock: MockGPT, tmp_path: Path) -> None:
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    _call_every_route(client)
    as_json = client.get("/_synthgpt/calls")
    as_jsonl = client.get("/_synthgpt/calls", params={"format": "jsonl"})
    assert as_json.status_code == as_jsonl.status_code == 200
    assert as_json.headers["x-total-count"] == str(len(ROUTES) * 2)
    with sqlite3.connect(tmp_path / "calls.sqlite") as db:
        rows = "\n".join(r[0] for r in db.execute("select record from calls"))
    raw_file = (tmp_path / "calls.sqlite").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("calls.sqlite-*")
    )
    for form in (as_json.text, as_jsonl.text, rows, raw_file.decode("latin-1")):
        assert SECRET not in form
    # what is not a credential is still recorded, so `header:` rules and the journal stay useful
    records = mock.journal.list()
    assert len(records) == len(ROUTES) * 2
    for record in records:
        names = {k for k, _ in record.request.headers}
        assert record.request.header("x-trace") == "kept"
        assert not names & set(CREDENTIALS), (record.api, names)


def test_in_memory_journal_and_rule_history_hold_no_credential() -> None:
    mock = MockGPT(seed=0)
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    _call_every_route(client)
    for record in [*mock.journal.list(), *(c for rule in mock.rules for c in rule.calls)]:
        assert SECRET not in record.request.model_dump_json()


@pytest.mark.parametrize(
    ("name", "credential"),
    [("Authorization", True), ("X-API-Key", True), ("api-key", True), ("Cookie", True),
     ("Proxy-Authorization", True), ("x-auth-token", True), ("x-client-secret", True),
     ("anthropic-version", False), ("x-stainless-retry-count", False), ("user-agent", False),
     ("openai-organization", False), ("content-type", False)],
)  # fmt: skip
def test_which_headers_are_credentials(name: str, credential: bool) -> None:
    assert is_credential(name) is credential
    assert journal_headers({name: "v"}) == (() if credential else ((name.lower(), "v"),))
