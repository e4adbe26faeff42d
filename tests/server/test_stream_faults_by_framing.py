"""Every stream fault trigger on Gemini, Ollama, Bedrock and Cohere, read raw in process: the stream is cut,
broken or ended where the trigger says, in the API's own framing (SSE, JSON array, NDJSON, AWS event
stream)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
from botocore.eventstream import EventStreamBuffer

from synthgpt import MockGPT
from synthgpt.testing import InProcessTransport2


def _sse(data: bytes) -> list[str]:
    return [e.split("data: ", 1)[1] for e in data.decode().strip().split("\n\n") if e]


def _ndjson(data: bytes) -> list[str]:
    return data.decode().splitlines()


def _eventstream(data: bytes) -> list[str]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [m.payload.decode() for m in buffer]


# (path, body for a user text, frames of the bytes, is the last frame the healthy end?)
Api = tuple[str, Callable[[str], dict[str, Any]], Callable[[bytes], list[str]], Callable[[Any], bool]]
APIS: dict[str, Api] = {
    "gemini": ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
               lambda t: {"contents": [{"parts": [{"text": t}]}]}, _sse,
               lambda f: f.get("candidates", [{}])[0].get("finishReason") == "STOP"),
    "ollama": ("/api/chat", lambda t: {"model": "llama3.2", "messages": [{"role": "user", "content": t}]},
               _ndjson, lambda f: f.get("done") is True),
    "cohere": ("/v2/chat",
               lambda t: {"model": "c", "stream": True, "messages": [{"role": "user", "content": t}]},
               _sse,
               lambda f: f.get("type") == "message-end" and f["delta"].get("finish_reason") == "COMPLETE"),
    "bedrock": ("/model/m/converse-stream",
                lambda t: {"messages": [{"role": "user", "content": [{"text": t}]}]},
                _eventstream, lambda f: "usage" in f),
}  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(transport=InProcessTransport2(MockGPT(seed=0)), base_url="http://t") as c:
        yield c


def frames(client: httpx2.Client, api: str, text: str) -> list[str]:
    path, body, split, _ = APIS[api]
    r = client.post(path, json=body(text))
    assert r.status_code == 200
    return split(r.content)


@pytest.mark.parametrize("api", list(APIS))
def test_healthy_stream_ends_with_its_terminal_frame(client: httpx2.Client, api: str) -> None:
    got = frames(client, api, "Tell me about tea")
    assert APIS[api][3](json.loads(got[-1])) and len(got) > 4


@pytest.mark.parametrize("api", list(APIS))
def test_truncate(client: httpx2.Client, api: str) -> None:
    got = frames(client, api, "!MOCK_TRUNCATE:3! Tell me about tea")
    assert len(got) == 3 and not APIS[api][3](json.loads(got[-1]))


@pytest.mark.parametrize("api", list(APIS))
def test_malformed(client: httpx2.Client, api: str) -> None:
    got = frames(client, api, "!MOCK_MALFORMED:2! Tell me about tea")
    with pytest.raises(ValueError):
        json.loads(got[2])
    for i, f in enumerate(got):
        if i != 2:
            json.loads(f)
    assert APIS[api][3](json.loads(got[-1]))  # the stream goes on to its end


@pytest.mark.parametrize("api", list(APIS))
def test_stream_error(client: httpx2.Client, api: str) -> None:
    got = [json.loads(f) for f in frames(client, api, "!MOCK_STREAM_ERROR:2! Tell me about tea")]
    assert len(got) == 3 and not APIS[api][3](got[-1])
    last = got[-1]
    assert {"gemini": lambda: last["error"]["status"] == "INTERNAL", "ollama": lambda: set(last) == {"error"},
            "cohere": lambda: last["delta"]["finish_reason"] == "ERROR",
            "bedrock": lambda: set(last) == {"message"}}[api]()  # fmt: skip


@pytest.mark.parametrize("api", list(APIS))
def test_disconnect(client: httpx2.Client, api: str) -> None:
    path, body, _, _ = APIS[api]
    with pytest.raises(httpx2.RemoteProtocolError):
        client.post(path, json=body("!MOCK_DISCONNECT:2! Tell me about tea"))


@pytest.mark.parametrize("api", list(APIS))
def test_error_trigger_status(client: httpx2.Client, api: str) -> None:
    path, body, _, _ = APIS[api]
    r = client.post(path, json=body("!MOCK_ERROR:503! Tell me about tea"))
    assert r.status_code == 503 and r.headers["content-type"] == "application/json"
