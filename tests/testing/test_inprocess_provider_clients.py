"""In-process clients for the Gemini, Ollama and Cohere SDKs (`gemini_client`, `ollama_client`,
`cohere_client`): no socket, every call in the mock's journal under its API's name."""

from __future__ import annotations

import asyncio

from synthgpt import MockGPT
from synthgpt.testing import cohere_client, gemini_client, ollama_client


def test_gemini_client_sync_async_and_stream() -> None:
    mock = MockGPT(seed=0)
    client = gemini_client(mock)
    text = client.models.generate_content(model="gemini-2.5-flash", contents="Say hi").text
    chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents="Say hi")
    streamed = "".join(c.text or "" for c in chunks)

    async def run() -> str | None:
        return (await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Say hi")).text

    assert text and text == streamed == asyncio.run(run())
    assert [r.api for r in mock.records] == ["gemini"] * 3


def test_ollama_client() -> None:
    mock = MockGPT(seed=0)
    with ollama_client(mock) as client:
        answer = client.chat(model="llama3.2", messages=[{"role": "user", "content": "Say hi"}])
        vectors = client.embed(model="nomic-embed-text", input=["a", "b"]).embeddings
    assert answer.message.content and len(vectors) == 2
    assert [r.api for r in mock.records] == ["ollama", "embeddings"]


def test_cohere_client() -> None:
    mock = MockGPT(seed=0)
    client = cohere_client(mock)
    answer = client.chat(model="command-a-03-2025", messages=[{"role": "user", "content": "Say hi"}])
    assert answer.message.content and answer.finish_reason == "COMPLETE"
    assert [(r.api, r.model) for r in mock.records] == [("cohere", "command-a-03-2025")]
