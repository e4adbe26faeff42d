"""The canonical form a recording matches on, the `canonical` matcher in rule files and in Python, and
`synthgpt record --digest`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from synthgpt import MockGPT
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.model import ModelRequest
from synthgpt.rules import matchers as m
from synthgpt.rules.canonical import IGNORED_EXTRA, canonical_digest, canonical_form
from synthgpt.rules.loader import load_text
from synthgpt.rules.locations import RuleFileError
from synthgpt.rules.spec import json_schema
from tests.record._support import recording_proxy

BASE: dict[str, Any] = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def digest(body: dict[str, Any], headers: dict[str, str] | None = None) -> str:
    return canonical_digest(ChatCodec().decode(body, headers or {}, {}))


@pytest.mark.parametrize(
    "same",
    [
        {"user": "someone"},
        {"metadata": {"run": "7"}},
        {"store": True},
        {"safety_identifier": "abc"},
        {"prompt_cache_key": "k"},
        {"service_tier": "flex"},
        {"stream_options": {"include_usage": True}, "stream": True, "_base_streams": True},
    ],
)
def test_what_is_ignored(same: dict[str, Any]) -> None:
    base = {**BASE, "stream": True} if same.pop("_base_streams", False) else BASE
    assert digest({**base, **same}) == digest(base)


def test_headers_are_ignored() -> None:
    headers = {"authorization": "Bearer sk-1", "x-request-id": "r1", "user-agent": "OpenAI/Python 1.99"}
    assert digest(BASE, headers) == digest(BASE)


@pytest.mark.parametrize(
    "different",
    [
        {"model": "gpt-4o-mini"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]},
        {"temperature": 0.2},
        {"seed": 4},
        {"stop": ["\n"]},
        {"max_tokens": 10},
        {"stream": True},
        {"n": 2},
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "none"},
        {"response_format": {"type": "json_object"}},
        {"reasoning_effort": "low"},
        {"logprobs": True},
    ],
)
def test_what_counts(different: dict[str, Any]) -> None:
    assert digest({**BASE, **different}) != digest(BASE)


def test_the_api_counts_and_the_form_is_plain_json() -> None:
    chat = ChatCodec().decode(BASE, {}, {})
    assert canonical_digest(chat) != canonical_digest(chat.model_copy(update={"api": "responses"}))
    form = canonical_form(chat)
    assert json.loads(json.dumps(form)) == form and "headers" not in form and "stream_options" not in form
    assert {"user", "metadata", "store", "safety_identifier", "prompt_cache_key",
                             "service_tier", "background"} == IGNORED_EXTRA  # fmt: skip
    assert len(canonical_digest(chat)) == 32


def test_the_matcher_in_a_rule_file_and_in_python() -> None:
    d = digest(BASE)
    loaded = load_text(
        f"rules:\n  - {{name: r, match: {{canonical: {d}}}, output: {{text: recorded}}}}\n", "r.yaml"
    )
    mock = loaded.mock()
    assert mock.generate(ModelRequest(api="chat", **BASE)).text == "recorded"
    assert loaded.ruleset["r"].matcher == m.canonical(d) and repr(m.canonical(d)) == f"canonical({d!r})"
    assert m.canonical(d)(ModelRequest(api="chat", **BASE)) and not m.canonical(d)(ModelRequest(**BASE))


def test_a_bad_digest_is_a_located_error() -> None:
    with pytest.raises(RuleFileError) as raised:
        load_text("rules:\n  - name: r\n    match: {canonical: abc}\n    output: {text: x}\n", "r.yaml")
    assert str(raised.value).startswith("r.yaml:3:")
    assert "a digest is 32 lower-case hex digits" in str(raised.value)


def test_the_schema_knows_the_matcher_and_the_recorded_output() -> None:
    schema = json_schema()
    assert "canonical" in schema["$defs"]["Matcher"]["anyOf"][1]["properties"]
    output = schema["$defs"]["OutputSpec"]["properties"]
    assert {"embeddings", "reasoning_signature"} <= set(output)


def test_recorded_output_keys_load() -> None:
    text = """
rules:
  - name: vectors
    match: {api: embeddings}
    output: {embeddings: [[0.5, -0.25]], usage: {prompt_tokens: 3}}
  - name: signed
    match: always
    output: {text: hi, reasoning: thought, reasoning_signature: sig-123}
"""
    mock = load_text(text).mock()
    out = mock.generate(ModelRequest(api="embeddings", model="e", inputs=("tea",)))
    assert out.embeddings == ((0.5, -0.25),) and out.usage.prompt_tokens == 3
    reasoning = mock.generate(ModelRequest(**BASE)).parts[0]
    assert reasoning.kind == "reasoning" and reasoning.text == "thought" and reasoning.signature == "sig-123"  # type: ignore[union-attr]


def test_the_digest_command_prints_what_a_recording_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synthgpt import cli
    from synthgpt.testing import LiveServer

    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"temperature": 0}}
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body))
    route = "/v1beta/models/gemini-2.5-flash:generateContent"
    assert cli.main(["record", "--digest", str(request), "--route", route]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["canonical"]["model"] == "gemini-2.5-flash" and printed["canonical"]["extra"] == {
        "temperature": 0
    }
    upstream = LiveServer(MockGPT()).start()
    try:
        with recording_proxy(upstream.url, tmp_path / "r.yaml") as (url, _):
            httpx.post(url + route, json=body)
    finally:
        upstream.stop()
    (rule,) = yaml.safe_load((tmp_path / "r.yaml").read_text())["rules"]
    assert rule["match"] == {"canonical": printed["digest"]}
    assert cli.main(["record", "--digest", str(request), "--route", "/nowhere"]) == 2
    assert "none of the API routes" in capsys.readouterr().err
