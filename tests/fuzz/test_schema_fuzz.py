"""Property tests of structured output over random JSON schemas built from every keyword `from_schema`
supports (hypothesis-jsonschema is not a dependency: the schemas are made here).

A schema is either refused at once with a SchemaError naming its JSON pointer, or every document drawn
from it validates with `jsonschema`. Over HTTP, a request's schema that cannot be honoured is a 400 in
the provider's shape naming the schema's field, never a 500.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from synthgpt import MockGPT, ModelRequest
from synthgpt.errors import DrawError, SchemaError
from synthgpt.generators.core import DrawContext
from synthgpt.generators.schema import FromSchema
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport
from tests.fuzz._support import fuzz, trapped

NAMES = ["id", "name", "email", "age", "price", "tags", "items", "url", "created_at", "x", "a b", "ü", "$ref"]
PATTERNS = [
    r"^[a-z]{2,5}$",
    r"^\d{3}-\d{2}$",
    r"^(yes|no)$",
    r"[A-F0-9]+",
    r"^.{0,3}$",
    r"^$",
    r"a|b|c",
    r"^\w+@\w+\.com$",
    r"(ab)*",
    r"^[^a-z]{1,2}$",
]
FORMATS = ["date-time", "date", "time", "email", "uri", "uuid", "hostname", "ipv4", "ipv6", "color", ""]
UNSUPPORTED = [
    "patternProperties",
    "if",
    "then",
    "else",
    "not",
    "contains",
    "minProperties",
    "propertyNames",
    "dependentRequired",
    "unevaluatedProperties",
    "$dynamicRef",
    "additionalItems",
    "maxContains",
]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([0.5, -1.25]), st.text("abz", max_size=3)
)


@st.composite
def leaf(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "null", "enum", "const", "multi"]))
    if kind == "enum":
        return {"enum": draw(st.lists(scalars, min_size=1, max_size=4))}
    if kind == "const":
        return {"const": draw(scalars)}
    if kind == "multi":
        return {
            "type": draw(
                st.lists(
                    st.sampled_from(["string", "integer", "null", "boolean"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
        }
    s: dict[str, Any] = {"type": kind}
    if kind == "string":
        lo = draw(st.none() | st.integers(0, 12))
        hi = draw(st.none() | st.integers(0, 20))
        if lo is not None:
            s["minLength"] = lo
        if hi is not None:
            s["maxLength"] = hi
        extra = draw(st.sampled_from(["", "", "pattern", "format"]))
        if extra == "pattern":
            s["pattern"] = draw(st.sampled_from(PATTERNS))
        elif extra == "format":
            s["format"] = draw(st.sampled_from(FORMATS))
    elif kind in ("integer", "number"):
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if draw(st.integers(0, 3)) == 0:
                s[key] = draw(st.integers(-20, 20) | st.sampled_from([0.5, -2.5, 1e-9]))
        if draw(st.integers(0, 3)) == 0:
            s["multipleOf"] = draw(st.sampled_from([1, 2, 5, 0.5, 0.1, 0.25, 3]))
    if draw(st.integers(0, 4)) == 0:
        s["nullable"] = True
    return s


def node(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        kind = draw(st.sampled_from(["object", "object", "array", "anyOf", "oneOf", "allOf", "tuple", "ref"]))
        if kind == "object":
            props = draw(st.dictionaries(st.sampled_from(NAMES), children, max_size=4))
            s: dict[str, Any] = {"type": "object", "properties": props}
            names = list(props) + draw(st.lists(st.sampled_from(NAMES), max_size=1))
            s["required"] = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
            extra = draw(st.sampled_from([None, False, True, "schema"]))
            if extra == "schema":
                s["additionalProperties"] = draw(children)
            elif extra is not None:
                s["additionalProperties"] = extra
            return s
        if kind in ("array", "tuple"):
            s = {"type": "array"}
            if kind == "tuple":
                s["prefixItems"] = draw(st.lists(children, min_size=1, max_size=3))
                if draw(st.booleans()):
                    s["items"] = False
            else:
                s["items"] = draw(children)
            for key in ("minItems", "maxItems"):
                if draw(st.integers(0, 2)) == 0:
                    s[key] = draw(st.integers(0, 4))
            if draw(st.integers(0, 3)) == 0:
                s["uniqueItems"] = True
            return s
        if kind == "ref":
            return {"$ref": "#/$defs/" + draw(st.sampled_from(["a", "b"]))}
        return {kind: draw(st.lists(children, min_size=1, max_size=3))}

    return build()


schemas = st.recursive(leaf(), node, max_leaves=10)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    root = draw(schemas)
    root = dict(root)
    root["$defs"] = {"a": draw(schemas), "b": draw(leaf())}
    if draw(st.integers(0, 4)) == 0:  # annotations are welcome anywhere
        root.update(title="T", description="d", examples=[1], default=None)
    return root


def standard(schema: Any) -> Any:
    """The schema as draft 2020-12 reads it: OpenAPI's `nullable` becomes a `null` type."""
    if isinstance(schema, list):
        return [standard(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: standard(v) if k not in ("enum", "const", "examples", "default") else v for k, v in schema.items()
    }
    if k_props := out.get("properties"):
        out["properties"] = {k: standard(v) for k, v in schema["properties"].items()}
        del k_props
    if "$defs" in schema:
        out["$defs"] = {k: standard(v) for k, v in schema["$defs"].items()}
    if out.pop("nullable", False):
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "const" in out:
            out = {
                "anyOf": [
                    {k: v for k, v in out.items() if k != "const"} | {"const": out["const"]},
                    {"type": "null"},
                ]
            }
        elif "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*types, "null"] if "null" not in types else types
    return out


def draw_docs(schema: dict[str, Any], seeds: int = 4) -> Iterator[Any]:
    gen = FromSchema(schema)
    for seed in range(seeds):
        req = ModelRequest.from_dict(
            {"model": "synth-1", "messages": [{"role": "user", "content": f"doc {seed}"}]}
        )
        yield gen.draw(DrawContext(seed=seed, request=req))


@fuzz(300)
@given(schema=documents())
def test_drawn_documents_validate(schema: dict[str, Any]) -> None:
    original = copy.deepcopy(schema)
    try:
        docs = list(draw_docs(schema))
    except SchemaError as exc:
        assert str(exc).startswith("schema at '/"), str(exc)
        return
    except DrawError as exc:  # the schema allows nothing the generator could find: said plainly
        assert str(exc).startswith("from_schema:"), str(exc)
        return
    assert schema == original  # drawing never changes the caller's schema
    validator = jsonschema.Draft202012Validator(standard(schema))
    for doc in docs:
        json.dumps(doc, allow_nan=False)
        try:
            errors = list(validator.iter_errors(doc))
        except RecursionError:  # jsonschema loops on a `$ref` that reaches itself through `anyOf` alone
            assume(False)
            return
        assert not errors, (
            f"{json.dumps(doc)[:500]}\n{errors[0].message[:300]} at {list(errors[0].absolute_path)}"
        )


@fuzz(120)
@given(schema=documents(), keyword=st.sampled_from(UNSUPPORTED), where=st.integers(0, 3))
def test_unsupported_keywords_are_refused_by_pointer(
    schema: dict[str, Any], keyword: str, where: int
) -> None:
    try:
        FromSchema(schema)
    except SchemaError:
        assume(False)  # a schema wrong already may be refused for that first
    target = schema
    for _ in range(where):  # somewhere below the root when there is a below
        subs = [v for v in target.get("properties", {}).values()] + target.get("anyOf", [])
        if not subs:
            break
        target = subs[0]
    target[keyword] = {} if keyword not in ("if", "then", "else", "not") else {"type": "string"}
    with pytest.raises(SchemaError) as info:
        FromSchema(schema)
    assert f"unsupported keyword {keyword!r}" in str(info.value)


# --------------------------------------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    app = create_app(MockGPT(seed=0))
    with httpx.Client(transport=InProcessTransport(app), base_url="http://synth", timeout=20) as c:
        yield c


def _requests(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any], str, dict[str, str]]]:
    msgs = [{"role": "user", "content": "give me a document"}]
    tool = {"name": "f", "description": "d"}
    return [
        (
            "/v1/chat/completions",
            {
                "model": "gpt-4o",
                "messages": msgs,
                "response_format": {"type": "json_schema", "json_schema": {"name": "doc", "schema": schema}},
            },
            "response_format.json_schema.schema",
            {},
        ),
        (
            "/v1/chat/completions",
            {
                "model": "gpt-4o",
                "messages": msgs,
                "tool_choice": "required",
                "tools": [{"type": "function", "function": {**tool, "parameters": schema}}],
            },
            "tools[0].function.parameters",
            {},
        ),
        (
            "/v1/responses",
            {
                "model": "gpt-4o",
                "input": "give me a document",
                "text": {"format": {"type": "json_schema", "name": "doc", "schema": schema}},
            },
            "text.format.schema",
            {},
        ),
        (
            "/v1/responses",
            {
                "model": "gpt-4o",
                "input": "go",
                "tool_choice": "required",
                "tools": [{"type": "function", **tool, "parameters": schema}],
            },
            "tools[0].parameters",
            {},
        ),
        (
            "/v1/messages",
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "messages": msgs,
                "tool_choice": {"type": "any"},
                "tools": [{**tool, "input_schema": schema}],
            },
            "tools.0.input_schema",
            {"anthropic-version": "2023-06-01"},
        ),
    ]


@fuzz(60)
@given(schema=documents(), unsupported=st.none() | st.sampled_from(UNSUPPORTED))
def test_request_schemas_answer_or_refuse_in_shape(
    client: httpx.Client, schema: dict[str, Any], unsupported: str | None
) -> None:
    if unsupported is not None:
        schema[unsupported] = {}
    for path, body, param, headers in _requests(schema):
        with trapped() as trap:
            r = client.post(path, json=body, headers=headers)
        assert not trap.records, trap.report()
        assert r.status_code in (200, 400), (path, r.status_code, r.text[:1000])
        if r.status_code == 400:
            err = r.json()
            if path == "/v1/messages":
                assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error", err
                assert err["error"]["message"].startswith((param + ": ", "Invalid schema for function")), err
            else:
                # refused when decoded: the schema's field; when no document could be drawn for a tool's
                # arguments: no param (the request's tool list may have been filtered), the tool named
                assert err["error"]["param"] == param or (
                    err["error"]["param"] is None
                    and "Invalid schema for function 'f'" in err["error"]["message"]
                ), err
                assert err["error"]["type"] == "invalid_request_error", err
        elif unsupported is not None:
            raise AssertionError(f"{path} accepted a schema with {unsupported!r}")
