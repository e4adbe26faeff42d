"""`serve --strict` (`SYNTHGPT_STRICT`), an upstream that answers with an error, and one that is not there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from synthgpt.cli import build_parser
from tests.record._support import recording_proxy, replay_server

CHAT = "/v1/chat/completions"
UNKNOWN = {"model": "gpt-4o", "messages": [{"role": "user", "content": "never recorded"}]}


@pytest.fixture(scope="module")
def recorded(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("strict") / "recorded.yaml"
    with recording_proxy(upstream, out) as (url, _):
        httpx.post(
            url + CHAT, json={"model": "gpt-4o", "messages": [{"role": "user", "content": "recorded"}]}
        )
    return out


def test_unrecorded_requests_fall_through_to_the_builtin_rules(recorded: Path) -> None:
    with replay_server(recorded) as url:
        answer = httpx.post(url + CHAT, json=UNKNOWN)
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    ("path", "body", "shape"),
    [
        (CHAT, UNKNOWN, lambda b: b["error"]["code"]),
        (
            "/v1/messages",
            {"model": "claude-x", "max_tokens": 9, "messages": [{"role": "user", "content": "x"}]},
            lambda b: b["error"]["type"],
        ),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            {"contents": [{"parts": [{"text": "x"}]}]},
            lambda b: b["error"]["status"],
        ),
        (
            "/api/chat",
            {"model": "llama3.2", "messages": [{"role": "user", "content": "x"}]},
            lambda b: b["error"][:18],
        ),
        (
            "/v2/chat",
            {"model": "command-a", "messages": [{"role": "user", "content": "x"}]},
            lambda b: b["message"][:18],
        ),
    ],
)
def test_strict_refuses_unrecorded_requests_in_each_apis_shape(
    recorded: Path, path: str, body: dict[str, Any], shape: Any
) -> None:
    with replay_server(recorded, strict=True) as url:
        answer = httpx.post(url + path, json=body)
        known = httpx.post(
            url + CHAT, json={"model": "gpt-4o", "messages": [{"role": "user", "content": "recorded"}]}
        )
    assert answer.status_code == 404
    assert shape(answer.json()) in (
        "no_recorded_answer",
        "not_found_error",
        "NOT_FOUND",
        "No recorded answer",
    )
    assert known.status_code == 200


def test_strict_through_the_official_clients(recorded: Path) -> None:
    with replay_server(recorded, strict=True) as url:
        with (
            openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as oai,
            pytest.raises(openai.NotFoundError) as chat,
        ):
            oai.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "never recorded"}]
            )
        with (
            anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as ant,
            pytest.raises(anthropic.NotFoundError) as messages,
        ):
            ant.messages.create(model="claude-x", max_tokens=9, messages=[{"role": "user", "content": "x"}])
    assert chat.value.code == "no_recorded_answer" and "synthgpt serve --strict" in chat.value.message
    assert "No recorded answer" in messages.value.message


def test_strict_is_a_serve_flag_and_a_variable() -> None:
    assert build_parser().parse_args(["serve", "--strict"]).strict is True
    assert build_parser().parse_args(["serve"]).strict is False
    assert build_parser({"SYNTHGPT_STRICT": "1"}).parse_args(["serve"]).strict is True


def test_strict_serve_process(recorded: Path, start_server: Any) -> None:
    with start_server(str(recorded), "--strict") as url:
        assert httpx.post(url + CHAT, json=UNKNOWN).status_code == 404


def test_an_unreachable_upstream_is_a_502_in_the_apis_shape(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    out = tmp_path / "recorded.yaml"
    with recording_proxy(closed, out) as (url, config):
        chat = httpx.post(url + CHAT, json=UNKNOWN)
        messages = httpx.post(url + "/v1/messages", json={"model": "c", "max_tokens": 9, "messages": []})
        bedrock = httpx.post(url + "/model/m/converse", json={"messages": []})
        other = httpx.get(url + "/v1/models")
        with (
            openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as oai,
            pytest.raises(openai.InternalServerError) as raised,
        ):
            oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert chat.status_code == 502 and chat.json()["error"]["code"] == "upstream_unreachable"
    assert f"The upstream {closed} could not be reached: ConnectError" in chat.json()["error"]["message"]
    assert messages.status_code == 502 and messages.json()["type"] == "error"
    assert bedrock.status_code == 502 and "message" in bedrock.json()
    assert other.status_code == 502 and other.json()["error"]["code"] == "upstream_unreachable"
    assert raised.value.status_code == 502
    assert not out.exists() and config.recorded == []


def test_an_upstream_error_is_recorded_and_replayed(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded.yaml"
    ask = [{"role": "user", "content": "please rate limit me"}]
    caught = []
    for url_of in (lambda: recording_proxy(upstream, out), lambda: replay_server(out, strict=True)):
        with url_of() as served:
            url = served[0] if isinstance(served, tuple) else served
            with (
                openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as oai,
                pytest.raises(openai.RateLimitError) as raised,
            ):
                oai.chat.completions.create(model="gpt-4o", messages=ask)  # type: ignore[arg-type]
            caught.append(
                (raised.value.status_code, raised.value.body, raised.value.response.headers["retry-after"])
            )
    assert caught[0] == caught[1] and caught[0][0] == 429


def test_other_routes_pass_through_and_big_bodies_are_refused(upstream: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded.yaml"
    with recording_proxy(upstream, out, max_body_bytes=200) as (url, config):
        models = httpx.get(url + "/v1/models")
        tags = httpx.get(url + "/api/tags")
        long = [{"role": "user", "content": "x" * 300}]
        big = httpx.post(url + CHAT, json={"model": "gpt-4o", "messages": long})
    assert models.content == httpx.get(upstream + "/v1/models").content and models.status_code == 200
    assert tags.json() == httpx.get(upstream + "/api/tags").json()
    assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
    assert "exceeds the limit of 200 bytes" in big.json()["error"]["message"]
    assert config.recorded == [] and not out.exists()
