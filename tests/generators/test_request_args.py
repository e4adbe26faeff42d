"""Default tool calls fill place- and query-like fields from what the user said, staying schema-valid."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from synthgpt import MockGPT
from synthgpt.generators.request_args import fill_from_request, place_name

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "query": {"type": "string", "maxLength": 40},
    },
    "required": ["city", "unit", "query"],
}


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("What's the weather in Lisbon?", "Lisbon"),
        ("Book a flight from São Paulo to New York", "São Paulo"),
        ("Any good food near NYC tonight", "NYC"),
        ("what's the weather in lisbon", None),
        ("Tell me about tide pools", None),
        # a capitalised word after "for" or "to" that starts a sentence or names a day is not a place
        ("Make up an order for Tell me about tide pools", None),
        ("I need a plan for Monday. What to pack for Iceland?", "Iceland"),
        ("Write it to Me or to The team in Oslo", "Oslo"),
    ],
)
def test_place_name(text: str, place: str | None) -> None:
    assert place_name(text) == place


def test_fills_only_fields_it_can_fill_validly() -> None:
    drawn = {"city": "North Ryan", "unit": "f", "query": "x"}
    out = fill_from_request(drawn, WEATHER, "What's the weather in Lisbon?")
    assert out == {"city": "Lisbon", "unit": "f", "query": "weather"}
    assert drawn == {"city": "North Ryan", "unit": "f", "query": "x"}  # the input is not changed
    short = {**WEATHER, "properties": {**WEATHER["properties"], "query": {"type": "string", "maxLength": 3}}}
    too_long = fill_from_request(drawn, short, "Check the weather in Rome")
    assert too_long == {"city": "Rome", "unit": "f", "query": "x"}
    # an enum, a format or a pattern is never overwritten
    strict = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris"]}}}
    assert fill_from_request({"city": "Paris"}, strict, "weather in Lisbon") == {"city": "Paris"}
    assert fill_from_request({"city": "Paris"}, WEATHER, "") == {"city": "Paris"}


def test_the_built_in_tool_call_uses_the_request() -> None:
    mock = MockGPT(seed=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    out = mock.generate(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "Weather in Lisbon?"}], "tools": tools}
    )
    (call,) = out.tool_calls
    args = json.loads(call.arguments)
    jsonschema.validate(args, WEATHER)
    assert args["city"] == "Lisbon" and args["query"] == "weather"


TRIP: dict[str, Any] = {
    "type": "object",
    "properties": {"origin_city": {"type": "string"}, "destinationCity": {"type": "string"}},
}


@pytest.mark.parametrize(
    ("text", "filled"),
    [
        ("Find me a flight from Paris to Tokyo", {"origin_city": "Paris", "destinationCity": "Tokyo"}),
        ("Book a train to New York from Boston", {"origin_city": "Boston", "destinationCity": "New York"}),
        ("Fly to Rome on Friday", {"origin_city": "drawn", "destinationCity": "Rome"}),
        ("Hotels in Lisbon", {"origin_city": "drawn", "destinationCity": "Lisbon"}),  # the one place named
        ("Leaving from Oslo", {"origin_city": "Oslo", "destinationCity": "drawn"}),
    ],
)
def test_the_two_ends_of_a_trip_go_to_their_own_fields(text: str, filled: dict[str, str]) -> None:
    assert fill_from_request({"origin_city": "drawn", "destinationCity": "drawn"}, TRIP, text) == filled


def test_trip_fields_draw_city_names_when_the_request_names_none() -> None:
    params = {**TRIP, "required": list(TRIP["properties"])}
    tools = [{"type": "function", "function": {"name": "book", "parameters": params}}]
    ask = {"model": "synth-1", "messages": [{"role": "user", "content": "book something"}], "tools": tools}
    out = MockGPT(seed=0).generate(ask)
    args = json.loads(out.tool_calls[0].arguments)
    assert args == {"destinationCity": "Aaronville", "origin_city": "Juliefort"}  # Faker cities


def test_fields_named_for_nothing_skip_the_lookups_and_lose_nothing() -> None:
    # a field `_named_field` calls unnamed must be one every table passes over (what the loop did before)
    from synthgpt.generators import request_args as ra
    from synthgpt.generators.message_values import MessageValues

    values = MessageValues(("ls",), ("/tmp/a.txt",), ("https://x.io",), ("a@b.co",), ("q",), ("3 kg",))
    tables = ra._FROM_FIELDS | ra._TO_FIELDS | ra._PLACE_FIELDS | ra._QUERY_FIELDS
    keys = [*ra._NAMED, "to", "order_id", "customerName", "Total", "unit_price", "note_2", "X"]
    for key in keys:
        field, named = ra._named_field(key)
        if not named:
            assert ra._Given(values).for_field(field, {"type": "string"}) == ("", None)
            assert field not in tables


@pytest.mark.parametrize(
    "text", ["Make up an order for tide pools #12", "Write a report", "the", "Summarise what Ada said"]
)
def test_a_message_giving_nothing_fills_only_query_fields_as_the_full_pass_does(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synthgpt.generators import request_args as ra

    keys = ["query", "search_term", "topic", "subject", "title", "city", "origin", "to", "email", "amount",
            "note", "order_id", "name", "q", "keywords"]  # fmt: skip
    props: dict[str, Any] = {k: {"type": "string"} for k in keys}
    props["q"] = {"type": "string", "maxLength": 2}
    props["keywords"] = {"type": "string", "enum": ["x"]}
    schema = {"type": "object", "properties": props, "required": keys}
    args = {k: f"seeded {k}" for k in keys}
    fast = ra.fill_from_request(args, schema, text)
    monkeypatch.setattr(ra, "_NO_VALUES", object())  # never equal: the full pass
    assert ra.fill_from_request(args, schema, text) == fast


def test_quoted_values_go_to_the_first_fields_they_fit_each_once() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": 6},
            "b": {"type": "string", "maxLength": 2},
            "c": {"type": "string"},
            "d": {"type": "string", "format": "email"},
            "n": {"type": "integer"},
            "directory": {"type": "string"},
            "file": {"type": "string"},
        },
        # named twice, and a name that is no string: what a schema nobody checked may hold
        "required": ["a", "b", "c", "c", "d", "n", 7, "directory"],
    }
    drawn = {"a": "xxxxxx", "b": "y", "c": "z", "d": "q@x.io", "n": 1, "directory": "/d", "file": "f.txt"}
    text = 'weather in Lisbon: "ok", "long one", "third", "fourth"; copy /srv/data/report.csv to /srv/backup'
    filled = {"directory": "/srv/backup", "file": "/srv/data/report.csv"}  # a directory, a file: as preferred
    out = fill_from_request(drawn, schema, text)
    assert out == {**drawn, "a": "long one", "b": "ok", "c": "third", **filled}  # "ok" is too short for `a`
    assert fill_from_request(drawn, {**schema, "required": "a"}, text) == {**drawn, **filled}  # not a list
