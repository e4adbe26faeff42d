"""Rules see every API by name (`api: [gemini, ollama, cohere, bedrock]`), and one rule answers the same
text through every wire format, in process (`InProcessTransport2`)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from synthgpt.rules.loader import load_text
from synthgpt.testing import InProcessTransport2

RULES = """
seed: 3
rules:
  - name: new-apis
    match: {api: [gemini, ollama, cohere, bedrock], last_user: {contains: colour}}
    output: {text: "Teal, mostly."}
  - name: embeddings
    match: {api: embeddings}
    generate: embeddings
  - name: rest
    match: always
    output: {text: "Something else."}
"""
ASK = "Which colour?"
CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("/v1beta/models/gemini-2.5-flash:generateContent", {"contents": [{"parts": [{"text": ASK}]}]},
     lambda b: b["candidates"][0]["content"]["parts"][0]["text"]),
    ("/api/chat", {"model": "llama3.2", "stream": False, "messages": [{"role": "user", "content": ASK}]},
     lambda b: b["message"]["content"]),
    ("/api/generate", {"model": "llama3.2", "stream": False, "prompt": ASK}, lambda b: b["response"]),
    ("/v2/chat", {"model": "command-a-03-2025", "messages": [{"role": "user", "content": ASK}]},
     lambda b: b["message"]["content"][0]["text"]),
    ("/model/amazon.nova-pro-v1:0/converse", {"messages": [{"role": "user", "content": [{"text": ASK}]}]},
     lambda b: b["output"]["message"]["content"][0]["text"]),
    ("/v1/chat/completions", {"model": "gpt-4o", "messages": [{"role": "user", "content": ASK}]},
     lambda b: "Something else." if b["choices"][0]["message"]["content"] == "Something else." else None),
]  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Any:
    mock = load_text(RULES).mock()
    with httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t") as c:
        yield c


@pytest.mark.parametrize(("path", "body", "text"), CASES, ids=[c[0] for c in CASES])
def test_one_rule_answers_through_every_new_api(
    client: Any, path: str, body: dict[str, Any], text: Any
) -> None:
    first = client.post(path, json=body)
    assert first.status_code == 200, first.text
    expected = "Something else." if path.startswith("/v1/chat") else "Teal, mostly."
    assert text(first.json()) == expected
    assert client.post(path, json=body).content == first.content  # same request, same bytes


@pytest.mark.parametrize(
    ("path", "body", "vectors"),
    [
        ("/v1/models/text-embedding-004:batchEmbedContents",
         {"requests": [{"content": {"parts": [{"text": "tea"}]}}]}, lambda b: b["embeddings"][0]["values"]),
        ("/api/embed", {"model": "nomic-embed-text", "input": "tea"}, lambda b: b["embeddings"][0]),
    ],
)  # fmt: skip
def test_embeddings_routes_are_the_embeddings_api(
    client: Any, path: str, body: dict[str, Any], vectors: Any
) -> None:
    answer = client.post(path, json=body)
    assert answer.status_code == 200 and len(vectors(answer.json())) == 768


def test_a_model_the_rules_do_not_serve_is_a_provider_shaped_404() -> None:
    mock = load_text(
        "models: [gemini-2.5-*]\nrules:\n  - {name: a, match: always, output: {text: x}}\n"
    ).mock()
    with httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t") as c:
        ok = c.post(
            "/v1beta/models/gemini-2.5-pro:generateContent", json={"contents": [{"parts": [{"text": "x"}]}]}
        )
        missing = c.post(
            "/v1beta/models/gemini-1.0:generateContent", json={"contents": [{"parts": [{"text": "x"}]}]}
        )
        ollama = c.post("/api/chat", json={"model": "llama3.2", "stream": False, "messages": []})
    assert ok.status_code == 200
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"
    assert ollama.status_code == 404 and set(json.loads(ollama.content)) == {"error"}


def test_both_gemini_stream_framings_of_one_body_are_kept_apart(client: Any) -> None:
    body = {"contents": [{"parts": [{"text": ASK}]}]}
    path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    for _ in range(2):  # the second round is answered from the memo: still each in its own framing
        sse, array = client.post(path + "?alt=sse", json=body), client.post(path, json=body)
        assert sse.headers["content-type"].startswith("text/event-stream") and sse.content.startswith(
            b"data: {"
        )
        assert array.headers["content-type"] == "application/json" and array.content.startswith(
            b'[{"candidates"'
        )
        assert [c["candidates"] for c in array.json()] == [
            json.loads(e[6:])["candidates"] for e in sse.content.decode().strip().split("\n\n")
        ]


@pytest.mark.parametrize(
    ("path", "body", "ctype"),
    [
        ("/api/chat", {"model": "llama3.2", "messages": [{"role": "user", "content": "!MOCK_SLOW:2! Hi"}]},
         "application/x-ndjson"),
        ("/model/amazon.nova-pro-v1:0/converse-stream",
         {"messages": [{"role": "user", "content": [{"text": "!MOCK_SLOW:2! Hi"}]}]},
         "application/vnd.amazon.eventstream"),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent",
         {"contents": [{"parts": [{"text": "!MOCK_SLOW:2! Hi"}]}]}, "application/json"),
    ],
)  # fmt: skip
def test_paced_streams_keep_their_framing(client: Any, path: str, body: dict[str, Any], ctype: str) -> None:
    from botocore.eventstream import EventStreamBuffer

    slow = client.post(path, json=body)
    assert slow.status_code == 200 and slow.headers["content-type"] == ctype
    if ctype.endswith("eventstream"):
        buffer = EventStreamBuffer()
        buffer.add_data(slow.content)
        assert [m.headers[":event-type"] for m in buffer][-1] == "metadata"
    elif ctype.endswith("ndjson"):
        assert json.loads(slow.content.splitlines()[-1])["done"] is True
    else:
        assert json.loads(slow.content)[-1]["candidates"][0]["finishReason"] == "STOP"
