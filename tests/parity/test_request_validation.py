"""Item 4 of the parity issue: one validation for Python `generate()` and the HTTP routes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, RequestError
from synthgpt.server import create_app

USER = [{"role": "user", "content": "hi"}]
EMPTY_MODEL = "Invalid 'model': empty string. Expected the name of a model, but got an empty string instead."
NO_MESSAGES = (
    "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array "
    "instead."
)


@pytest.mark.parametrize(
    ("request_", "message", "param", "code"),
    [
        ({"messages": USER}, "Missing required parameter: 'model'.", "model", "missing_required_parameter"),
        ({"model": "", "messages": USER}, EMPTY_MODEL, "model", "empty_string"),
        ({"model": "  ", "messages": USER}, EMPTY_MODEL, "model", "empty_string"),
        ({"model": "gpt-4o", "messages": []}, NO_MESSAGES, "messages", "empty_array"),
        ({"model": "gpt-4o"}, NO_MESSAGES, "messages", "empty_array"),
        (
            {"model": "e", "api": "embeddings"},
            "Invalid 'input': empty array. Expected at least one input.",
            "input",
            "empty_array",
        ),
    ],
)
def test_python_generate_refuses_what_http_refuses(
    request_: dict[str, Any], message: str, param: str, code: str
) -> None:
    mock = MockGPT(seed=0)
    with pytest.raises(RequestError) as info:
        mock.generate(request_)
    assert isinstance(info.value, ValueError)
    assert (info.value.message, info.value.param, info.value.code) == (message, param, code)
    assert str(info.value) == f"{message} (param: {param})"
    assert mock.records == []


def test_embeddings_inputs_without_messages_are_answerable_in_python() -> None:
    out = MockGPT(seed=0).generate({"model": "text-embedding-3-small", "api": "embeddings", "inputs": ["a"]})
    assert len(out.embeddings) == 1


async def _post(path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    app = create_app(MockGPT(seed=0))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        return await client.post(path, json=body, headers=headers or {})


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "", "messages": USER}),
        ("/v1/chat/completions", {"model": "", "messages": USER, "stream": True}),
        ("/v1/responses", {"model": "", "input": "hi"}),
        ("/v1/embeddings", {"model": "", "input": "hi"}),
    ],
)
async def test_an_empty_model_is_a_400_in_the_openai_shape(path: str, body: dict[str, Any]) -> None:
    r = await _post(path, body)
    assert r.status_code == 400
    assert r.json() == {
        "error": {
            "message": EMPTY_MODEL,
            "type": "invalid_request_error",
            "param": "model",
            "code": "empty_string",
        }
    }


async def test_an_empty_model_is_a_400_in_the_anthropic_shape() -> None:
    r = await _post("/v1/messages", {"model": "", "max_tokens": 10, "messages": USER},
                    {"anthropic-version": "2023-06-01"})  # fmt: skip
    assert r.status_code == 400
    body = r.json()
    assert body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": EMPTY_MODEL},
        "request_id": body["request_id"],
    }
    assert body["request_id"].startswith("req_")
