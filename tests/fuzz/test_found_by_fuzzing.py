"""Each bug the fuzz tests found, pinned with its exact answer (the properties alone would let a wording
or a status drift)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT
from synthgpt.errors import SchemaError
from synthgpt.generators.core import DrawContext
from synthgpt.generators.schema import FromSchema
from synthgpt.model import ModelRequest
from synthgpt.rules.loader import RuleFileError, load_text
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport
from tests.fuzz.test_rulefile_fuzz import TRAPS

ANTHROPIC = {"anthropic-version": "2023-06-01"}
SUPPORTED = (
    "$defs, $ref, additionalProperties, allOf, anyOf, const, definitions, enum, exclusiveMaximum, "
    "exclusiveMinimum, format, items, maxItems, maxLength, maximum, minItems, minLength, minimum, "
    "multipleOf, nullable, oneOf, pattern, prefixItems, properties, required, type, uniqueItems"
)
SUBSET = "synthgpt draws documents from a subset of JSON Schema; remove or rewrite that part of the schema."


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(transport=InProcessTransport(create_app(MockGPT(seed=0))), base_url="http://s") as c:
        yield c


def openai_error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def chat(**extra: Any) -> bytes:
    return json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}], **extra}).encode()


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


ONE_OF_TWICE = {"oneOf": [{"type": "string"}, {"type": "string"}]}

HTTP_CASES: list[tuple[str, str, bytes, dict[str, Any]]] = [
    (
        "lone surrogate escape (crashed hashing the request: 500)",
        "/v1/chat/completions",
        b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi \\ud800"}]}',
        openai_error(
            "We could not parse the JSON body of your request: a lone surrogate escape at line 1 column 66 "
            "is not valid Unicode text. Escape both halves of a surrogate pair, or send the character as "
            "UTF-8."
        ),
    ),
    (
        "UTF-8-encoded surrogate (json.loads(bytes) decodes it with surrogatepass)",
        "/v1/chat/completions",
        b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "\xed\xa0\x80"}]}',
        openai_error(
            "We could not parse the JSON body of your request: byte 62 is not valid UTF-8. The API expects a "
            "JSON object; check that the body is valid JSON and sent with content-type application/json."
        ),
    ),
    (
        "nesting past what the request model serializes (pydantic stops near 255: 500)",
        "/v1/chat/completions",
        chat(metadata={"a": nested(130)}),
        openai_error(
            "The JSON body of your request nests arrays and objects more than 128 levels deep. Flatten the "
            "request: no API input needs that much nesting."
        ),
    ),
    (
        "unsupported keyword in response_format (a rule error: 500)",
        "/v1/chat/completions",
        chat(response_format={"type": "json_schema", "json_schema": {"name": "d", "schema": {"not": {}}}}),
        openai_error(
            f"Invalid schema for response_format 'd': schema at '/': unsupported keyword 'not'; supported: "
            f"{SUPPORTED}. {SUBSET}",
            "response_format.json_schema.schema",
        ),
    ),
    (
        "impossible tool parameters",
        "/v1/chat/completions",
        chat(
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {
                            "type": "object",
                            "properties": {"a": {"type": "string", "minLength": 5, "maxLength": 2}},
                        },
                    },
                }
            ]
        ),
        openai_error(
            f"Invalid schema for function 'f': schema at '/properties/a': minLength 5 is greater than "
            f"maxLength 2. {SUBSET}",
            "tools[0].function.parameters",
            "invalid_function_parameters",
        ),
    ),
    (
        "Responses text.format whose oneOf branches overlap (no document matches exactly one: 500)",
        "/v1/responses",
        json.dumps(
            {
                "model": "gpt-4o",
                "input": "x",
                "text": {"format": {"type": "json_schema", "name": "d", "schema": ONE_OF_TWICE}},
            }
        ).encode(),
        openai_error(
            "Invalid schema for the response format: synthgpt could not draw a document from it: no value "
            "found at the root that matches exactly one `oneOf` branch; make the branches exclusive (e.g. a "
            "`const` tag per branch) or use `anyOf`.",
            "text.format.schema",
        ),
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "expected"), [c[1:] for c in HTTP_CASES], ids=[c[0] for c in HTTP_CASES]
)
def test_bad_requests_answer_400_in_shape(
    client: httpx.Client, path: str, body: bytes, expected: Any
) -> None:
    r = client.post(path, content=body)
    assert (r.status_code, r.json()) == (400, expected)


def test_anthropic_tool_schema_refused_in_anthropic_words(client: httpx.Client) -> None:
    body = {
        "model": "c",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"name": "f", "input_schema": {"type": "object", "not": {}}}],
    }
    r = client.post("/v1/messages", json=body, headers=ANTHROPIC)
    assert r.status_code == 400
    assert r.json()["error"] == {
        "type": "invalid_request_error",
        "message": "tools.0.input_schema: Invalid schema for tool 'f': schema at '/': unsupported keyword "
        f"'not'; supported: {SUPPORTED}. {SUBSET}",
    }


RULE_CASES = [
    (
        "alias bomb",
        TRAPS["alias bomb"],
        "r.yaml:1:17: the file expands to more than 200000 values (each use of "
        "a YAML alias `*name` repeats all it names); use fewer or smaller aliases",
    ),
    (
        "int of 5000 digits (ValueError escaped)",
        TRAPS["huge int"],
        "r.yaml:1:7: invalid YAML value: a number too long to read (5000 characters)",
    ),
    (
        "YAML nested 5000 deep (RecursionError escaped)",
        TRAPS["nested 5000"],
        "r.yaml:1:207: nesting deeper than 200 levels",
    ),
    (
        "matcher argument of the wrong type (crashed at the first request)",
        "rules: [{name: r, match: {last_user: {contains: [a]}}, output: {text: x}}]",
        "r.yaml:1:27: `last_user` argument `contains`: input should be a valid string, got list ['a']",
    ),
    (
        "generator argument of the wrong type",
        "rules: [{name: r, match: always, generate: {integer: [1, [2]]}}]",
        "r.yaml:1:45: `integer` argument `hi`: input should be a valid integer, got list [2]",
    ),
    (
        "schema with no finite document (every draw failed)",
        TRAPS["recursive ref tree"],
        "r.yaml:5:5: schema at '/': no finite document satisfies this schema: every way through its $refs "
        "requires another level (make a recursive property optional, or allow an empty array)",
    ),
    (
        "required property that additionalProperties: false forbids (drew an invalid document)",
        "rules: [{name: r, match: always, schema: {type: object, required: [id], properties: {}, "
        "additionalProperties: false}}]",
        "r.yaml:1:42: schema at '/': required property 'id' is not in `properties`, and "
        "`additionalProperties: false` allows no other: declare it or drop it from `required`",
    ),
    (
        "clock at YAML's infinity (a RuleError with no line, a traceback from `synthgpt check`)",
        "clock: .inf\nrules: [{name: r, match: always, output: {text: x}}]",
        "r.yaml:1:8: FixedClock: t must be a finite number, got inf",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_rule_file_errors_are_located(text: str, expected: str) -> None:
    with pytest.raises(RuleFileError) as info:
        load_text(text, "r.json" if text.startswith("{") else "r.yaml")
    assert str(info.value) == expected


def _draws(schema: dict[str, Any]) -> list[Any]:
    gen = FromSchema(schema)
    req = ModelRequest.from_dict({"model": "synth-1", "messages": [{"role": "user", "content": "x"}]})
    return [gen.draw(DrawContext(req, seed)) for seed in range(8)]


@pytest.mark.parametrize(
    ("schema", "allowed"),
    [
        # allOf of a nullable and a non-nullable boolean: null is not allowed (was drawn)
        ({"allOf": [{"type": "boolean", "nullable": True}, {"type": "boolean"}]}, {"true", "false"}),
        # enum values the other keywords rule out are never drawn
        ({"type": "string", "enum": ["a", "bbbb", 3], "maxLength": 2}, {'"a"'}),
        # oneOf: a value that only one branch accepts
        ({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0.5, "maximum": 0.75}]}, None),
        # a property the other allOf part forbids is not drawn
        (
            {
                "allOf": [
                    {"type": "object", "properties": {}, "additionalProperties": False},
                    {"type": "object", "properties": {"id": {"type": "string"}}},
                ]
            },
            {"{}"},
        ),
    ],
)
def test_documents_fixed_by_fuzzing(schema: dict[str, Any], allowed: set[str] | None) -> None:
    docs = _draws(schema)
    if allowed is not None:
        assert {json.dumps(d) for d in docs} <= allowed
    else:
        assert all(isinstance(d, int) or (isinstance(d, float) and not d.is_integer()) for d in docs), docs


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"allOf": [{"type": "null"}, {"enum": [False]}]},
            "schema at '/': no `enum` value satisfies the schema's other keywords "
            "({'type': 'null', 'enum': [False]})",
        ),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": False, "minItems": 2},
            "schema at '/': minItems 2 is more than the 1 prefixItems `items: false` allows",
        ),
        (
            {"$ref": "#/$defs/a", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}},
            "schema at '/': no finite document satisfies this schema: every way through its $refs requires "
            "another level (make a recursive property optional, or allow an empty array)",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "$defs": {"x": {"not": {}}},
                "if": {},
            },
            f"schema at '/': unsupported keyword 'if'; supported: {SUPPORTED}",
        ),
        (  # `nullable` let the const's null past the enum: a document the schema rejects (SCALE=50)
            {"allOf": [{"const": None}, {"type": "string", "nullable": True}, {"enum": [False]}]},
            "schema at '/': the `const` value does not satisfy the schema's other keywords ({'const': None, "
            "'type': 'string', 'nullable': True, 'enum': [False]})",
        ),
        (  # an `enum` value 3,000 levels deep: RecursionError checking it (SYNTHGPT_FUZZ_SCALE=50)
            {"type": "array", "items": {}, "enum": [nested(3_000)]},
            "schema at '/': the schema, or a value in it, nests too deeply to read",
        ),
    ],
)
def test_schemas_refused_by_fuzzing(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError) as info:
        FromSchema(schema)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"input": [[1] * 8193]},
            openai_error(
                "This model's maximum context length is 8192 tokens, however you requested 8193 tokens "
                "(8193 in your prompt; 0 for the completion). Please reduce your prompt; or completion "
                "length.",
                "input[0]",
            ),
        ),
        (
            {"input": [[1] * 8000] * 38},
            openai_error(
                "Requested 304000 tokens, max 300000 tokens per request", "input", "max_tokens_per_request"
            ),
        ),
    ],
)
def test_embeddings_longer_than_the_model_reads(client: httpx.Client, body: Any, expected: Any) -> None:
    """A 100 000-token input took 18 s to embed (holding the server up) instead of a 400."""
    r = client.post("/v1/embeddings", json={"model": "text-embedding-3-small", **body})
    assert (r.status_code, r.json()) == (400, expected)


@pytest.mark.parametrize("box", ["x" * 40, ["json"], 7])
def test_a_bedrock_tool_input_schema_that_is_no_object(client: httpx.Client, box: Any) -> None:
    """`inputSchema` sent as a string was read with `.get` (AttributeError: a 500), found at
    SYNTHGPT_FUZZ_SCALE=30; Bedrock's own answer for a missing one is this 400."""
    spec = {"name": "get_weather", "inputSchema": box}
    body = {"messages": [{"role": "user", "content": [{"text": "Weather in Oslo?"}]}],
            "toolConfig": {"tools": [{"toolSpec": spec}]}}  # fmt: skip
    r = client.post("/model/anthropic.claude-sonnet-4-5-v1:0/converse", json=body)
    assert r.status_code == 400
    assert r.headers["x-amzn-errortype"].startswith("ValidationException")
    assert r.json() == {
        "message": "1 validation error detected: Value null at "
        "'toolConfig.tools.1.member.toolSpec.inputSchema' failed to satisfy constraint: "
        "Member must not be null"
    }


@pytest.mark.parametrize(("document", "kind"), [(True, "a boolean"), ([1], "an array"), ("x", "a string")])
def test_a_cohere_document_that_is_no_object(client: httpx.Client, document: Any, kind: str) -> None:
    """A tool result's `document: true` was read with `.get` (AttributeError: a 500), found at
    SYNTHGPT_FUZZ_SCALE=30."""
    content = [{"type": "document", "document": document}]
    body = {"model": "command-a-03-2025", "messages": [{"role": "user", "content": content}]}
    r = client.post("/v2/chat", json=body)
    assert r.status_code == 400
    assert r.json()["message"] == (
        f"invalid request: messages[0].content[0].document must be an object, got {kind}"
    )


def test_a_cohere_tool_call_whose_function_is_no_object(client: httpx.Client) -> None:
    """A `function` that is a string was read with `.get` by the neutral model's own reader
    (AttributeError: a 500), found at SYNTHGPT_FUZZ_SCALE=30."""
    call = {"id": "w_1", "type": "function", "function": "get_weather"}
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "tool_calls": [call]}]
    r = client.post("/v2/chat", json={"model": "command-a-03-2025", "messages": messages})
    assert r.status_code == 400
    assert r.json()["message"] == "Invalid value for 'messages[1].tool_calls[0].name': Field required"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"tools": [{"type": "function", "function": "f"}]},
         "Invalid value for 'tools[0].name': Field required"),
        ({"tool_choice": {"type": "function", "function": "f"}},
         "Invalid value for 'tool_choice.type': Extra inputs are not permitted"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]},
         "Invalid value for 'messages[0].tool_calls[0].name': Field required"),
    ],
)  # fmt: skip
def test_the_neutral_request_refuses_a_function_that_is_no_object(extra: Any, message: str) -> None:
    """`ModelRequest.from_dict` (the neutral form: the engine's public input, `explain`'s `neutral`, and
    what some codecs hand on as it came) read a string `function` with `.get`/`.items`: an
    AttributeError, not the RequestError it promises."""
    from synthgpt.errors import RequestError

    with pytest.raises(RequestError) as info:
        ModelRequest.from_dict({"model": "m", "messages": [], **extra})
    assert info.value.message == message
