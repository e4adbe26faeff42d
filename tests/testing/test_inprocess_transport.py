"""The in-process transports: no socket, and streamed bodies reach the client as the app sends them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx
import httpx2
import openai
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.testing import (
    AsyncInProcessTransport,
    AsyncInProcessTransport2,
    InProcessTransport,
    InProcessTransport2,
    LiveServer,
    as_asgi_app,
    openai_client,
)

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "tell me a story"}]}
SLOW_TEXT = "one two three four five six seven eight nine ten"


def _slow_mock() -> MockGPT:
    # interval_ms makes every frame its own write; 1 ms keeps the test fast
    return MockGPT([Rule("slow", m.always(), SLOW_TEXT, stream={"interval_ms": 1, "chunk_chars": 8})], seed=2)


Scope = MutableMapping[str, Any]
App = Callable[[Scope, Any, Any], Awaitable[None]]


class Gate:
    """Holds the app right after its first body write until the client says it has that write."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.release = threading.Event()
        self.writes = 0
        self.finished = threading.Event()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        async def gated_send(message: MutableMapping[str, Any]) -> None:
            await send(message)
            if message["type"] == "http.response.body" and message.get("body"):
                self.writes += 1
                if self.writes == 1:
                    for _ in range(10_000):  # a buffering transport never lets the client see it: fail
                        if self.release.is_set():
                            break
                        await asyncio.sleep(0.001)
                    else:
                        raise RuntimeError("the client never received the first chunk")

        try:
            await self.app(scope, receive, gated_send)
        finally:
            self.finished.set()


SYNC = [(InProcessTransport, httpx.Client), (InProcessTransport2, httpx2.Client)]
ASYNC = [(AsyncInProcessTransport, httpx.AsyncClient), (AsyncInProcessTransport2, httpx2.AsyncClient)]


@pytest.mark.parametrize(("transport", "client"), SYNC)
def test_sync_first_chunk_arrives_before_the_rest_is_produced(transport: Any, client: Any) -> None:
    gate = Gate(as_asgi_app(_slow_mock()))
    with client(transport=transport(gate), base_url="http://t") as c, c.stream(
        "POST", "/v1/chat/completions", json={**CHAT, "stream": True}
    ) as r:
        chunks = r.iter_bytes()
        first = next(chunks)
        assert gate.writes == 1  # the app is parked after its first write, and the client already has it
        assert first.startswith(b"data: {") and first.endswith(b"\n\n")
        gate.release.set()
        rest = list(chunks)
    assert len(rest) >= 5
    assert (first + b"".join(rest)).endswith(b"data: [DONE]\n\n")
    assert gate.writes == 1 + len(rest)


@pytest.mark.parametrize(("transport", "client"), ASYNC)
async def test_async_first_chunk_arrives_before_the_rest_is_produced(transport: Any, client: Any) -> None:
    gate = Gate(as_asgi_app(_slow_mock()))
    async with client(transport=transport(gate), base_url="http://t") as c, c.stream(
        "POST", "/v1/chat/completions", json={**CHAT, "stream": True}
    ) as r:
        chunks = r.aiter_bytes()
        first = await chunks.__anext__()
        assert gate.writes == 1
        gate.release.set()
        rest = [c async for c in chunks]
    assert gate.writes == 1 + len(rest) and len(rest) >= 5
    assert first.startswith(b"data: {")


def test_sdk_stream_yields_chunks_while_the_app_is_parked() -> None:
    gate = Gate(as_asgi_app(_slow_mock()))
    client = openai_client(gate)
    stream = client.chat.completions.create(**CHAT, stream=True)
    first = next(iter(stream))
    assert first.choices[0].delta.role == "assistant" and gate.writes == 1
    gate.release.set()
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == SLOW_TEXT
    client.close()


def test_closing_early_stops_the_app() -> None:
    gate = Gate(as_asgi_app(_slow_mock()))
    with httpx2.Client(transport=InProcessTransport2(gate), base_url="http://t") as c:
        with c.stream("POST", "/v1/chat/completions", json={**CHAT, "stream": True}) as r:
            next(r.iter_bytes())
        # closing the response sent http.disconnect / cancelled the app: it ends without the release
        assert gate.finished.wait(5)
    assert gate.writes == 1


def test_bodies_are_byte_identical_to_a_live_server() -> None:
    mock = MockGPT(seed=5)
    with httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t") as c:
        local = c.post("/v1/chat/completions", json=CHAT)
        local_stream = c.post("/v1/chat/completions", json={**CHAT, "stream": True})
    with LiveServer(MockGPT(seed=5)) as server, httpx2.Client(base_url=server.url) as c:
        remote = c.post("/v1/chat/completions", json=CHAT)
        remote_stream = c.post("/v1/chat/completions", json={**CHAT, "stream": True})
    assert local.status_code == remote.status_code == 200
    assert local.content == remote.content
    assert local_stream.content == remote_stream.content
    assert local.headers["x-request-id"] == remote.headers["x-request-id"]


def test_a_disconnect_fault_is_a_cut_connection() -> None:
    mock = MockGPT(seed=1)
    body = {**CHAT, "messages": [{"role": "user", "content": "hi !MOCK_DISCONNECT:2!"}], "stream": True}
    with httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t") as c, c.stream(
        "POST", "/v1/chat/completions", json=body
    ) as r:
        assert r.status_code == 200
        with pytest.raises(httpx2.RemoteProtocolError, match="peer closed connection"):
            r.read()
    client = openai_client(mock)
    with pytest.raises(openai.APIConnectionError):
        list(client.chat.completions.create(**body))
    client.close()


def test_error_answers_and_app_crashes() -> None:
    mock = MockGPT(seed=1)
    client = openai_client(mock)
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "!MOCK_ERROR:500!"}])
    assert info.value.status_code == 500
    client.close()

    async def crash(scope: Scope, receive: Any, send: Any) -> None:
        raise ValueError("bug in the app")

    with httpx.Client(transport=InProcessTransport(crash)) as c, pytest.raises(ValueError, match="bug in"):
        c.get("http://t/")


def test_request_reaches_the_app_as_sent() -> None:
    seen: dict[str, Any] = {}

    async def echo(scope: Scope, receive: Any, send: Any) -> None:
        message = await receive()
        seen.update(path=scope["path"], query=scope["query_string"], method=scope["method"],
                    headers=dict(scope["headers"]), body=message["body"])  # fmt: skip
        await send({"type": "http.response.start", "status": 201, "headers": [(b"x-a", b"1")]})
        await send({"type": "http.response.body", "body": b"ok"})

    with httpx.Client(transport=InProcessTransport(echo)) as c:
        r = c.post("http://t/v1/x%20y?a=1&b=2", content=b"payload", headers={"X-Key": "k"})
    assert (r.status_code, r.headers["x-a"], r.content) == (201, "1", b"ok")
    assert seen["path"] == "/v1/x y" and seen["query"] == b"a=1&b=2" and seen["method"] == "POST"
    assert seen["headers"][b"x-key"] == b"k" and seen["body"] == b"payload"
    with pytest.raises(TypeError, match="expected a MockGPT or an ASGI app"):
        InProcessTransport(42)


def test_the_read_timeout_applies_between_writes() -> None:
    mock = MockGPT(seed=1)
    delayed = {**CHAT, "messages": [{"role": "user", "content": "hi !MOCK_DELAY:3000!"}]}
    timed_out = pytest.raises(httpx2.ReadTimeout, match="no data from the app within the read timeout")
    with httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t", timeout=0.2) as c, timed_out:
        c.post("/v1/chat/completions", json=delayed)
    client = openai_client(mock, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(**delayed)
    slow = {**CHAT, "messages": [{"role": "user", "content": "hi !MOCK_SLOW:3000!"}], "stream": True}
    stream = client.chat.completions.create(**slow)
    with pytest.raises(openai.APITimeoutError):
        list(stream)  # the first frames arrive, then the wait for the next one exceeds the timeout
    client.close()


async def test_the_read_timeout_applies_to_async_transports() -> None:
    mock = MockGPT(seed=1)
    delayed = {**CHAT, "messages": [{"role": "user", "content": "hi !MOCK_DELAY:3000!"}]}
    transport = AsyncInProcessTransport(mock)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=0.2) as c:
        with pytest.raises(httpx.ReadTimeout):
            await c.post("/v1/chat/completions", json=delayed)
