"""A conversation that fills nothing in a document is found without the walk (`fill_hints`), and gives
exactly what the walk gives, on every kind of conversation the walk reads."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.generators import conversation_fill as cf
from synthgpt.generators import request_args as ra
from synthgpt.generators.conversation_fill import FillHints, fill_from_conversation, fill_hints
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


# -- the quiet-conversation test, each of its parts against the way it was --------------------------------

_PIECES = [
    *TEXTS, "Make", "Tell me", "Ana Silva", "for Ana", "in Lisbon", "to New York", "from Paris to Tokyo",
    "Lisbon", "Hello Lisbon", "New York", "near Porto", "Mr Smith", "the quantity is 4", "price: 3",
    "total = 9.5", "age 40", "aged 30", "status is 2", "subtotal 4", "tax of 5", "“curly”", "it's", "x.py",
    "run make", "25 minutes", "#17", "tide pools", "the creatures", "São Paulo", "Ünïcode", "İ", "\n", " ",
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=8).map(" ".join) | st.text(max_size=30)
SETTINGS = settings(max_examples=1500, deadline=None, derandomize=True)


def reference_person_name(text: str) -> str | None:
    """`_person_name` as it was: the place read first."""
    place = ra.place_name(text)
    for found in cf._CAPITALISED.finditer(text):
        words = found.group(0).split()
        while words and words[0].lower() in cf._NOT_NAMES:
            words = words[1:]
        phrase = " ".join(words)
        if phrase and phrase != place and (place is None or phrase not in place):
            return phrase
    return None


def reference_fills_nothing(hints: FillHints, text: str) -> bool:
    """`_fills_nothing` as it was: every number field asked, the message's subject always read."""
    if not text:
        return True
    if hints.names and reference_person_name(text) is not None:
        return False
    if any(cf._stated_number(text, field) is not None for field in hints.numbers):
        return False
    only_queries, subject = ra.message_fills_only_queries(text)
    return only_queries and not (hints.queries and subject is not None)


_HINTS = [
    FillHints(names, numbers, queries)
    for names in (False, True)
    for queries in (False, True)
    for numbers in ((), ("age",), ("quantity", "price", "subtotal", "tax", "total", "status"), ("", "line2"))
]


@SETTINGS
@given(texts)
def test_the_quiet_conversation_test_is_what_it_was(text: str) -> None:
    assert cf._person_name.__wrapped__(text) == reference_person_name(text)
    assert ra.message_gives_nothing(text) == ra.message_fills_only_queries(text)[0]
    for hints in _HINTS:
        assert cf._fills_nothing(hints, text) == reference_fills_nothing(hints, text), hints
        assert cf._states_a_number(text, hints.numbers) == any(
            cf._stated_number.__wrapped__(text, f) is not None for f in hints.numbers
        )


def test_the_pieces_reach_every_branch() -> None:
    """The texts above hold names, places, stated numbers and values (the property is not all True)."""
    assert reference_person_name("Ana Silva lives in Lisbon") == "Ana Silva"
    assert reference_person_name("order for Ana Silva") is None  # the place the text names
    assert reference_person_name("Tell me about tide pools") is None  # only openers: no place read
    assert cf._states_a_number("the quantity is 4", ("quantity",))
    assert not ra.message_gives_nothing("in Lisbon") and not ra.message_gives_nothing("run make")
    assert ra.message_gives_nothing("Make up an order for Tell me about tide pools #3")


# the patterns as they were, led by `\b`: the ones now led by a class find the same matches
_OLD_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2}\b")
_OLD_PLACE = re.compile(rf"\b(in|at|to|from|for|near|around)\s+((?:{ra._NAME})(?:\s+(?:{ra._NAME}))*)")
_REGEX_PIECES = [
    *_PIECES, "in", "at", "to", "from", "for", "near", "around", "main", "cat", "into", "Into", "fort",
    "_in", "9at", "éin", "Lin", "A", "Ab", "AB", "Ab-Cd", "Ab Cd Ef Gh", "aB", "_Ab", "9Ab", "éAb", "Ünder",
    "Émile", "O'Neil", "NYC", "Al-Amin", "-", "'", ".", ",", "\t",
]  # fmt: skip
regex_texts = (
    st.lists(st.sampled_from(_REGEX_PIECES), max_size=10).map(" ".join)
    | st.lists(st.sampled_from(_REGEX_PIECES), max_size=10).map("".join)
    | st.text(max_size=40)
    | st.text(alphabet="inatofrmeAILNTx _-'é9", max_size=40)
)


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in pattern.finditer(text)]


@settings(max_examples=4000, deadline=None, derandomize=True)
@given(regex_texts)
def test_the_regexes_led_by_a_class_match_as_those_led_by_a_word_boundary(text: str) -> None:
    assert _matches(cf._CAPITALISED, text) == _matches(_OLD_CAPITALISED, text)
    assert _matches(ra._PLACE, text) == _matches(_OLD_PLACE, text)


def test_the_regex_pieces_reach_every_branch() -> None:
    assert _matches(cf._CAPITALISED, "Ab aAb _Ab Émile") == [((0, 2), ())]
    assert [m.group(2) for m in ra._PLACE.finditer("main Lisbon, in Porto, into Rome, fin Oslo at NYC")] == [
        "Porto", "NYC",
    ]  # fmt: skip
