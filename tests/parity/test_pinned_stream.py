"""Items 2 and 3 of the parity issue: explicit stream deltas, and a pinned response id and `created`,
on every API, streamed and not, from Python, rule files and `synthgpt render`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthgpt import DrawError, MockGPT, Rule, RuleError
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.render import render_requests
from synthgpt.rules.loader import load_text
from synthgpt.server import create_app

# a two-byte character, a four-byte emoji and a citation marker, each split across deltas
DELTAS = ["Caf", "é ", "\U0001f600", " see [", "1", "] ok"]
TEXT = "".join(DELTAS)
PINNED = {"deltas": DELTAS, "id": "mock-1", "created": 1_700_000_000}
RULES_YAML = """
rules:
  - name: fixture
    match: {last_user: split}
    stream: {deltas: ["Caf", "é ", "\\U0001F600", " see [", "1", "] ok"], id: mock-1, created: 1700000000}
  - name: scripted
    match: {last_user: steps}
    script:
      - stream: {deltas: ["one ", "step"], id: step-1}
  - name: default
    match: always
    output: {text: plain}
"""


def _mock() -> MockGPT:
    return load_text(RULES_YAML, "rules.yaml").mock()


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_python_rule_answers_with_the_deltas_text_and_pins() -> None:
    mock = MockGPT([Rule("fixture", m.always(), stream=PINNED)])
    out = mock.generate({"model": "gpt-4o", "messages": _user("hi")})
    assert out.text == TEXT
    assert out.created == 1_700_000_000
    assert out.stream.id == "mock-1"
    assert out.stream.deltas == tuple(DELTAS)


def test_deltas_that_do_not_spell_the_answer_are_an_error_naming_the_rule() -> None:
    mock = MockGPT([Rule("r", m.always(), "Hello", stream={"deltas": ["He", "y"]})])
    with pytest.raises(DrawError) as info:
        mock.generate({"model": "x", "messages": _user("hi")})
    assert str(info.value) == (
        "rule 'r': the stream's deltas spell 'Hey' but the answer's text is 'Hello'; give the deltas alone "
        "(they are the text) or make them spell it"
    )


def test_a_matching_answer_and_answer_wrapper_take_deltas_too() -> None:
    mock = MockGPT([Rule("r", m.always(), g.answer("ab", stream={"deltas": ["a", "b"], "id": "x-1"}))])
    out = mock.generate({"model": "x", "messages": _user("hi")})
    assert (out.text, out.stream.id) == ("ab", "x-1")


def test_without_an_answer_or_deltas_a_rule_is_still_refused() -> None:
    with pytest.raises(RuleError, match="give an answer"):
        Rule("r", m.always(), stream={"chunk_chars": 2})


def test_bad_pins_are_refused_when_the_rule_is_built() -> None:
    with pytest.raises(RuleError) as info:
        Rule("r", m.always(), "x", stream={"created": -1})
    assert str(info.value) == (
        "rule 'r': stream: Invalid value for 'created': Input should be greater than or equal to 0"
    )


def _sse_payloads(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def _chat_deltas(payloads: list[dict[str, Any]]) -> list[str]:
    return [p["choices"][0]["delta"]["content"] for p in payloads
            if p["choices"] and p["choices"][0]["delta"].get("content")]  # fmt: skip


async def _post(path: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(_mock())), base_url="http://t"
    ) as c:
        return await c.post(path, json=body)


async def test_chat_streams_the_deltas_as_listed_with_the_pinned_id_and_created() -> None:
    r = await _post("/v1/chat/completions", {"model": "gpt-4o", "messages": _user("split"), "stream": True})
    payloads = _sse_payloads(r.text)
    assert _chat_deltas(payloads) == DELTAS
    assert {p["id"] for p in payloads} == {"mock-1"}
    assert {p["created"] for p in payloads} == {1_700_000_000}
    body = (await _post("/v1/chat/completions", {"model": "gpt-4o", "messages": _user("split")})).json()
    assert (body["id"], body["created"], body["choices"][0]["message"]["content"]) == (
        "mock-1",
        1_700_000_000,
        TEXT,
    )


async def test_responses_streams_the_deltas_as_listed_with_the_pinned_id_and_created() -> None:
    r = await _post("/v1/responses", {"model": "gpt-4o", "input": "split", "stream": True})
    payloads = _sse_payloads(r.text)
    assert [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"] == DELTAS
    responses = [p["response"] for p in payloads if "response" in p]
    assert {(x["id"], x["created_at"]) for x in responses} == {("mock-1", 1_700_000_000)}
    body = (await _post("/v1/responses", {"model": "gpt-4o", "input": "split"})).json()
    assert (body["id"], body["created_at"], body["output"][0]["content"][0]["text"]) == (
        "mock-1",
        1_700_000_000,
        TEXT,
    )


async def test_messages_streams_the_deltas_as_listed_with_the_pinned_id() -> None:
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": _user("split")}
    r = await _post("/v1/messages", {**ask, "stream": True})
    payloads = _sse_payloads(r.text)
    assert [p["delta"]["text"] for p in payloads if p["type"] == "content_block_delta"] == DELTAS
    assert payloads[0]["message"]["id"] == "mock-1"
    body = (await _post("/v1/messages", ask)).json()
    assert (body["id"], body["content"][0]["text"]) == ("mock-1", TEXT)


async def test_a_token_limit_cuts_the_deltas_where_it_cuts_the_text() -> None:
    body = {"model": "gpt-4o", "messages": _user("split"), "stream": True, "max_tokens": 2}
    payloads = _sse_payloads((await _post("/v1/chat/completions", body)).text)
    deltas = _chat_deltas(payloads)
    assert "".join(deltas) == "Café \U0001f600"  # two tokens: "Café", " 😀"
    assert deltas == ["Caf", "é ", "\U0001f600"]
    assert payloads[-1]["choices"][0]["finish_reason"] == "length"


async def test_a_script_step_pins_its_own_deltas_and_id() -> None:
    body = {"model": "gpt-4o", "messages": _user("steps"), "stream": True}
    payloads = _sse_payloads((await _post("/v1/chat/completions", body)).text)
    assert _chat_deltas(payloads) == ["one ", "step"]
    assert payloads[0]["id"] == "step-1"


async def test_other_rules_keep_the_seeded_id_and_the_clock() -> None:
    body = (await _post("/v1/chat/completions", {"model": "gpt-4o", "messages": _user("x")})).json()
    assert body["id"].startswith("chatcmpl-") and body["created"] == 1_767_225_600


@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
def test_render_writes_the_pinned_fixture(api: str, tmp_path: Path) -> None:
    line = {
        "chat": {"model": "gpt-4o", "messages": _user("split")},
        "responses": {"model": "gpt-4o", "input": "split"},
        "messages": {"model": "claude-sonnet-4-5", "max_tokens": 50, "messages": _user("split")},
    }[api]
    [streamed] = render_requests(_mock(), [json.dumps(line)], api, stream=True)  # type: ignore[arg-type]
    text = streamed.data.decode()
    assert text.count('"mock-1"') >= 1 and "chatcmpl-" not in text and "resp_" not in text
    assert all(json.dumps(d, ensure_ascii=False) in text for d in DELTAS)  # each delta whole, in an event
    [whole] = render_requests(_mock(), [json.dumps(line)], api)  # type: ignore[arg-type]
    assert json.loads(whole.data)["id"] == "mock-1"


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("stream: {deltas: abc}", "rules.yaml:4:22: `stream.deltas`: input should be a list, got 'abc'"),
        (
            "stream: {deltas: [a, 2]}",
            "rules.yaml:4:26: `stream.deltas[1]`: input should be a valid string, got 2",
        ),
        (
            "stream: {created: -1}",
            "rules.yaml:4:23: `stream.created`: input should be greater than or equal to 0, got -1",
        ),
        ("stream: {id: ''}", "rules.yaml:4:18: `stream.id`: string should have at least 1 character, got ''"),
        (
            "stream: {chunk_chars: 2}",
            "rules.yaml:2:5: rule 'a' has no answer: give `output`, `generate`, "
            "`template`, `schema`, `script` or `sequence`, or an `error`",
        ),
    ],
)
def test_rule_file_mistakes_in_the_new_keys_are_located(line: str, error: str) -> None:
    from synthgpt.rules.loader import RuleFileError

    with pytest.raises(RuleFileError) as info:
        load_text(f"rules:\n  - name: a\n    match: always\n    {line}\n", "rules.yaml")
    assert str(info.value) == error
