"""from_schema: drawn values validate, are deterministic and stable, and unsupported schemas fail early."""

from __future__ import annotations

import copy
import datetime as dt
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from synthgpt.errors import DrawError, RuleError, SchemaError
from synthgpt.generators.core import DrawContext, Just, OneOf
from synthgpt.generators.pattern import Pattern, PatternError
from synthgpt.generators.schema import FromSchema, validate_supported
from synthgpt.limits import Limits
from synthgpt.model import ModelRequest

REQUEST = ModelRequest()
TOO_COMPLEX = "is too complex for the simple-pattern generator:"
SUPPORTED = (
    "$defs, $ref, additionalProperties, allOf, anyOf, const, definitions, enum, exclusiveMaximum, "
    "exclusiveMinimum, format, items, maxItems, maxLength, maximum, minItems, minLength, minimum, "
    "multipleOf, nullable, oneOf, pattern, prefixItems, properties, required, type, uniqueItems"
)

# jsonschema checks some formats only when optional packages are installed; these stand in for them
FORMATS = FormatChecker()


@FORMATS.checks("date-time")
def _is_date_time(v: object) -> bool:
    return not isinstance(v, str) or (
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", v) is not None
        and dt.datetime.fromisoformat(v.replace("Z", "+00:00")) is not None
    )


@FORMATS.checks("time")
def _is_time(v: object) -> bool:
    return (
        not isinstance(v, str)
        or re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(Z|[+-]\d\d:\d\d)", v) is not None
    )


@FORMATS.checks("uri")
def _is_uri(v: object) -> bool:
    return not isinstance(v, str) or re.fullmatch(r"https?://[^\s/]+(/\S*)?", v) is not None


@FORMATS.checks("hostname")
def _is_hostname(v: object) -> bool:
    label = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    return not isinstance(v, str) or re.fullmatch(rf"{label}(\.{label})*", v) is not None


def ctx(seed: int) -> DrawContext:
    return DrawContext(REQUEST, seed)


def draw(schema: dict[str, Any], seed: int = 0, **kw: Any) -> Any:
    return FromSchema(schema, **kw).draw(ctx(seed))


def check_valid(schema: dict[str, Any], value: Any) -> None:
    Draft202012Validator(schema, format_checker=FORMATS).validate(value)


def obj(props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
        **extra,
    }


def schema_error(schema: Any, **kw: Any) -> str:
    with pytest.raises(SchemaError) as info:
        FromSchema(schema, **kw)
    return str(info.value)


# ------------------------------------------------------------------------------------------ hypothesis

NAMES = [
    "name",
    "email",
    "age",
    "title",
    "description",
    "id",
    "tags",
    "price",
    "count",
    "created_at",
    "url",
    "x",
]
PATTERNS = [r"^[A-Z]{3}-\d{4}$", r"^(foo|bar)_[a-z0-9]+$", r"\d+(\.\d\d)?", r"^[^,;]{2,6}$"]
FORMAT_NAMES = ["date-time", "date", "time", "email", "uri", "uuid", "hostname", "ipv4", "ipv6"]


@st.composite
def string_schemas(draw: st.DrawFn) -> dict[str, Any]:
    s: dict[str, Any] = {"type": draw(st.sampled_from(["string", ["string", "null"]]))}
    kind = draw(st.sampled_from(["plain", "plain", "enum", "format", "pattern"]))
    if kind == "plain":
        lo = draw(st.none() | st.integers(0, 20))
        hi = draw(st.none() | st.integers(lo or 0, 40))
        s.update({k: v for k, v in (("minLength", lo), ("maxLength", hi)) if v is not None})
    elif kind == "enum":
        s["enum"] = draw(st.lists(st.text("abc xyz", max_size=5), min_size=1, max_size=4, unique=True))
    elif kind == "format":
        s["format"] = draw(st.sampled_from(FORMAT_NAMES))
    else:
        s["pattern"] = draw(st.sampled_from(PATTERNS))
    return s


@st.composite
def number_schemas(draw: st.DrawFn) -> dict[str, Any]:
    integer = draw(st.booleans())
    s: dict[str, Any] = {"type": "integer" if integer else "number"}
    step = draw(st.sampled_from([None, 1, 3, 5] if integer else [None, 0.5, 0.25, 2, 0.01]))
    lo = draw(st.none() | st.integers(-50, 50))
    hi: float | None = None if lo is None and draw(st.booleans()) else (lo or 0) + draw(st.integers(0, 60))
    if step is not None:
        s["multipleOf"] = step
        if lo is not None and hi is not None:
            hi = max(hi, lo + 2 * step)  # keeps a multiple strictly inside even with exclusive bounds
    if lo is not None:
        s["exclusiveMinimum" if (hi is None or hi > lo + 1) and draw(st.booleans()) else "minimum"] = lo
    if hi is not None:
        s["exclusiveMaximum" if (lo is None or hi > lo + 1) and draw(st.booleans()) else "maximum"] = hi
    return s


def leaves(defs: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    simple = st.sampled_from(
        [{"type": "boolean"}, {"type": "null"}, {"const": "fixed"}, {"enum": [1, "two", None]}]
    )
    refs = [st.sampled_from([{"$ref": f"#/$defs/{d}"} for d in defs])] if defs else []
    return st.one_of(string_schemas(), number_schemas(), simple, *refs)


@st.composite
def object_schemas(draw: st.DrawFn, children: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    props = draw(st.dictionaries(st.sampled_from(NAMES), children, max_size=4))
    s: dict[str, Any] = {"type": "object", "properties": props}
    required = [k for k in props if draw(st.booleans())]
    if required:
        s["required"] = required
    if draw(st.booleans()):
        s["additionalProperties"] = False
    return s


@st.composite
def array_schemas(draw: st.DrawFn, children: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "array", "items": draw(children)}
    lo = draw(st.integers(0, 3))
    if lo:
        s["minItems"] = lo
    if draw(st.booleans()):
        s["maxItems"] = draw(st.integers(lo, 5))
    return s


def schemas(defs: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            object_schemas(children),
            array_schemas(children),
            st.lists(children, min_size=1, max_size=3).map(lambda bs: {"anyOf": bs}),
        )

    return st.recursive(leaves(defs), extend, max_leaves=8)


@st.composite
def root_schemas(draw: st.DrawFn) -> dict[str, Any]:
    defs = draw(st.dictionaries(st.sampled_from(["A", "B"]), schemas(()), max_size=2))
    root = draw(schemas(tuple(defs)))
    return {**root, "$defs": defs} if defs else root


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(root_schemas(), st.integers(0, 2**32))
def test_drawn_values_validate(schema: dict[str, Any], seed: int) -> None:
    gen = FromSchema(schema)
    for i in range(3):
        check_valid(schema, gen.draw(ctx(seed + i)))


# --------------------------------------------------------------------------------------- determinism

USER = obj(
    {
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "nickname": {"type": "string"},
        "score": {"type": "number"},
    },
    required=["name", "email", "age", "tags"],
)


def test_same_seed_same_value_across_instances() -> None:
    first = draw(USER, 7)
    draw({"type": "string", "format": "email"}, 3)  # the shared Faker is reseeded before every use
    assert draw(copy.deepcopy(USER), 7) == first


def test_different_seeds_usually_differ() -> None:
    gen = FromSchema(USER)
    values = [repr(gen.draw(ctx(seed))) for seed in range(20)]
    assert len(set(values)) == 20


def test_adding_a_property_leaves_the_others_unchanged() -> None:
    bigger = copy.deepcopy(USER)
    bigger["properties"] = {"company": {"type": "string"}, **bigger["properties"], "zip": {"type": "string"}}
    bigger["required"] = ["company", *bigger["required"]]
    for seed in range(10):
        before, after = draw(USER, seed), draw(bigger, seed)
        assert "company" in after
        assert {k: v for k, v in after.items() if k not in ("company", "zip")} == before


def test_adding_an_array_item_schema_keyword_keeps_earlier_items() -> None:
    short = {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
    long = {**short, "minItems": 4, "maxItems": 4}
    assert draw(long, 5)[:2] == draw(short, 5)


def test_strict_openai_style_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            "final_answer": {"type": "string"},
            "confidence": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "status": {"type": "string", "enum": ["ok", "needs_review"]},
        },
        "required": ["steps", "final_answer", "confidence", "status"],
        "additionalProperties": False,
        "$defs": {
            "step": {
                "type": "object",
                "properties": {"explanation": {"type": "string"}, "output": {"type": "string"}},
                "required": ["explanation", "output"],
                "additionalProperties": False,
            }
        },
    }
    gen = FromSchema(schema)
    for seed in range(30):
        value = gen.draw(ctx(seed))
        check_valid(schema, value)
        assert set(value) == {"steps", "final_answer", "confidence", "status"}


def test_optional_properties_come_and_go() -> None:
    gen = FromSchema(obj({"a": {"type": "integer"}, "b": {"type": "integer"}}, required=["a"]))
    seen = {tuple(gen.draw(ctx(seed))) for seed in range(30)}
    assert seen == {("a",), ("a", "b")}


# ------------------------------------------------------------------------------------------ realism


def test_strings_follow_property_names() -> None:
    schema = obj(
        {
            "email": {"type": "string"},
            "full_name": {"type": "string"},
            "created_at": {"type": "string"},
            "website": {"type": "string"},
            "user_id": {"type": "string"},
            "description": {"type": "string"},
            "city": {"type": "string"},
            "anything": {"type": "string"},
            "age": {"type": "integer"},
            "year": {"type": "integer"},
            "price": {"type": "number"},
        }
    )
    for seed in range(20):
        v = draw(schema, seed)
        assert re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", v["email"])
        assert " " in v["full_name"]
        assert _is_date_time(v["created_at"])
        assert v["website"].startswith("http")
        assert re.fullmatch(r"[a-z0-9]{12}", v["user_id"])
        assert v["description"].endswith(".") and len(v["description"].split()) >= 5
        assert v["city"][0].isupper()
        assert re.fullmatch(r"[a-z]+( [a-z]+){1,3}", v["anything"])
        assert 18 <= v["age"] <= 90
        assert 1970 <= v["year"] <= 2030
        assert 1 <= v["price"] <= 500 and round(v["price"], 2) == v["price"]


def test_summaries_are_sentences_about_what_was_asked() -> None:
    asked = ModelRequest.from_dict({"messages": [{"role": "user", "content": "Review the movie Inception"}]})
    schema = obj({"summary": {"type": "string"}, "description": {"type": "string", "maxLength": 80}})
    for seed in range(10):
        v = FromSchema(schema).draw(DrawContext(asked, seed))
        assert "the movie Inception" in v["summary"] and v["summary"].endswith("."), v
        # a whole sentence that fits, when one of the templates does: never one cut mid-way
        assert len(v["description"]) <= 80 and v["description"].endswith("."), v
    assert FromSchema(schema).draw(DrawContext(asked, 0)) == {
        "description": "It is worth checking the section early, because small differences there add up.",
        "summary": "If the region changes, expect the benefit around the movie Inception to change with it.",
    }


def test_lengths_are_respected_after_choosing_content() -> None:
    schema = obj(
        {
            "description": {"type": "string", "maxLength": 12},
            "name": {"type": "string", "minLength": 40, "maxLength": 45},
            "code": {"type": "string", "minLength": 3, "maxLength": 3},
        }
    )
    for seed in range(30):
        v = draw(schema, seed)
        check_valid(schema, v)
        assert not v["description"].endswith(" ")


COUNTED = obj(
    {
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        "code": {"type": "string", "minLength": 2, "maxLength": 5},
        "name": {"type": "string", "maxLength": 12},
        "sku": {"type": "string", "pattern": "^[A-Z]{1,9}$", "minLength": 4, "maxLength": 6},
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}], "items": False, "maxItems": 1},
        "nested": {"anyOf": [{"type": "array", "items": {"type": "integer"}, "maxItems": 2}]},
    },
    required=["tags", "code", "name", "sku", "pair", "nested"],
)


def _counts_as_floats(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: float(v) if k in ("minLength", "maxLength", "minItems", "maxItems") else _counts_as_floats(v)
            for k, v in schema.items()
        }
    return [_counts_as_floats(v) for v in schema] if isinstance(schema, list) else schema


def test_counts_written_as_whole_floats_draw_what_the_integers_draw() -> None:
    # `"maxItems": 3.0` is a valid JSON Schema integer; it raised a TypeError (a 500 when a request asked)
    floats = _counts_as_floats(COUNTED)
    plain, written = FromSchema(COUNTED), FromSchema(floats)
    for seed in range(40):
        value = written.draw(ctx(seed))
        check_valid(floats, value)
        assert value == plain.draw(ctx(seed))
    # the caller's schema is left as it was written
    assert repr(floats) == repr(_counts_as_floats(COUNTED)) and "'maxItems': 3.0" in repr(floats)
    # values are data, not schemas: a `const` or an `enum` holding such a key keeps its float; a property
    # may be named for a keyword
    data = {"type": "object", "const": {"maxItems": 3.0}, "enum": [{"maxItems": 3.0}]}
    assert repr(FromSchema(data).draw(ctx(0))) == "{'maxItems': 3.0}"
    named = obj({"enum": {"type": "array", "items": {"type": "integer"}, "maxItems": 2.0}})
    assert all(len(FromSchema(named).draw(ctx(seed))["enum"]) <= 2 for seed in range(20))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": ["string", "null"], "minLength": 5000},
        {"type": ["string", "null"], "pattern": "^a+$", "minLength": 5000},
        obj({"s": {"type": "string", "minLength": 5000}}, required=[]),
        obj({"s": {"type": "string", "pattern": "^[a-z ]+$", "minLength": 5000}}, required=[]),
    ],
)
def test_a_string_longer_than_the_answer_limit_is_refused_before_it_is_drawn(schema: dict[str, Any]) -> None:
    # the smallest document (null, or no property) fits, so the check before drawing lets it through; the
    # string was then built whole: `minLength: 1e15` in a request's schema took minutes and gigabytes
    limits = Limits(max_answer_bytes=1000)
    gen = FromSchema(schema)
    refused = 0
    for seed in range(20):
        try:
            value = gen.draw(DrawContext(REQUEST, seed, limits=limits))
        except DrawError as exc:
            assert exc.code == "draw_over_budget"
            assert "minLength 5000 is over this server's answer limit of 1000 bytes" in str(exc)
            refused += 1
        else:
            assert value in (None, {})
    assert refused > 5


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_formats(fmt: str) -> None:
    schema = {"type": "string", "format": fmt}
    values = {draw(schema, seed) for seed in range(15)}
    assert len(values) > 10
    for v in values:
        check_valid(schema, v)


def test_numbers_with_bounds_and_multiples() -> None:
    cases = [
        {"type": "integer", "minimum": 10, "maximum": 12},
        {"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12},
        {"type": "integer", "minimum": 1, "maximum": 100, "multipleOf": 7},
        {"type": "integer", "multipleOf": 2.5},
        {"type": "integer", "minimum": 5000},
        {"type": "number", "minimum": 0.1, "maximum": 0.2},
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.01},
        {"type": "number", "multipleOf": 0.01, "minimum": 1, "maximum": 30},
        {"type": "number", "maximum": -2000},
        {"type": "integer", "minimum": 3, "maximum": 3},
    ]
    for schema in cases:
        for seed in range(20):
            check_valid(schema, draw(schema, seed))
    assert draw({"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12}) == 11
    assert all(isinstance(draw({"type": "integer"}, s), int) for s in range(5))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "exclusiveMinimum": 1e308},
        {"type": "number", "exclusiveMaximum": -1e308},
        {"type": "number", "minimum": -1.7e308, "maximum": 1.7e308},
        {"type": "number", "exclusiveMinimum": 1e308, "maximum": 1.5e308},
        {"type": "number", "exclusiveMinimum": 5, "exclusiveMaximum": 5 + 2 * math.ulp(5)},
        {"type": "number", "minimum": 7e307, "exclusiveMaximum": 7e307 + 1e292},
        {"type": "number", "maximum": 10**400},  # beyond every float: it bounds nothing
        {"type": "number", "exclusiveMinimum": -(10**400), "maximum": -5},
        {"type": "integer", "minimum": float("-inf"), "maximum": 3},  # YAML's `-.inf`
        {"type": "integer", "minimum": 10**400},  # an integer that large is drawn as it is
    ],
)
def test_numbers_at_the_ends_of_the_floats_stay_finite_and_in_bounds(schema: dict[str, Any]) -> None:
    # a midpoint of two bounds near the largest float overflowed to inf (a 500: not JSON), and bounds closer
    # together than the name's spread gave the exclusive bound itself, outside them
    wrapped = obj({"x": schema})
    for seed in range(40):
        value = draw(wrapped, seed)["x"]
        assert type(value) is int or math.isfinite(value), (schema, seed, value)
        check_valid(schema, value)
        check_valid(schema, draw(schema, seed))  # drawn at the top: the walk, not a compiled plan


def test_an_enum_or_const_with_a_pattern_keeps_the_values_the_pattern_allows() -> None:
    # the pattern was looked up before it was compiled: a KeyError (a 500 for a request's schema)
    currency = {"type": "string", "enum": ["EUR", "USD", "euro"], "pattern": "^[A-Z]{3}$"}
    assert {draw(currency, seed) for seed in range(30)} == {"EUR", "USD"}
    nullable = {"type": ["string", "null"], "enum": ["ab", "12"], "pattern": "^\\d{2,40}$"}
    assert {draw(nullable, seed) for seed in range(30)} == {"12"}
    with pytest.raises(SchemaError, match="the `const` value does not satisfy the schema's other keywords"):
        FromSchema({"type": "string", "const": "a", "pattern": "^x+$"})


def test_a_multiple_of_the_smallest_float_is_drawn() -> None:
    # `v / multipleOf` overflowed to inf and `int(inf)` raised OverflowError (a 500)
    schema = {"type": "number", "maximum": 1e9, "multipleOf": 5e-324}
    for seed in range(10):
        value = draw(schema, seed)
        assert math.isfinite(value)
        check_valid(schema, value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "exclusiveMaximum": -1e307, "multipleOf": 0.5},
        {"type": "number", "exclusiveMinimum": 1e307, "maximum": 2e307, "multipleOf": 0.25},
        {"type": "number", "minimum": 1e300, "multipleOf": 1e-300},
        {"type": "number", "maximum": -1e300, "minimum": -1e301, "multipleOf": 3e-300},
        {"type": "integer", "minimum": 1e308, "multipleOf": 0.1},
    ],
)
def test_a_multiple_at_a_huge_magnitude_stays_in_bounds(schema: dict[str, Any]) -> None:
    # the float of the multiple next to a bound rounded onto it (an exclusive bound drawn), and a quotient
    # past the floats is a multiple by exact division (as jsonschema judges it), which 1e300 of 1e-300 is not
    for seed in range(20):
        value = draw(schema, seed)
        assert math.isfinite(value)
        check_valid(schema, value)
        check_valid(schema, draw(obj({"x": schema}), seed)["x"])


@pytest.mark.parametrize("bound", ["exclusiveMinimum", "exclusiveMaximum"])
def test_an_exclusive_bound_at_the_largest_float_allows_no_number(bound: str) -> None:
    # no float lies past it, and the bound itself was drawn
    largest = 1.7976931348623157e308 if bound == "exclusiveMinimum" else -1.7976931348623157e308
    with pytest.raises(SchemaError, match=f"no number satisfies {bound} "):
        FromSchema({"type": "number", bound: largest})


# ------------------------------------------------------------------------------------------ keywords
# ------------------------------------------------------------------------------------------ keywords


def test_type_lists_nullable_and_inference() -> None:
    nullable = {"type": "string", "nullable": True}
    values = [draw(nullable, s) for s in range(40)]
    assert None in values and any(isinstance(v, str) for v in values)
    assert isinstance(draw({"properties": {"a": {"const": 1}}, "required": ["a"]}), dict)
    assert isinstance(draw({"items": {"type": "integer"}}), list)
    assert isinstance(draw({"minimum": 3}), int | float)


def test_prefix_items_and_unique_items() -> None:
    tuple_schema = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}
    for seed in range(10):
        v = draw(tuple_schema, seed)
        check_valid(tuple_schema, v)
        assert len(v) <= 2
    unique = {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 3, "uniqueItems": True}
    for seed in range(10):
        assert sorted(draw(unique, seed)) == ["a", "b", "c"]
    with pytest.raises(SchemaError, match=r"minItems 4 with uniqueItems, but the items allow only 3 "):
        draw({**unique, "minItems": 4})


def test_all_of_merges_objects_and_bounds() -> None:
    schema = {
        "allOf": [
            obj({"id": {"type": "string"}}),
            obj({"n": {"type": "integer", "minimum": 0}}, required=[]),
            {"properties": {"n": {"maximum": 3}}, "required": ["n"]},
        ]
    }
    for seed in range(20):
        v = draw(schema, seed)
        check_valid(schema, v)
        assert set(v) == {"id", "n"} and 0 <= v["n"] <= 3


def test_all_of_merges_items_with_prefix_items_position_by_position() -> None:
    # one part's `items` holds for every item, the other's `prefixItems[0]` for the first: the first item
    # must meet both. The merge kept only `prefixItems[0]` there (found by the schema fuzz), and two parts'
    # different `items` were refused as unmergeable
    words = {"type": "string", "pattern": "^[a-z]{2,5}$"}
    schema = {"allOf": [{"type": "array", "items": words, "minItems": 2},
                        {"type": "array", "prefixItems": [{"type": "string", "maxLength": 3}]}]}  # fmt: skip
    both = {"allOf": [{"type": "array", "items": words, "minItems": 1},
                      {"type": "array", "items": {"type": "string", "maxLength": 3}}]}  # fmt: skip
    two = [{"type": "string"}, {"type": "string"}]
    ended = {"allOf": [{"type": "array", "prefixItems": [words], "items": False},
                       {"type": "array", "prefixItems": two}]}  # fmt: skip
    for seed in range(20):
        check_valid(schema, draw(schema, seed))
        check_valid(both, draw(both, seed))
        assert all(len(w) <= 3 for w in draw(both, seed))
        check_valid(ended, draw(ended, seed))
        assert len(draw(ended, seed)) <= 1


def test_one_of_and_any_of_with_siblings() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    }
    shape = {"oneOf": [{"type": "integer"}, {"type": "string", "format": "uuid"}]}
    for seed in range(20):
        check_valid(schema, draw(schema, seed))
        check_valid(shape, draw(shape, seed))


def test_annotations_and_additional_properties_are_accepted() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/thing",
        "title": "Thing",
        "description": "A thing",
        "type": "object",
        "properties": {"x": {"type": "string", "default": "a", "examples": ["b"], "readOnly": True}},
        "additionalProperties": {"type": "integer"},
        "deprecated": False,
        "$comment": "ok",
    }
    validate_supported(schema)
    check_valid(schema, draw(schema))


def test_definitions_and_recursive_refs_terminate() -> None:
    tree = {
        "$ref": "#/definitions/node",
        "definitions": {
            "node": obj(
                {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/node"}},
                }
            )
        },
    }

    def depth(node: dict[str, Any]) -> int:
        return 1 + max((depth(c) for c in node["children"]), default=0)

    for max_depth in (1, 3, 6):
        gen = FromSchema(tree, max_depth=max_depth)
        for seed in range(10):
            v = gen.draw(ctx(seed))
            check_valid(tree, v)
            assert depth(v) <= max_depth + 1


def test_recursion_through_any_of_stops_at_the_cheapest_branch() -> None:
    schema = {
        "$defs": {
            "expr": {
                "anyOf": [
                    {"type": "integer"},
                    {"type": "array", "items": {"$ref": "#/$defs/expr"}, "minItems": 2},
                ]
            }
        },
        "$ref": "#/$defs/expr",
    }
    for seed in range(10):
        check_valid(schema, draw(schema, seed, max_depth=2))


def test_recursion_that_cannot_stop_is_a_schema_error() -> None:
    schema = {"$defs": {"n": obj({"next": {"$ref": "#/$defs/n"}})}, "$ref": "#/$defs/n"}
    with pytest.raises(SchemaError) as info:
        FromSchema(schema, max_depth=2)
    assert str(info.value) == (
        "schema at '/': no finite document satisfies this schema: every way through its $refs requires "
        "another level (make a recursive property optional, or allow an empty array)"
    )


def test_recursion_that_only_an_override_stops_is_a_draw_error() -> None:
    schema = {"$defs": {"n": obj({"next": {"$ref": "#/$defs/n"}})}, "$ref": "#/$defs/n"}
    gen = FromSchema(schema, {"next.next.next.next": None}, max_depth=2)
    with pytest.raises(DrawError) as info:
        gen.draw(ctx(0))
    assert str(info.value) == (
        "from_schema: $ref '#/$defs/n' at next.next recurses past max_depth=2 "
        "and every way to stop needs another level"
    )


# ------------------------------------------------------------------------------------------ patterns

PATTERN_CASES = [
    r"^[A-Z]{3}-\d{4}$",
    r"^(foo|bar)_[a-z0-9_-]+$",
    r"^\w+@\w+\.com$",
    r"[^abc]{2}x?",
    r"^\d{3}(-\d{2})?$",
    r"^(?:https?)://[a-z]{2,5}\.(com|org)$",
    r"^\s*\S+$",
    r"é+\u00e8.\x41",
    r"^a{2,}b*c+?$",
    r"^(a|b|)$",
    r"^$",
    r"[]a]\]\.\[",
    r"x|^y$",
]


@pytest.mark.parametrize("pattern", PATTERN_CASES)
def test_pattern_values_match(pattern: str) -> None:
    schema = {"type": "string", "pattern": pattern}
    gen = FromSchema(schema)
    for seed in range(40):
        v = gen.draw(ctx(seed))
        assert re.search(pattern, v), v
        check_valid(schema, v)


def test_pattern_code_shape_exactly() -> None:
    values = {draw({"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"}, seed) for seed in range(50)}
    assert len(values) == 50
    assert all(re.fullmatch(r"[A-Z]{3}-[0-9]{4}", v) for v in values)


def test_pattern_with_lengths() -> None:
    cases = [
        {"type": "string", "pattern": r"^[a-z]+$", "minLength": 20, "maxLength": 25},
        {"type": "string", "pattern": r"^[a-z]+-\d+(_x)*$", "minLength": 30},
        {"type": "string", "pattern": r"^\w*$", "maxLength": 2},
        {"type": "string", "pattern": r"^[A-Z]{2,40}$", "minLength": 38},
    ]
    for schema in cases:
        for seed in range(30):
            check_valid(schema, draw(schema, seed))


def test_a_wide_quantifier_reaches_a_high_min_length_for_every_seed() -> None:
    """A random stretch of `[A-Z]{2,40}` reaches 38 characters about one try in eight: 40 tries failed for
    some seeds (seed 25 once seeds were XXH3's). The later tries stretch by all that minLength needs."""
    schema = {"type": "string", "pattern": r"^[A-Z]{2,40}$", "minLength": 38}
    for seed in range(400):
        check_valid(schema, draw(schema, seed))


def test_pattern_length_bounds() -> None:
    p = Pattern(r"^[A-Z]{3}(-\d{2,4})?$")
    assert (p.min_len, p.max_len) == (3, 8)
    assert (Pattern("a+b?").min_len, Pattern("a+b?").max_len) == (1, None)
    assert Pattern("(x{0})*").max_len == 0


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("^(?=a)b$", "is too complex for the simple-pattern generator: group '(?=' at offset 1"),
        ("(?P<x>a)", "is too complex for the simple-pattern generator: group '(?P' at offset 0"),
        (r"(a)\1", r"is too complex for the simple-pattern generator: escape '\1' at offset 3"),
        (r"\bword", r"is too complex for the simple-pattern generator: escape '\b' at offset 0"),
        (
            "a^b",
            f"{TOO_COMPLEX} anchor '^' away from the start or end at offset 1",
        ),
        (
            "(^a)",
            f"{TOO_COMPLEX} anchor '^' away from the start or end at offset 1",
        ),
        (
            "a$b",
            f"{TOO_COMPLEX} anchor '$' away from the start or end at offset 1",
        ),
        ("a++", "is too complex for the simple-pattern generator: possessive quantifier at offset 2"),
        ("a{,3}", "is too complex for the simple-pattern generator: quantifier '{,3}' at offset 1"),
        (
            "[^\x20-\x7e]",
            "is too complex for the simple-pattern generator: a negated class that excludes every "
            "printable character at offset 0",
        ),
        ("[a-", "is not a valid regular expression: unterminated character set at position 0"),
    ],
)
def test_unsupported_patterns(pattern: str, message: str) -> None:
    with pytest.raises(PatternError) as info:
        Pattern(pattern)
    assert str(info.value) == message


def test_unsupported_pattern_in_schema_names_the_pointer() -> None:
    schema = obj(
        {"user": obj({"tags": {"type": "array", "items": {"type": "string", "pattern": r"^(?!x)\w+$"}}})}
    )
    assert schema_error(schema) == (
        "schema at '/properties/user/properties/tags/items': pattern '^(?!x)\\\\w+$' is too complex for the "
        "simple-pattern generator: group '(?!' at offset 1"
    )


# ------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            obj({"user": obj({"tags": {"type": "object", "patternProperties": {"^x": {}}}})}),
            "schema at '/properties/user/properties/tags': unsupported keyword 'patternProperties'; "
            f"supported: {SUPPORTED}",
        ),
        (
            {"type": "string", "minLenght": 3},
            "schema at '/': unsupported keyword 'minLenght' (did you mean 'minLength'?); "
            f"supported: {SUPPORTED}",
        ),
        ({"$ref": "#/$defs/missing"}, "schema at '/': unresolvable $ref '#/$defs/missing'"),
        (
            obj({"a": {"$ref": "other.json#/x"}}),
            "schema at '/properties/a': only $refs to a JSON pointer in this schema ('#/...') are supported, "
            "got 'other.json#/x'",
        ),
        (
            {"$ref": "#/$defs/a/enum/0", "$defs": {"a": {"enum": [1]}}},
            "schema at '/': $ref '#/$defs/a/enum/0' does not point to a schema",
        ),
        (
            {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
            "schema at '/$defs/b': $ref '#/$defs/a' refers back to itself without reaching a schema",
        ),
        (
            {"type": "integer", "minimum": 5, "maximum": 3},
            "schema at '/': minimum 5 is greater than maximum 3",
        ),
        (
            {"type": "integer", "minimum": 1, "maximum": 6, "multipleOf": 7},
            "schema at '/': no integer satisfies minimum 1, maximum 6, multipleOf 7",
        ),
        (
            {"type": "number", "exclusiveMinimum": 3, "maximum": 3},
            "schema at '/': no number satisfies maximum 3, exclusiveMinimum 3",
        ),
        (
            {"type": "string", "minLength": 5, "maxLength": 3},
            "schema at '/': minLength 5 is greater than maxLength 3",
        ),
        (
            {"type": "array", "minItems": 2, "maxItems": 1},
            "schema at '/': minItems 2 is greater than maxItems 1",
        ),
        (
            {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 5},
            "schema at '/': pattern '^[A-Z]{3}$' cannot produce a string of length 5 or more",
        ),
        (
            {"type": "strin"},
            "schema at '/': type must be one of null, boolean, integer, number, string, array, "
            "object, or a list of them, got 'strin'",
        ),
        (
            {"type": "string", "maxLength": -1},
            "schema at '/': maxLength must be a non-negative integer, got -1",
        ),
        (  # an infinite or NaN count (YAML's `.inf`) raised OverflowError / ValueError, not a SchemaError
            {"type": "array", "maxItems": float("inf")},
            "schema at '/': maxItems must be a non-negative integer, got inf",
        ),
        (
            {"type": "string", "minLength": float("nan")},
            "schema at '/': minLength must be a non-negative integer, got nan",
        ),
        (  # no float is past these (a 500 with a traceback when a request's schema held one)
            {"type": "number", "minimum": 10**400},
            f"schema at '/': no number satisfies minimum {str(10**400)[:39]}…",
        ),
        (
            {"type": "integer", "exclusiveMaximum": float("-inf")},
            "schema at '/': no integer satisfies exclusiveMaximum -inf",
        ),
        (
            {"type": "number", "exclusiveMinimum": 5, "exclusiveMaximum": math.nextafter(5, 6)},
            "schema at '/': no number satisfies exclusiveMinimum 5, exclusiveMaximum 5.000000000000001",
        ),
        (  # every multiple of the step past the bound is past the largest float
            {"type": "number", "exclusiveMinimum": 1.7976931348623157e308, "multipleOf": 5e-324},
            "schema at '/': no number satisfies exclusiveMinimum 1.7976931348623157e+308, multipleOf 5e-324",
        ),
        (
            {"type": "string", "minLength": 2.5},
            "schema at '/': minLength must be a non-negative integer, got 2.5",
        ),
        ({"multipleOf": 0}, "schema at '/': multipleOf must be a number > 0, got 0"),
        ({"enum": []}, "schema at '/': enum must be a non-empty array, got []"),
        ({"anyOf": []}, "schema at '/': anyOf must be a non-empty array of schemas, got []"),
        ({"required": "a"}, "schema at '/': required must be an array of strings, got 'a'"),
        (obj({"a": True}), "schema at '/properties/a': expected a schema (a JSON object), got bool True"),
        (
            ["not", "a", "schema"],
            "schema at '/': expected a schema (a JSON object), got list ['not', 'a', 'schema']",
        ),
        (
            {"allOf": [{"type": "string"}, {"type": "integer"}]},
            "schema at '/': combined schemas: types ['string'] and ['integer'] have nothing in common",
        ),
        (
            {"allOf": [{"pattern": "a"}, {"pattern": "b"}]},
            "schema at '/': combined schemas: cannot merge two different 'pattern' values",
        ),
        (
            {"allOf": [{"enum": [1, 2]}, {"enum": [3]}]},
            "schema at '/': combined schemas: the enums have no value in common",
        ),
    ],
)
def test_schema_errors(schema: Any, message: str) -> None:
    assert schema_error(schema) == message
    with pytest.raises(SchemaError):
        validate_supported(schema)


def test_schema_error_carries_the_pointer() -> None:
    with pytest.raises(SchemaError) as info:
        validate_supported(obj({"a/b": {"type": "integer", "minimum": 2, "maximum": 1}}))
    assert info.value.pointer == "/properties/a~1b"


def test_bad_max_depth() -> None:
    with pytest.raises(RuleError, match=r"^from_schema: max_depth must be >= 1, got 0$"):
        FromSchema({"type": "string"}, max_depth=0)


# ------------------------------------------------------------------------------------------ overrides

ORDER = obj(
    {
        "user": obj({"name": {"type": "string"}, "email": {"type": "string"}}, required=["name"]),
        "items": {
            "type": "array",
            "items": obj({"title": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}),
            "minItems": 0,
            "maxItems": 5,
        },
    }
)


def test_override_with_values() -> None:
    gen = FromSchema(ORDER, {"user.name": "Ada Lovelace", "items.*.title": "Widget"})
    for seed in range(10):
        v = gen.draw(ctx(seed))
        assert v["user"]["name"] == "Ada Lovelace"
        assert all(item["title"] == "Widget" for item in v["items"])
        check_valid(ORDER, v)


def test_override_with_a_generator_uses_the_property_fork() -> None:
    pick = OneOf(*range(1000))
    gen = FromSchema(ORDER, {"items.0.qty": pick, "user.email": Just("a@example.com")})
    for seed in range(10):
        c = ctx(seed)
        v = gen.draw(c)
        assert v["items"], "an index override asks for that many items"
        assert v["items"][0]["qty"] == pick.draw(
            c.fork(("prop", "items")).fork(("item", 0)).fork(("prop", "qty"))
        )
        assert v["user"]["email"] == "a@example.com"  # an optional property an override names is always there
        assert v["items"][1:] == draw(ORDER, seed)["items"][1:]


def test_override_leaves_other_values_alone() -> None:
    for seed in range(5):
        plain, overridden = draw(ORDER, seed), draw(ORDER, seed, overrides={"user.name": "X"})
        assert plain["items"] == overridden["items"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "user.nmae",
            "schema at '/properties/user': override path 'user.nmae': no property 'nmae' here; "
            "known: email, name",
        ),
        (
            "customer",
            "schema at '/': override path 'customer': no property 'customer' here; known: items, user",
        ),
        (
            "user.0",
            "schema at '/properties/user': override path 'user.0': '0' indexes array items, but there "
            "are none here",
        ),
        (
            "items.*.price",
            "schema at '/properties/items/items': override path 'items.*.price': no property "
            "'price' here; known: qty, title",
        ),
    ],
)
def test_unknown_override_path(path: str, message: str) -> None:
    assert schema_error(ORDER, overrides={path: 1}) == message


def test_override_paths_through_refs_and_any_of() -> None:
    schema = {
        "$defs": {"person": obj({"name": {"type": "string"}})},
        "anyOf": [obj({"owner": {"$ref": "#/$defs/person"}}), {"type": "null"}],
    }
    gen = FromSchema(schema, {"owner.name": "Grace"})
    values = [gen.draw(ctx(seed)) for seed in range(10)]
    assert {"owner": {"name": "Grace"}} in values


# ------------------------------------------------------------------------------------------ repr


def test_repr() -> None:
    assert repr(FromSchema({"type": "string"})) == "from_schema({'type': 'string'})"
    gen = FromSchema(obj({"a": {"type": "integer"}}), {"a": 1}, max_depth=3)
    assert repr(gen) == (
        "from_schema({'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']}, "
        "overrides={'a': just(1)}, max_depth=3)"
    )
    assert gen == FromSchema(obj({"a": {"type": "integer"}}), {"a": 1}, max_depth=3)


def test_caller_mutation_changes_nothing() -> None:
    schema = {"type": "string", "maxLength": 3}
    gen = FromSchema(schema)
    schema["maxLength"] = 100
    assert len(gen.draw(ctx(1))) <= 3


def test_a_tool_s_schema_is_prepared_once_per_distinct_plain_schema() -> None:
    """`tool_schema` keeps one FromSchema per schema text (an agent declares the same tools every call),
    in the schema's own key order; a schema holding what is not plain JSON is prepared every time."""
    from synthgpt.generators.structured import tool_schema

    def schema() -> dict[str, Any]:
        return {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": ["integer", "null"]}},
                "required": ["b", "a"]}  # fmt: skip

    first, _ = tool_schema(schema())
    assert tool_schema(schema())[0] is first  # an equal schema, decoded anew: the same generator
    assert list(first.schema["properties"]) == ["b", "a"]  # its own order, not sorted
    odd = {**schema(), "required": ("b", "a")}  # a tuple: the same orjson text as the list, refused
    for _ in range(2):
        with pytest.raises(SchemaError, match="required must be an array of strings"):
            tool_schema(odd)
