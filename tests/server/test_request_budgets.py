"""One request must never stall everyone (issue 11, section 2): a request whose answer would go over a
budget is refused before any drawing, with a 400 in the API's error shape naming the field, the keyword
and the limit; legal but large requests still answer, within seconds."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT
from synthgpt.limits import Limits
from synthgpt.server import create_app

BIG = 1_000_000_000
USER = [{"role": "user", "content": "give me the data"}]


def _client(limits: Limits | None = None) -> httpx.AsyncClient:
    app = create_app(MockGPT(seed=0, limits=limits))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth", timeout=60)


def _chat_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": USER,
        "response_format": {"type": "json_schema", "json_schema": {"name": "d", "schema": schema}},
    }


def _nest(levels: int, leaf: dict[str, Any], **array: Any) -> dict[str, Any]:
    schema = leaf
    for _ in range(levels):
        schema = {"type": "array", "items": schema, **array}
    return schema


NODE = {"type": "object", "properties": {f"p{i}": {"$ref": "#/$defs/node"} for i in range(40)}}
BUSHY = {  # every level has ~20 of its 40 optional properties, each the same schema again: 20**6 values
    "$defs": {"node": NODE},
    "$ref": "#/$defs/node",
}


# (id, schema, words the 400 message must contain)
REFUSED: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("minItems", {"type": "array", "minItems": BIG}, ("minItems 1000000000", "10000 values", "max_schema_")),
    ("minLength", {"type": "string", "minLength": BIG}, ("minLength 1000000000", "8388608", "max_answer_")),
    ("minLength with pattern", {"type": "string", "pattern": "^[a-z]+$", "minLength": BIG}, ("minLength",)),
    ("pattern quantifier", {"type": "string", "pattern": "^a{1000000000}$"}, ("pattern", "8388608")),
    ("nested quantifiers", {"type": "string", "pattern": "^((a{1000}){1000}){1000}$"}, ("pattern",)),
    ("nested arrays multiply", _nest(3, {"type": "integer"}, minItems=100), ("minItems 100", "/items")),
    (
        "strings in an array",
        {"type": "array", "minItems": 1_000, "items": {"type": "string", "minLength": 10_000}},
        ("minItems 1000", "max_answer_bytes"),
    ),
    (
        "minItems through a $ref",
        {
            "$defs": {"big": {"type": "array", "minItems": BIG}},
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/big"}},
            "required": ["x"],
        },
        ("minItems 1000000000", "/$defs/big"),
    ),
    (
        "required properties each big",
        {
            "type": "object",
            "properties": {f"p{i}": {"type": "string", "minLength": 1_000_000} for i in range(10)},
            "required": [f"p{i}" for i in range(10)],
        },
        ("max_answer_bytes",),
    ),
    (
        "uniqueItems past the distinct values",
        {"type": "array", "minItems": 100_000, "uniqueItems": True, "items": {"enum": [1, 2, 3]}},
        ("uniqueItems", "3 distinct"),
    ),
    ("recursion multiplying", BUSHY, ("grew past", "10000 values", "max_schema_values")),
    ("minProperties (unsupported)", {"type": "object", "minProperties": BIG}, ("minProperties",)),
]


@pytest.mark.parametrize(("schema", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
async def test_schemas_over_budget_are_a_400_naming_the_keyword(
    schema: dict[str, Any], words: tuple[str, ...]
) -> None:
    started = time.perf_counter()
    async with _client() as c:
        r = await c.post("/v1/chat/completions", json=_chat_schema(schema))
        health = await c.get("/healthz")
    assert time.perf_counter() - started < 3.0
    assert r.status_code == 400, r.text[:300]
    error = r.json()["error"]
    assert (error["type"], error["param"]) == ("invalid_request_error", "response_format.json_schema.schema")
    for word in words:
        assert word in error["message"]
    assert health.status_code == 200


LEGAL: list[tuple[str, dict[str, Any]]] = [
    ("maxItems huge", {"type": "array", "maxItems": BIG, "items": {"type": "integer"}}),
    ("maxLength huge", {"type": "string", "maxLength": BIG}),
    ("maxLength huge with a pattern", {"type": "string", "pattern": "^[a-z]+$", "maxLength": BIG}),
    ("open quantifier range", {"type": "string", "pattern": "^a{0,1000000000}$"}),
]


@pytest.mark.parametrize("schema", [c[1] for c in LEGAL], ids=[c[0] for c in LEGAL])
async def test_huge_upper_bounds_are_legal_and_quick(schema: dict[str, Any]) -> None:
    started = time.perf_counter()
    async with _client() as c:
        r = await c.post("/v1/chat/completions", json=_chat_schema(schema))
    assert r.status_code == 200, r.text[:300]
    assert len(r.content) < 20_000
    assert time.perf_counter() - started < 3.0


async def test_the_schema_limits_follow_the_app_limits() -> None:
    # exactly 51 values (the array and its 50 items): a drawn length above minItems would not fit either
    schema = {"type": "array", "minItems": 50, "maxItems": 50, "items": {"type": "integer"}}
    async with _client(Limits(max_schema_values=50)) as c:
        r = await c.post("/v1/chat/completions", json=_chat_schema(schema))
    assert r.status_code == 400
    assert "max_schema_values" in r.json()["error"]["message"]
    async with _client(Limits(max_schema_values=51)) as c:
        r = await c.post("/v1/chat/completions", json=_chat_schema(schema))
    assert r.status_code == 200


# ---------------------------------------------------------------------------------------------- embeddings


def _embed(n: int, dims: int | None, fmt: str = "float") -> dict[str, Any]:
    body: dict[str, Any] = {"model": "text-embedding-3-large", "input": ["hi"] * n, "encoding_format": fmt}
    return body if dims is None else {**body, "dimensions": dims}


async def test_embeddings_dimensions_are_capped_as_the_provider_does() -> None:
    async with _client() as c:
        r = await c.post("/v1/embeddings", json=_embed(2048, 16384))
    assert r.status_code == 400
    assert r.json()["error"] == {
        "message": "Invalid 'dimensions': expected a value between 1 and 3072, got 16384.",
        "type": "invalid_request_error",
        "param": "dimensions",
        "code": "invalid_value",
    }


@pytest.mark.parametrize("fmt", ["float", "base64"])
async def test_an_embeddings_answer_over_the_limit_is_refused_before_drawing(fmt: str) -> None:
    started = time.perf_counter()
    async with _client() as c:
        r = await c.post("/v1/embeddings", json=_embed(2048, 3072, fmt))
    assert time.perf_counter() - started < 2.0
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error["param"], error["code"]) == ("input", "answer_too_large")
    assert f"2048 embeddings of 3072 dimensions as {fmt}" in error["message"]
    assert "over this server's answer limit of 8388608 bytes (max_answer_bytes)" in error["message"]


async def test_a_legal_embeddings_batch_answers() -> None:
    async with _client() as c:
        r = await c.post("/v1/embeddings", json=_embed(100, 1536))
    assert r.status_code == 200
    assert len(r.json()["data"]) == 100 and len(r.json()["data"][0]["embedding"]) == 1536


# ----------------------------------------------------------------------------------------- n and logprobs


async def test_many_choices_with_logprobs_over_the_limit_are_a_400_naming_n() -> None:
    body = {"model": "gpt-4o", "messages": USER, "n": 128, "logprobs": True, "top_logprobs": 20}
    started = time.perf_counter()
    async with _client() as c:
        r = await c.post("/v1/chat/completions", json=body)
    assert time.perf_counter() - started < 2.0
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error["param"], error["code"]) == ("n", "answer_too_large")
    assert "over this server's answer limit of 8388608 bytes (max_answer_bytes)" in error["message"]


async def test_an_answer_over_the_limit_is_a_500_naming_the_rule() -> None:
    from synthgpt import Rule
    from synthgpt import matchers as m

    rules = [
        Rule("long", m.last_user("long"), "x" * 3000),  # over before encoding
        Rule("chunky", m.always(), "y" * 1200, stream={"chunk_chars": 1}),  # only its SSE is over
    ]
    app = create_app(MockGPT(seed=0, rules=rules, limits=Limits(max_answer_bytes=2000)))
    long = {"model": "gpt-4o", "messages": [{"role": "user", "content": "long"}]}
    chunky = {"model": "gpt-4o", "messages": USER, "stream": True}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        answers = {"long": await c.post("/v1/chat/completions", json=long),
                   "chunky": await c.post("/v1/chat/completions", json=chunky)}  # fmt: skip
        fits = await c.post("/v1/chat/completions", json={**chunky, "stream": False})
    for rule, resp in answers.items():
        assert resp.status_code == 500
        assert resp.json()["error"] == {
            "message": f"The rule {rule!r} answered more than this server's answer limit of 2000 bytes "
            "(max_answer_bytes).",
            "type": "server_error",
            "param": None,
            "code": "answer_too_large",
        }
    assert fits.status_code == 200


# 40 x 40 integers of 309 digits where the inner arrays may be empty: the smallest document is small, a
# drawn one ~500 KB
_GROWN = _nest(2, _nest(1, {"type": "integer", "minimum": 1e308}, minItems=0, maxItems=1),
               minItems=40, maxItems=40)  # fmt: skip


async def test_a_document_drawn_for_the_requests_schema_over_the_limit_is_a_400() -> None:
    # the request's schema made the document too large, not a rule: it was a 500 `answer_too_large`
    limits = Limits(max_answer_bytes=64 * 1024)
    tools = [{"type": "function", "function": {"name": "grow", "parameters": {
        "type": "object", "properties": {"rows": _GROWN}, "required": ["rows"]}}}]  # fmt: skip
    called = {"model": "gpt-4o", "messages": USER, "tools": tools, "tool_choice": "required"}
    async with _client(limits) as c:
        answer = await c.post("/v1/chat/completions", json=_chat_schema(_GROWN))
        call = await c.post("/v1/chat/completions", json=called)
        small = await c.post("/v1/chat/completions", json=_chat_schema(_nest(1, {"type": "integer"})))
    assert answer.status_code == 400, answer.text
    size = answer.json()["error"]["message"].split("about ")[1].split(" ")[0]
    assert answer.json()["error"] == {
        "message": "Invalid schema for the response format: the document synthgpt drew from it is about "
        f"{size} bytes, over this server's answer limit of 65536 bytes (max_answer_bytes). Lower its "
        "maxItems, maxLength or bounds, or serve with a larger --max-answer-bytes.",
        "type": "invalid_request_error",
        "param": "response_format.json_schema.schema",
        "code": "answer_too_large",
    }
    assert int(size) > 65536
    assert call.status_code == 400, call.text
    assert call.json()["error"]["message"].startswith(
        "Invalid schema for function 'grow': the document synthgpt drew from it is about "
    )
    assert call.json()["error"]["code"] == "answer_too_large"
    assert small.status_code == 200


async def test_a_document_over_the_limit_only_once_its_quotes_are_escaped_is_a_400_too() -> None:
    # 2,000 four-letter strings: ~14 kB of JSON, ~18 kB as the answer's escaped text. The check took the
    # JSON's own length as the most it could be and passed it; the encoded answer was then a 500
    words = {"type": "array", "minItems": 2000, "maxItems": 2000, "items": {"enum": ["abcd"]}}
    schema = {"type": "object", "properties": {"w": words}, "required": ["w"]}
    async with _client(Limits(max_answer_bytes=16384)) as c:
        r = await c.post("/v1/chat/completions", json=_chat_schema(schema))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"].startswith(
        "Invalid schema for the response format: the document synthgpt drew from it is about 18009 bytes, "
    )


# ------------------------------------------------------------------------------------------ the CLI flags


@pytest.mark.slow
def test_the_serve_flags_set_the_budgets(start_server: Any, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n"
        "  - name: loop\n"
        "    match: {last_user: loop}\n"
        '    template: "{% for i in range(20) %}{{ i }}{% endfor %}"\n'
        "  - name: vectors\n"
        "    match: {api: embeddings}\n"
        "    generate: embeddings\n"
        "  - name: doc\n"
        "    match: always\n"
        "    generate: from_request_schema\n",
        encoding="utf-8",
    )
    flags = ("--max-answer-bytes", "3000", "--max-schema-values", "5", "--template-max-ops", "10")
    with start_server(str(rules), *flags) as url:
        loop = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": [
            {"role": "user", "content": "loop"}]})  # fmt: skip
        schema = httpx.post(url + "/v1/chat/completions", json=_chat_schema({"type": "array", "minItems": 5}))
        vectors = httpx.post(url + "/v1/embeddings", json={"model": "text-embedding-3-small", "input": "hi"})
    assert (loop.status_code, loop.json()["error"]["code"]) == (500, "draw_over_budget")
    assert schema.status_code == 400
    assert "over this server's limit of 5 values (max_schema_values)" in schema.json()["error"]["message"]
    assert vectors.status_code == 400
    assert "answer limit of 3000 bytes (max_answer_bytes)" in vectors.json()["error"]["message"]
