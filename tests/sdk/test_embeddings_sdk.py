"""The official `openai` SDK's embeddings against a real `synthgpt serve`: base64 (its default) and float.

The SDK validates a base64 answer against its float-list type *before* decoding it, so a client with
`_strict_response_validation=True` cannot use the default encoding (against the real API too): the strict
client here asks for floats, the default client for base64.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import httpx
import openai
import pytest

from synthgpt.generators.embedding import embed_text

MODEL = "text-embedding-3-small"
DOCS = [
    "Reset your password from the account settings page.",
    "Our quarterly revenue grew by twelve percent.",
    "The train to Lyon leaves from platform four.",
    "Cats sleep for most of the day.",
]


@pytest.fixture
def oai(live_server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=live_server + "/v1", api_key="k") as c:
        yield c


@pytest.fixture
def strict(live_server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=live_server + "/v1", api_key="k", _strict_response_validation=True) as c:
        yield c


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_default_base64_and_float_give_the_same_vectors(
    oai: openai.OpenAI, strict: openai.OpenAI, live_server: str
) -> None:
    b64 = oai.embeddings.create(model=MODEL, input=DOCS)  # the SDK asks for base64 and decodes it
    flt = strict.embeddings.create(model=MODEL, input=DOCS, encoding_format="float")
    assert [d.index for d in b64.data] == [0, 1, 2, 3]
    assert [d.embedding for d in b64.data] == [d.embedding for d in flt.data]
    assert all(len(d.embedding) == 1536 for d in flt.data)
    assert all(math.isclose(math.fsum(x * x for x in d.embedding), 1.0, abs_tol=1e-5) for d in flt.data)
    assert flt.data[2].embedding == list(embed_text(DOCS[2], model=MODEL, seed=0))  # server seed 0
    assert (flt.model, flt.usage.prompt_tokens, flt.usage.total_tokens) == (
        MODEL,
        b64.usage.prompt_tokens,
        b64.usage.prompt_tokens,
    )
    raw = httpx.post(live_server + "/v1/embeddings", json={"model": MODEL, "input": "hi"}).json()
    assert isinstance(raw["data"][0]["embedding"], list)  # the API default is float
    with pytest.raises(openai.APIResponseValidationError):
        strict.embeddings.create(model=MODEL, input="hi")  # strict validation sees the base64 string


def test_a_vector_does_not_depend_on_its_batch(oai: openai.OpenAI) -> None:
    alone = oai.embeddings.create(model=MODEL, input=DOCS[1]).data[0].embedding
    batch = oai.embeddings.create(model=MODEL, input=DOCS).data[1].embedding
    assert alone == batch


def test_dimensions_and_large_model(oai: openai.OpenAI) -> None:
    short = oai.embeddings.create(model=MODEL, input="hello", dimensions=256).data[0].embedding
    assert len(short) == 256
    assert len(oai.embeddings.create(model="text-embedding-3-large", input="hello").data[0].embedding) == 3072


def test_token_arrays(oai: openai.OpenAI, strict: openai.OpenAI) -> None:
    r = strict.embeddings.create(model=MODEL, input=[[15339, 1917], [15339]], encoding_format="float")
    assert len(r.data) == 2 and r.data[0].embedding != r.data[1].embedding
    assert r.data[0].embedding == oai.embeddings.create(model=MODEL, input=[15339, 1917]).data[0].embedding


def test_retrieval_ranks_sensibly(oai: openai.OpenAI) -> None:
    docs = [d.embedding for d in oai.embeddings.create(model=MODEL, input=DOCS).data]
    queries = {
        "How do I reset my password?": 0,
        "What was the revenue growth this quarter?": 1,
        "Which platform does the Lyon train leave from?": 2,
        "Do cats sleep a lot?": 3,
    }
    for query, best in queries.items():
        q = oai.embeddings.create(model=MODEL, input=query).data[0].embedding
        ranked = sorted(range(len(DOCS)), key=lambda i: -cosine(q, docs[i]))
        assert ranked[0] == best, query


def test_bad_input_is_a_400(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oai.embeddings.create(model=MODEL, input="")
    assert (info.value.status_code, info.value.param) == (400, "input")


def test_triggers_in_an_input_work_as_on_every_api(oai: openai.OpenAI, live_server: str) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        oai.with_options(max_retries=0).embeddings.create(model=MODEL, input=["a", "b !MOCK_ERROR:429!"])
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after-ms"] == "10"
    assert caught.value.body == {
        "message": "Rate limit reached for requests. Please try again shortly."
        " (synthgpt trigger !MOCK_ERROR:429!)",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    delayed = oai.embeddings.create(model=MODEL, input=["tide pools !MOCK_DELAY:5!", "crabs"], dimensions=8)
    plain = oai.embeddings.create(model=MODEL, input=["tide pools ", "crabs"], dimensions=8)
    assert [d.embedding for d in delayed.data] == [d.embedding for d in plain.data]
    calls = httpx.get(live_server + "/_synthgpt/calls").json()
    assert [c["rule"] for c in calls[-3:]] == ["embeddings_triggers", "embeddings_triggers", "embeddings"]
