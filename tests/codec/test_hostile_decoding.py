"""Bodies that crashed a decoder (500 with a traceback in the log) found by the decode corpus: each is now
a 400 in its provider's shape naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport
from tests.fuzz.test_http_fuzz import RESPONSES
from tests.fuzz.test_http_fuzz_gemini_ollama_bedrock_cohere import BEDROCK, GEMINI, OLLAMA

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("responses-tool-type-list", "/v1/responses", {**RESPONSES, "tools": [{"type": [], "name": "f"}]},
     "Invalid type for 'tools[0].type': expected a string, but got an array instead."),
    ("gemini-calling-config-number", "/v1beta/models/gemini-2.5-flash:generateContent",
     {**GEMINI, "toolConfig": {"functionCallingConfig": 3}},
     "Invalid value at 'toolConfig.functionCallingConfig': expected an object, got an integer."),
    ("gemini-embed-no-content", "/v1beta/models/gemini-embedding-001:batchEmbedContents",
     {"requests": [{"content": []}]}, "* EmbedContentRequest.content: contains an empty Part."),
    ("ollama-stop-number", "/api/chat", {**OLLAMA, "options": {"stop": 5}},
     "options.stop must be a string or an array of strings"),
    ("bedrock-system-number", "/model/anthropic.claude-sonnet-4-5-v1:0/converse", {**BEDROCK, "system": 1},
     "Value at 'system' failed to satisfy constraint: Member must be a list"),
    ("bedrock-stop-number", "/model/anthropic.claude-sonnet-4-5-v1:0/converse",
     {**BEDROCK, "inferenceConfig": {"stopSequences": 2}},
     "Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must be a list"),
]  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    app = create_app(MockGPT(seed=0))
    with httpx.Client(transport=InProcessTransport(app), base_url="http://synth", timeout=20) as c:
        yield c


@pytest.mark.parametrize(("path", "body", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_in_shape_not_crashed(
    client: httpx.Client, path: str, body: dict[str, Any], message: str
) -> None:
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert message in r.text
