"""The recording file: appended to, never rewritten (a proxy restarted in the middle keeps what it had),
one rule per request (the first recording wins), no secret in it, and a normal rule file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from synthgpt import MockGPT
from synthgpt.errors import ConfigError
from synthgpt.record import RecordingFile
from synthgpt.record.writer import HEADER
from synthgpt.rules import check
from synthgpt.testing import LiveServer
from tests.record._support import record_process, recording_proxy, replay_server

CHAT = "/v1/chat/completions"


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def rules(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["rules"])


def test_a_restarted_proxy_appends_and_never_rewrites(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded.yaml"
    with record_process("--upstream", upstream, "--out", str(out), "--no-timing") as url:
        first = httpx.post(url + CHAT, json=ask("first question"), timeout=30)
        httpx.post(url + CHAT, json=ask("second question", stream=True), timeout=30)
    before = out.read_bytes()
    assert before.startswith(HEADER.encode()) and len(rules(out)) == 2
    with record_process("--upstream", upstream, "--out", str(out), "--no-timing") as url:
        again = httpx.post(url + CHAT, json=ask("first question"), timeout=30)  # recorded before: kept once
        httpx.post(url + CHAT, json=ask("third question"), timeout=30)
    after = out.read_bytes()
    assert after.startswith(before)  # the earlier recordings, byte for byte
    assert [r["description"] for r in rules(out)] == [
        "chat gpt-4o: first question",
        "chat gpt-4o stream: second question",
        "chat gpt-4o: third question",
    ]
    assert again.content == first.content
    assert check.main([str(out), "--strict"]) == 0
    with replay_server(out, strict=True) as url:
        assert httpx.post(url + CHAT, json=ask("first question")).content == first.content


def test_the_first_recording_of_a_request_wins(tmp_path: Path) -> None:
    # an upstream whose answers change between calls (a sequence): the file keeps the first one
    changing = tmp_path / "upstream.yaml"
    changing.write_text(
        "rules:\n  - {name: s, match: always, sequence: [{output: {text: one}}, {output: {text: two}}]}\n"
    )
    out = tmp_path / "recorded.yaml"
    upstream = LiveServer(replay_loader(changing)).start()
    try:
        with recording_proxy(upstream.url, out) as (url, config):
            said = [
                httpx.post(url + CHAT, json=ask("hi")).json()["choices"][0]["message"]["content"]
                for _ in range(2)
            ]
            # what the client sent besides the canonical form changes nothing: the same request
            httpx.post(
                url + CHAT,
                json=ask("hi", user="someone-else", metadata={"run": "2"}),
                headers={"x-request-id": "abc"},
            )
    finally:
        upstream.stop()
    assert said == ["one", "two"]  # passed through as the upstream answered
    (rule,) = rules(out)
    assert rule["output"]["text"] == "one" and len(config.recorded) == 1


def replay_loader(path: Path) -> Any:
    from synthgpt.rules.loader import mock_from_files

    return mock_from_files([path])


def test_secrets_never_reach_the_file(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded.yaml"
    secrets = {
        "authorization": "Bearer sk-proj-SECRET-authorization-1",
        "x-api-key": "sk-ant-SECRET-x-api-key-2",
        "api-key": "azure-SECRET-api-key-3",
        "x-goog-api-key": "AIzaSECRET-goog-4",
        "cookie": "session=SECRET-cookie-5",
    }
    with recording_proxy(upstream, out) as (url, _):
        httpx.post(url + CHAT, json=ask("keys everywhere"), headers=secrets)
        httpx.post(
            url + "/v1/messages",
            headers=secrets,
            json={"model": "claude-x", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]},
        )
        httpx.post(
            url + "/v1beta/models/gemini-2.5-flash:generateContent?key=AIzaSECRET-query-6",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
        # a key the client wrote into its own prompt is blanked too, wherever it shows
        httpx.post(url + CHAT, json=ask("my key is sk-proj-SECRET-authorization-1"), headers=secrets)
    text = out.read_text()
    assert len(rules(out)) == 4
    for secret in ("SECRET", "sk-proj", "sk-ant", "AIza", "session="):
        assert secret not in text
    assert "my key is ***" in text


def test_the_proxy_sends_its_own_key_in_each_providers_header(tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []
    inner = LiveServer(MockGPT(seed=3)).app  # the upstream app, behind a spy on what reaches it

    async def spy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(
                {k.decode(): v.decode() for k, v in scope["headers"]} | {"?": scope["query_string"].decode()}
            )
        await inner(scope, receive, send)

    upstream = LiveServer(spy).start()
    out = tmp_path / "recorded.yaml"
    try:
        with recording_proxy(upstream.url, out, api_key="env-KEY-0123456789") as (url, _):
            client = {"authorization": "Bearer client-KEY-abcdef", "x-api-key": "client-KEY-abcdef"}
            httpx.post(url + CHAT, json=ask("a"), headers=client)
            httpx.post(
                url + "/openai/deployments/gpt-4o/chat/completions?api-version=1",
                json=ask("b"),
                headers={"api-key": "client-KEY-abcdef"},
            )
            httpx.post(
                url + "/v1/messages",
                headers=client,
                json={"model": "claude-x", "max_tokens": 50, "messages": [{"role": "user", "content": "c"}]},
            )
            httpx.post(
                url + "/v1beta/models/gemini-2.5-flash:generateContent?key=client-KEY-abcdef&alt=json",
                json={"contents": [{"role": "user", "parts": [{"text": "d"}]}]},
            )
            httpx.post(
                url + "/v2/chat",
                headers=client,
                json={"model": "command-a", "messages": [{"role": "user", "content": "e"}]},
            )
    finally:
        upstream.stop()
    keys = [
        {k: v for k, v in h.items() if k in ("authorization", "x-api-key", "api-key", "x-goog-api-key")}
        for h in seen
    ]
    assert keys == [
        {"authorization": "Bearer env-KEY-0123456789"},
        {"api-key": "env-KEY-0123456789"},
        {"x-api-key": "env-KEY-0123456789"},
        {"x-goog-api-key": "env-KEY-0123456789"},
        {"authorization": "Bearer env-KEY-0123456789"},
    ]
    assert seen[1]["?"] == "api-version=1" and seen[3]["?"] == "alt=json"  # the client's `key=` is gone
    assert all(h["accept-encoding"] == "identity" for h in seen)
    text = out.read_text()
    assert "KEY" not in text and len(rules(out)) == 5


def test_a_file_that_is_not_a_recording_is_refused(tmp_path: Path) -> None:
    odd = tmp_path / "odd.yaml"
    odd.write_text("rules: []\ninclude: builtin\n")
    with pytest.raises(ConfigError, match="last top-level key must be `rules:`"):
        RecordingFile(odd)
    flow = tmp_path / "flow.yaml"
    flow.write_text("include: builtin\nrules: [{name: a, match: always, output: {text: x}}]\n")
    with pytest.raises(ConfigError, match="must be a block list"):
        RecordingFile(flow)
    broken = tmp_path / "broken.yaml"
    broken.write_text("rules:\n  - [unclosed\n")
    with pytest.raises(ConfigError, match="cannot read the recording"):
        RecordingFile(broken)


def test_a_hand_written_file_is_appended_to_at_its_own_indentation(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    out.write_text(
        "include: builtin\nrules:\n- name: mine\n  match: {last_user: refund}\n  output: {text: No.}"
    )
    with recording_proxy(upstream, out) as (url, _):
        httpx.post(url + CHAT, json=ask("a new one"))
    assert next(r["name"] for r in rules(out)) == "mine" and len(rules(out)) == 2
    assert check.main([str(out)]) == 0


def test_the_record_command_says_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from synthgpt import cli

    assert (
        cli.main(
            [
                "record",
                "--upstream",
                "http://127.0.0.1:9",
                "--api-key-env",
                "SYNTHGPT_TEST_NO_SUCH_VAR",
                "--out",
                str(tmp_path / "r.yaml"),
            ]
        )
        == 2
    )
    assert "SYNTHGPT_TEST_NO_SUCH_VAR is not set" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["record", "--upstream", "ftp://example"])
    assert "must be an http:// or https:// URL" in capsys.readouterr().err
