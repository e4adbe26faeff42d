"""A conversation that fills nothing in a document is found without the walk (`fill_hints`), and gives
exactly what the walk gives, on every kind of conversation the walk reads."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt.generators.conversation_fill import fill_from_conversation, fill_hints
from synthgpt.generators.core import DrawContext
from synthgpt.generators.schema import FromSchema
from synthgpt.model import ModelRequest

_ITEM = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}, "price": {"type": "number"}},
    "required": ["sku", "quantity", "price"],
}
SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "customer": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer"},
                    "city": {"type": "string"},
                },
                "required": ["name", "age", "city"],
            },
            "items": {"type": "array", "items": _ITEM, "minItems": 1, "maxItems": 3},
            "total": {"type": "number"},
            "status": {"enum": ["a", 2]},
        },
        "required": ["order_id", "customer", "items", "total", "status"],
    },
    {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "note": {"type": "string"}},
        "required": ["query", "limit", "note"],
    },
    {"type": "array", "items": _ITEM, "minItems": 2, "maxItems": 2},
    {"type": "object", "properties": {"sku": {"type": "string"}, "count": {}}, "required": ["sku", "count"]},
]
TEXTS = [
    "Make up an order",
    "Make up an order for tide pools #12",
    "Jason is 25 years old and lives in Lisbon",
    "the quantity is 4 and the total: 99.5",
    "Send it to a@b.co with `ls -la` in /tmp",
    'Search for "red shoes" please',
    "order for Ana Silva",
    "",
]


def _request(text: str, tool: bool) -> ModelRequest:
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    if tool:
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"sku": "AB-1"}'},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"total": 12.5}'},
        ]
    return ModelRequest.from_dict({"model": "m", "messages": messages})


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_hints_give_what_the_walk_gives(index: int) -> None:
    schema = SCHEMAS[index]
    hints = fill_hints(schema)
    assert hints is not None
    gen = FromSchema(schema)
    for text in TEXTS:
        for tool in (False, True):
            req = _request(text, tool)
            for seed in range(25):
                doc = gen.draw(DrawContext(req, seed))
                walked = fill_from_conversation(doc, schema, req)
                hinted = fill_from_conversation(doc, schema, req, hints=hints)
                assert repr(hinted) == repr(walked), (text, tool, seed)


def test_schemas_the_walk_resolves_get_no_hints() -> None:
    assert fill_hints({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}) is None
    assert fill_hints({"type": "array", "items": {"anyOf": [{"type": "string"}]}}) is None
    assert fill_hints({"allOf": [{"type": "object"}]}) is None


def test_a_quiet_conversation_skips_the_walk() -> None:
    hints = fill_hints(SCHEMAS[0])
    assert hints is not None and hints.names and not hints.queries
    assert set(hints.numbers) == {"age", "quantity", "price", "total", "status"}
