"""Every API through the recording proxy: the answer passes through unchanged, a rule is appended, and
serving the recording answers each request with the very bytes the upstream sent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from synthgpt.rules import check
from tests.record._support import WIRE_CASES, recording_proxy, replay_server

CASE_IDS = [case for case, _, _ in WIRE_CASES]
HEADERS = {"authorization": "Bearer sk-test-0123456789abcdef", "x-stainless-retry-count": "0"}


@dataclass
class Recording:
    path: Path
    direct: dict[str, httpx.Response]
    proxied: dict[str, httpx.Response]
    recorded: list[str]


@pytest.fixture(scope="module")
def recording(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Recording:
    out = tmp_path_factory.mktemp("wire") / "recorded.yaml"
    direct, proxied = {}, {}
    with recording_proxy(upstream, out) as (url, config), httpx.Client(timeout=30) as http:
        for case, path, body in WIRE_CASES:
            direct[case] = http.post(upstream + path, json=body, headers=HEADERS)
            proxied[case] = http.post(url + path, json=body, headers=HEADERS)
    return Recording(out, direct, proxied, list(config.recorded))


@pytest.fixture(scope="module")
def replayed(recording: Recording) -> Iterator[dict[str, httpx.Response]]:
    with replay_server(recording.path) as url, httpx.Client(timeout=30) as http:
        yield {case: http.post(url + path, json=body) for case, path, body in WIRE_CASES}


@pytest.mark.parametrize("case", CASE_IDS)
def test_the_proxy_passes_the_answer_through_unchanged(recording: Recording, case: str) -> None:
    direct, proxied = recording.direct[case], recording.proxied[case]
    assert proxied.status_code == direct.status_code
    assert proxied.content == direct.content
    for name in ("content-type", "retry-after", "x-request-id", "x-ratelimit-remaining-requests"):
        assert proxied.headers.get(name) == direct.headers.get(name), name


@pytest.mark.parametrize("case", CASE_IDS)
def test_the_recording_replays_byte_identical(
    recording: Recording, replayed: dict[str, httpx.Response], case: str
) -> None:
    original, replay = recording.proxied[case], replayed[case]
    assert replay.status_code == original.status_code
    assert replay.headers["content-type"] == original.headers["content-type"]
    assert replay.content == original.content


def test_each_request_is_one_rule_and_the_file_checks_clean(
    recording: Recording, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load(recording.path.read_text())
    assert data["include"] == "builtin" and list(data) == ["include", "rules"]
    digests = [rule["match"]["canonical"] for rule in data["rules"]]
    # two cases ask what an earlier one asked, in another form the canonical form leaves out: the Azure
    # route names the model as the deployment, Gemini's JSON-array stream is `?alt=sse`'s without SSE
    # framing (the framing is the route's, not the request's). The first recording answers both.
    assert digests == recording.recorded and len(set(digests)) == len(digests) == len(WIRE_CASES) - 2
    assert not {"azure-chat", "gemini-array"} & {r["description"] for r in data["rules"]}
    assert check.main([str(recording.path), "--strict"]) == 0, capsys.readouterr()


def test_what_a_rule_keeps(recording: Recording) -> None:
    rules = yaml.safe_load(recording.path.read_text())["rules"]
    unique = [case for case in CASE_IDS if case not in ("azure-chat", "gemini-array")]
    by_case = dict(zip(unique, rules, strict=True))
    stream = by_case["chat-stream"]
    assert stream["description"] == "chat gpt-4o stream: Tell me about tea"
    assert "".join(stream["stream"]["deltas"]) == stream["output"]["text"]
    assert stream["stream"]["id"] == recording.direct["chat"].json()["id"]  # same seed, same request: same id
    assert stream["stream"]["created"] == 1700000000 and stream["reasoning"] is False
    assert stream["output"]["usage"]["prompt_tokens"] > 0 and stream["output"]["finish_reason"] == "stop"
    (call,) = by_case["chat-tools"]["output"]["tool_calls"]
    assert call["name"] == "get_weather" and call["id"].startswith("call_") and "city" in call["arguments"]
    assert by_case["chat-tools"]["output"]["finish_reason"] == "tool_calls"
    thinking = by_case["messages-thinking"]["output"]
    assert thinking["reasoning"] and len(thinking["reasoning_signature"]) == 64
    vectors = by_case["embeddings-float"]["output"]["embeddings"]
    assert len(vectors) == 1 and len(vectors[0]) == 16 and "reasoning" not in by_case["embeddings-float"]
    error = recording.direct["error-429"]
    assert by_case["error-429"]["error"] == {
        "status": 429,
        "body": error.json(),
        "headers": {k: v for k, v in error.headers.items() if k.startswith(("retry-after", "x-ratelimit-"))},
    }
    assert by_case["error-429"]["error"]["headers"]["retry-after-ms"] == "1500"
    assert by_case["bedrock-stream"]["stream"]["deltas"] and "id" not in by_case["bedrock-stream"]["stream"]


def test_a_recorded_stream_keeps_its_timing(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "timed.yaml"
    body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "pace me"}]}
    with recording_proxy(upstream, out, timing=True) as (url, _):
        httpx.post(url + "/v1/chat/completions", json=body, timeout=30)
    (rule,) = yaml.safe_load(out.read_text())["rules"]
    plan = rule["stream"]
    assert plan["deltas"] == [
        "One two th",
        "ree four f",
        "ive six se",
        "ven eight ",
        "nine ten e",
        "leven twel",
        "ve.",
    ]
    assert 120 <= plan["first_delay_ms"] < 1000
    assert 20 <= plan["interval_ms"] < 200
