"""`!MOCK_TRUNCATE!` and `!MOCK_DISCONNECT!` on a non-streaming request: the JSON body is cut in half
(they used to do nothing there). Truncate ends the response cleanly; disconnect drops the connection."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.model import Fault, StreamPlan
from synthgpt.server import create_app
from synthgpt.server.responses import json_bytes
from synthgpt.testing import openai_client


def ask(text: str) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


def client(mock: MockGPT) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(mock)), base_url="http://synth")


async def test_truncate_sends_the_first_half_of_the_body_and_ends_cleanly() -> None:
    asked = ask("Tell me about tides !MOCK_TRUNCATE:3!")
    async with client(MockGPT(seed=0)) as c:
        cut = await c.post("/v1/chat/completions", json=asked)
    req = ChatCodec().decode(asked, {}, {})
    whole = json_bytes(ChatCodec().body(MockGPT(seed=0).generate(req), req))  # the answer, uncut
    assert cut.status_code == 200
    assert cut.headers["content-type"] == "application/json"
    assert cut.content == whole[: len(whole) // 2]
    assert cut.headers["content-length"] == str(len(whole) // 2)


async def test_a_rule_fault_cuts_the_body_on_every_api() -> None:
    plan = StreamPlan(faults=(Fault(kind="truncate", after=0),))
    mock = MockGPT([Rule("cut", m.always(), "A complete answer that will not arrive whole.", stream=plan)])
    async with client(mock) as c:
        for path, extra in (("/v1/responses", {"input": "hi"}), ("/v1/messages", {"max_tokens": 20})):
            body = {"model": "m", **extra} if "input" in extra else {**ask("hi"), **extra}
            reply = await c.post(path, json=body)
            assert reply.status_code == 200
            with pytest.raises(ValueError):
                reply.json()
            assert reply.content.startswith(b"{") and len(reply.content) > 10


def test_the_sdk_sees_a_body_that_does_not_parse() -> None:
    sdk = openai_client(MockGPT(seed=0), max_retries=0)
    with pytest.raises(ValueError, match=r"Unterminated string|Expecting"):
        sdk.chat.completions.create(**ask("hi !MOCK_TRUNCATE:1!"))


def test_disconnect_drops_the_connection_mid_body(live_server: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(live_server + "/v1/chat/completions", json=ask("hi !MOCK_DISCONNECT:1!"))
    sdk = openai.OpenAI(base_url=live_server + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        sdk.chat.completions.create(**ask("hi !MOCK_DISCONNECT:1!"))
    # the server lives on
    assert httpx.post(live_server + "/v1/chat/completions", json=ask("hi")).status_code == 200


async def test_the_cut_call_ends_with_its_fault_in_the_journal() -> None:
    mock = MockGPT(seed=0)
    async with client(mock) as c:
        await c.post("/v1/chat/completions", json=ask("hi !MOCK_TRUNCATE:3!"))
        await c.post("/v1/chat/completions", json=ask("hi"))
    assert [r.outcome for r in mock.journal] == ["fault", "done"]
