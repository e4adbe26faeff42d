"""Logprobs through the app: the official `openai` SDK (strict response validation) reads what the Chat
Completions and Responses codecs send, streamed and not, and the bytes are the same on every run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.server.app import create_app
from synthgpt.testing import openai_client

TEXT = "Tides rise and fall twice a day, pulled by the Moon."
USER: Any = [{"role": "user", "content": "Tell me about tides"}]


def mock() -> MockGPT:
    return MockGPT(RuleSet([Rule("tides", m.always(), g.just(TEXT))]), seed=3)


@pytest.fixture
def client() -> Iterator[openai.OpenAI]:
    with openai_client(mock(), _strict_response_validation=True) as c:
        yield c


def test_chat_sdk_reads_logprobs(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-4o", messages=USER, logprobs=True, top_logprobs=3)
    logprobs = completion.choices[0].logprobs
    assert logprobs is not None and logprobs.content is not None and logprobs.refusal is None
    assert "".join(t.token for t in logprobs.content) == completion.choices[0].message.content == TEXT
    first = logprobs.content[0]
    assert first.top_logprobs[0].token == first.token == "Tide"
    assert len(first.top_logprobs) == 3
    assert first.top_logprobs[0].logprob == first.logprob > first.top_logprobs[1].logprob
    assert bytes(first.bytes or []) == b"Tide"


def test_chat_sdk_stream_assembles_the_same_logprobs(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=USER, logprobs=True, top_logprobs=3)
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o", messages=USER, logprobs=True, top_logprobs=3, stream=True
        )
    )
    streamed = [
        t for ch in chunks for c in ch.choices if c.logprobs is not None for t in c.logprobs.content or []
    ]
    assert plain.choices[0].logprobs is not None
    assert streamed == plain.choices[0].logprobs.content
    # the SDK's own stream helper folds chunk logprobs into the final completion
    with client.chat.completions.stream(
        model="gpt-4o", messages=USER, logprobs=True, top_logprobs=3
    ) as stream:
        events = list(stream)
        final = stream.get_final_completion()
    assert final.choices[0].logprobs is not None
    assert final.choices[0].logprobs.content == plain.choices[0].logprobs.content
    assert any(e.type == "logprobs.content.delta" for e in events)


def test_responses_sdk_reads_logprobs(client: openai.OpenAI) -> None:
    r = client.responses.create(
        model="gpt-4o", input="Tell me about tides", include=["message.output_text.logprobs"], top_logprobs=2
    )
    assert r.top_logprobs == 2
    message: Any = r.output[0]  # the SDK's union of every output item type
    assert message.type == "message"
    part = message.content[0]
    assert part.type == "output_text"
    assert "".join(lp.token for lp in part.logprobs) == part.text == TEXT
    assert [len(lp.top_logprobs) for lp in part.logprobs] == [2] * len(part.logprobs)
    assert part.logprobs[0].top_logprobs[0].logprob == part.logprobs[0].logprob


def test_responses_sdk_stream_carries_delta_logprobs(client: openai.OpenAI) -> None:
    plain = client.responses.create(
        model="gpt-4o", input="Tell me about tides", include=["message.output_text.logprobs"], top_logprobs=2
    )
    with client.responses.stream(
        model="gpt-4o", input="Tell me about tides", include=["message.output_text.logprobs"], top_logprobs=2
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert all("".join(lp.token for lp in d.logprobs) == d.delta for d in deltas)
    [done] = [e for e in events if e.type == "response.output_text.done"]
    # the SDK types the delta and done entries as two classes: compare their contents
    assert [lp.model_dump() for d in deltas for lp in d.logprobs] == [lp.model_dump() for lp in done.logprobs]
    # the helper's final response is a ParsedResponse (its parts add `parsed`): compare the logprobs
    final_item: Any = final.output[0]
    plain_item: Any = plain.output[0]
    assert final_item.content[0].logprobs == plain_item.content[0].logprobs
    assert final.id == plain.id and final.output_text == plain.output_text == TEXT


def test_responses_without_include_send_no_logprobs(client: openai.OpenAI) -> None:
    r = client.responses.create(model="gpt-4o", input="Tell me about tides", top_logprobs=2)
    item: Any = r.output[0]
    assert item.content[0].logprobs == []


async def post(body: dict[str, Any], path: str) -> httpx.Response:
    app = create_app(mock())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        return await c.post(path, json=body)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"messages": USER, "logprobs": True, "top_logprobs": 4}),
        ("/v1/chat/completions", {"messages": USER, "logprobs": True, "top_logprobs": 4, "stream": True}),
        ("/v1/responses", {"input": "Hi", "include": ["message.output_text.logprobs"], "top_logprobs": 4}),
        (
            "/v1/responses",
            {"input": "Hi", "include": ["message.output_text.logprobs"], "top_logprobs": 4, "stream": True},
        ),
    ],
)
async def test_same_bytes_from_two_apps(path: str, body: dict[str, Any]) -> None:
    first = await post({"model": "gpt-4o", **body}, path)
    second = await post({"model": "gpt-4o", **body}, path)
    assert first.status_code == 200
    assert first.content == second.content
    assert b'"top_logprobs":[{"token":"Tide"' in first.content


async def test_bad_top_logprobs_is_a_400() -> None:
    r = await post(
        {"model": "gpt-4o", "messages": USER, "logprobs": True, "top_logprobs": 21}, "/v1/chat/completions"
    )
    assert r.status_code == 400
    assert r.json()["error"]["param"] == "top_logprobs"
    r = await post({"model": "gpt-4o", "input": "Hi", "top_logprobs": 21}, "/v1/responses")
    assert (r.status_code, r.json()["error"]["code"]) == (400, "integer_above_max_value")
    assert json.loads(r.content)["error"]["param"] == "top_logprobs"
