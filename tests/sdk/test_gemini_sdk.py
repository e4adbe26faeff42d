"""The official `google-genai` client against a real `synthgpt serve` process (`http_options` base URL).

Every answer the client gets is also validated against google-genai's own pydantic types, which forbid
unknown fields (`GenerateContentResponse.model_validate`): the client itself would pass unknown fields by.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from google import genai
from google.genai import errors, types
from pydantic import BaseModel

MODEL = "gemini-2.5-flash"
NO_AFC = types.AutomaticFunctionCallingConfig(disable=True)


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


class City(BaseModel):
    name: str
    population: int
    country: str


@pytest.fixture
def gem(live_server: str) -> Iterator[genai.Client]:
    options = types.HttpOptions(base_url=live_server, retry_options=types.HttpRetryOptions(attempts=1))
    with genai.Client(api_key="k", http_options=options) as c:
        yield c


def strict(response: types.GenerateContentResponse) -> types.GenerateContentResponse:
    """The raw JSON of `response` re-validated with unknown fields forbidden."""
    raw = response.model_dump(mode="json", exclude_none=True, exclude={"sdk_http_response"})
    return types.GenerateContentResponse.model_validate(raw)


def test_generate_text(gem: genai.Client) -> None:
    r = gem.models.generate_content(
        model=MODEL,
        contents="Tell me about tea",
        config=types.GenerateContentConfig(system_instruction="Brief."),
    )
    strict(r)
    (candidate,) = r.candidates or []
    assert candidate.finish_reason == types.FinishReason.STOP and candidate.index == 0
    assert candidate.content is not None and candidate.content.role == "model"
    assert r.text and "tea" in r.text.lower()
    assert r.model_version == MODEL and r.response_id and len(r.response_id) == 22
    usage = r.usage_metadata
    assert usage is not None and usage.prompt_token_count and usage.candidates_token_count
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count


def test_same_request_same_bytes_on_v1_and_v1beta(live_server: str) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Name a colour"}]}]}
    answers = [
        httpx.post(
            f"{live_server}/{v}/models/{MODEL}:generateContent", json=body, headers={"x-goog-api-key": "k"}
        )
        for v in ("v1", "v1beta", "v1")
    ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert answers[0].content == answers[1].content == answers[2].content


def test_structured_output_from_a_pydantic_schema(gem: genai.Client) -> None:
    config = types.GenerateContentConfig(response_mime_type="application/json", response_schema=City)
    r = gem.models.generate_content(model=MODEL, contents="A big city, please", config=config)
    strict(r)
    assert isinstance(r.parsed, City)
    # property_ordering (what the client sends for a pydantic model) decides the key order
    assert list(json.loads(r.text or "")) == ["name", "population", "country"]


def test_structured_output_from_a_json_schema(gem: genai.Client) -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
        "required": ["tags"],
    }
    config = types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=schema)
    r = gem.models.generate_content(model=MODEL, contents="Tags for a blog post", config=config)
    doc = json.loads(r.text or "")
    assert isinstance(doc["tags"], list) and len(doc["tags"]) >= 2


def test_function_call_and_response_loop(gem: genai.Client) -> None:
    config = types.GenerateContentConfig(tools=[get_weather], automatic_function_calling=NO_AFC)
    first = gem.models.generate_content(model=MODEL, contents="What is the weather in Paris?", config=config)
    strict(first)
    (call,) = first.function_calls or []
    assert call.name == "get_weather" and call.args == {"city": "Paris"}
    assert first.candidates and first.candidates[0].finish_reason == types.FinishReason.STOP
    history: list[Any] = [
        types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")]),
        first.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(name="get_weather",
                                                                            response={"result": "sunny"})]),
    ]  # fmt: skip
    second = gem.models.generate_content(model=MODEL, contents=history, config=config)
    strict(second)
    assert not second.function_calls and "sunny" in (second.text or "")


def test_automatic_function_calling(gem: genai.Client) -> None:
    config = types.GenerateContentConfig(tools=[get_weather])
    r = gem.models.generate_content(model=MODEL, contents="Weather in Lyon?", config=config)
    assert "sunny in Lyon" in (r.text or "")
    assert [c.role for c in r.automatic_function_calling_history or []] == ["user", "model", "user"]


def test_forced_function_call(gem: genai.Client) -> None:
    choice = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode="ANY", allowed_function_names=["get_weather"]
        )
    )
    config = types.GenerateContentConfig(
        tools=[get_weather], tool_config=choice, automatic_function_calling=NO_AFC
    )
    r = gem.models.generate_content(model=MODEL, contents="Hello there", config=config)
    assert [c.name for c in r.function_calls or []] == ["get_weather"]


def test_thoughts_when_asked_for(gem: genai.Client) -> None:
    thinking = types.ThinkingConfig(include_thoughts=True, thinking_budget=256)
    r = gem.models.generate_content(
        model=MODEL,
        contents="Why is the sky blue?",
        config=types.GenerateContentConfig(thinking_config=thinking),
    )
    strict(r)
    parts = r.candidates[0].content.parts if r.candidates and r.candidates[0].content else []
    assert [bool(p.thought) for p in parts or []] == [True, False]
    assert r.usage_metadata is not None and (r.usage_metadata.thoughts_token_count or 0) > 0
    plain = gem.models.generate_content(model=MODEL, contents="Why is the sky blue?")
    assert not any(p.thought for p in plain.candidates[0].content.parts or [])  # type: ignore[union-attr, index]


def test_stream_folds_to_the_answer(gem: genai.Client) -> None:
    config = types.GenerateContentConfig(max_output_tokens=200)
    chunks = list(
        gem.models.generate_content_stream(model=MODEL, contents="Tell me about tea", config=config)
    )
    whole = gem.models.generate_content(model=MODEL, contents="Tell me about tea", config=config)
    assert len(chunks) > 3
    for c in chunks:
        strict(c)
    assert "".join(c.text or "" for c in chunks) == whole.text
    assert chunks[-1].usage_metadata == whole.usage_metadata
    assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_async_stream(gem: genai.Client, live_server: str) -> None:
    async def run() -> str:
        out = []
        options = types.HttpOptions(base_url=live_server)
        async with genai.Client(api_key="k", http_options=options).aio as aio:
            async for c in await aio.models.generate_content_stream(model=MODEL, contents="Say hi"):
                out.append(c.text or "")
        return "".join(out)

    assert asyncio.run(run()) == gem.models.generate_content(model=MODEL, contents="Say hi").text


def test_embeddings(gem: genai.Client) -> None:
    config = types.EmbedContentConfig(output_dimensionality=16)
    r = gem.models.embed_content(
        model="gemini-embedding-001", contents=["red apple", "green apple"], config=config
    )
    vectors = [e.values or [] for e in r.embeddings or []]
    assert [len(v) for v in vectors] == [16, 16]
    again = gem.models.embed_content(model="gemini-embedding-001", contents=["green apple"], config=config)
    assert (again.embeddings or [])[0].values == vectors[1]
    default = gem.models.embed_content(model="gemini-embedding-001", contents="tea")
    assert len((default.embeddings or [])[0].values or []) == 3072


def test_embed_content_route(live_server: str) -> None:
    body = {"content": {"parts": [{"text": "tea"}]}, "outputDimensionality": 4}
    r = httpx.post(f"{live_server}/v1beta/models/text-embedding-004:embedContent", json=body)
    assert r.status_code == 200 and len(r.json()["embedding"]["values"]) == 4


def test_count_tokens_matches_the_usage(gem: genai.Client) -> None:
    counted = gem.models.count_tokens(model=MODEL, contents="Tell me about tea")
    answered = gem.models.generate_content(model=MODEL, contents="Tell me about tea")
    assert counted.total_tokens == (
        answered.usage_metadata.prompt_token_count if answered.usage_metadata else -1
    )


def test_error_in_googles_shape(gem: genai.Client) -> None:
    with pytest.raises(errors.ClientError) as caught:
        gem.models.generate_content(model=MODEL, contents="!MOCK_ERROR:429! hi")
    assert (caught.value.code, caught.value.status) == (429, "RESOURCE_EXHAUSTED")
    with pytest.raises(errors.ServerError) as server:
        gem.models.generate_content(model=MODEL, contents="!MOCK_ERROR:503! hi")
    assert (server.value.code, server.value.status) == (503, "UNAVAILABLE")


def test_bad_request_is_invalid_argument(live_server: str) -> None:
    url = f"{live_server}/v1beta/models/{MODEL}:generateContent"
    r = httpx.post(url, json={"contents": [{"parts": [{"text": "hi"}]}], "temperature": 1})
    assert r.status_code == 400
    assert r.json() == {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                  "message": 'Invalid JSON payload received. Unknown name "temperature": '
                                             "Cannot find field."}}  # fmt: skip
    empty = httpx.post(url, json={})
    assert empty.status_code == 400 and "contents is not specified" in empty.json()["error"]["message"]


def test_mid_stream_error_raises(gem: genai.Client) -> None:
    with pytest.raises(errors.ServerError) as caught:
        list(
            gem.models.generate_content_stream(
                model=MODEL, contents="!MOCK_STREAM_ERROR:2! Tell me about tea"
            )
        )
    assert (caught.value.code, caught.value.status) == (500, "INTERNAL")


def test_truncated_stream_ends_early(gem: genai.Client) -> None:
    chunks = list(
        gem.models.generate_content_stream(model=MODEL, contents="!MOCK_TRUNCATE:3! Tell me about tea")
    )
    assert len(chunks) == 3 and all(c.candidates and c.candidates[0].finish_reason is None for c in chunks)


def test_malformed_frame_fails_to_parse(gem: genai.Client) -> None:
    with pytest.raises(errors.UnknownApiResponseError):
        list(gem.models.generate_content_stream(model=MODEL, contents="!MOCK_MALFORMED:1! Tell me about tea"))


def test_disconnect_is_a_network_error(gem: genai.Client) -> None:
    # google-genai reads with httpx2 where it is installed, else httpx
    with pytest.raises((httpx.RemoteProtocolError, httpx2.RemoteProtocolError)):
        list(
            gem.models.generate_content_stream(model=MODEL, contents="!MOCK_DISCONNECT:2! Tell me about tea")
        )


def test_models_list_and_get(gem: genai.Client, live_server: str) -> None:
    names = [m.name for m in gem.models.list()]
    assert names[:3] == ["models/gemini-2.5-pro", "models/gemini-2.5-flash", "models/gemini-2.5-flash-lite"]
    model = gem.models.get(model=MODEL)
    assert model.name == "models/" + MODEL and model.input_token_limit and model.supported_actions
    assert "generateContent" in model.supported_actions
    beta = httpx.get(live_server + "/v1beta/models", headers={"x-goog-api-key": "k"})
    assert beta.status_code == 200 and beta.json()["models"][0]["name"] == "models/gemini-2.5-pro"
    openai_shape = httpx.get(live_server + "/v1/models")  # no Google header: OpenAI's list, as before
    assert openai_shape.json()["object"] == "list"
    unknown = httpx.get(live_server + "/v1beta/nope", headers={"x-goog-api-key": "k"})
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == "NOT_FOUND"
