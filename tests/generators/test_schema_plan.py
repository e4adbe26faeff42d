"""A compiled schema (`schema_plan`) draws exactly what the keyword-by-keyword walk (`FromSchema._value`)
draws, and the schema cache keys on content, bounded."""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

import pytest

from synthgpt.errors import DrawError, SchemaError
from synthgpt.generators import structured
from synthgpt.generators.core import DrawContext
from synthgpt.generators.schema import FromSchema
from synthgpt.jsonutil import canonical_json
from synthgpt.limits import DEFAULT_LIMITS
from synthgpt.model import ModelRequest

_REQUEST = ModelRequest.from_dict(
    {"model": "m", "messages": [{"role": "user", "content": "Summarise the tide pools near Lisbon for Ana"}]}
)

_ADDRESS = {
    "type": "object",
    "required": ["street", "city"],
    "properties": {
        "street": {"type": "string"},
        "city": {"type": "string", "maxLength": 6},
        "postcode": {"type": "string", "minLength": 12},
        "country": {"type": ["string", "null"]},
    },
}

SCHEMAS: list[dict[str, Any]] = [
    {"type": "string"},
    {"type": "integer", "minimum": 3, "maximum": 7},
    {"enum": ["a", "b", {"c": [1]}]},
    {"const": {"k": [1, 2]}},
    {"type": ["integer", "string", "null"]},
    {"type": "number", "multipleOf": 0.25, "minimum": -3, "exclusiveMaximum": 4},
    {"type": "integer", "multipleOf": 7},
    {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "user_email": {"type": "string"},
            "created_at": {"type": "string"},
            "birthday": {"type": "string", "format": "date"},
            "website": {"type": "string", "format": "uri"},
            "uuid": {"type": "string", "format": "uuid"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2,5}$"},
            "slug": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 6},
            "unique": {"type": "array", "items": {"enum": [1, 2, 3, 4]}, "uniqueItems": True, "maxItems": 3},
            "point": {
                "type": "array",
                "prefixItems": [{"type": "number"}, {"type": "number"}],
                "items": False,
            },
            "mixed": {"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "integer"}},
            "anything": {},
            "age": {"type": "integer"},
            "price": {"type": "number", "minimum": 0, "maximum": 500},
            "rating": {"type": "number", "exclusiveMinimum": 4.5, "maximum": 5},
            "description": {"type": "string", "maxLength": 40},
            "summary": {"type": "string", "minLength": 80},
            "company": {"type": "string"},
            "flag": {"type": "boolean"},
            "nothing": {"type": "null"},
            "address": _ADDRESS,
            "either": {"anyOf": [{"type": "integer"}, _ADDRESS]},
            "one": {"oneOf": [{"const": "x"}, {"type": "integer"}]},
            "both": {
                "allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}, {"required": ["a"]}]
            },
            "nullable_obj": {"type": ["object", "null"], "properties": {"name": {"type": "string"}}},
        },
        "required": ["id", "address", "tags", "point", "extra_required"],
        "additionalProperties": {"type": "integer"},
    },
    {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}, "name": {"type": "string"}},
        "required": ["tree", "name"],
    },
    {"type": "array", "items": _ADDRESS, "minItems": 1, "maxItems": 3},
    {"type": "array", "minItems": 9},
    # `required` naming properties more than once, and one that is not declared
    {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "string"},
            "c": {"type": "boolean"},
            "d": _ADDRESS,
        },
        "required": ["b", "b", "zz", "b", "d", "d"],
    },
    {
        "$ref": "#/$defs/o",
        "$defs": {
            "o": {
                "type": "object",
                "properties": {"x": _ADDRESS, "y": {"$ref": "#/$defs/o"}},
                "required": ["x", "x"],
            }
        },
    },
]


def _both(
    schema: dict[str, Any], seed: int, rng_first: bool
) -> tuple[Any, Any, tuple[Any, ...], tuple[Any, ...]]:
    compiled, walked = FromSchema(schema), FromSchema(schema)
    walked._plan = None  # the keyword-by-keyword walk
    a = DrawContext(_REQUEST, seed, now=1_767_225_600)
    b = DrawContext(_REQUEST, seed, now=1_767_225_600)
    if rng_first:  # the document's context may have drawn before: its RNG goes on from where it was
        a.rng.random()
        b.rng.random()
    return compiled.draw(a), walked.draw(b), a.rng.getstate(), b.rng.getstate()


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_a_compiled_schema_draws_what_the_walk_draws(index: int) -> None:
    schema = SCHEMAS[index]
    for seed in range(300):
        planned, walked, rng_a, rng_b = _both(schema, seed * 7919 + index, rng_first=seed % 3 == 0)
        assert planned == walked
        assert repr(planned) == repr(walked)  # key order and int/float alike
        assert rng_a == rng_b  # and the context's RNG is left where the walk leaves it


def test_schemas_with_a_compiled_top_use_the_plan() -> None:
    from synthgpt.generators.schema_plan import compile_plan

    assert compile_plan(FromSchema(SCHEMAS[7])) is not None
    assert compile_plan(FromSchema({"anyOf": [{"type": "integer"}, {"type": "string"}]})) is None
    with_override = FromSchema({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1})
    assert compile_plan(with_override) is None  # overrides: the walk


def test_a_part_that_fails_gives_the_walks_error() -> None:
    schema = {
        "type": "object",
        "required": ["a", "b"],
        "properties": {"a": {"type": "string"}, "b": {"oneOf": [{"const": 1}, {"enum": [1]}]}},
    }
    compiled, walked = FromSchema(schema), FromSchema(schema)
    walked._plan = None
    errors = []
    for gen in (compiled, walked):
        with pytest.raises(DrawError) as exc:
            gen.draw(DrawContext(_REQUEST, 5))
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_the_value_budget_holds_for_compiled_schemas() -> None:
    schema = {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "minItems": 30},
              "minItems": 30}  # fmt: skip
    limits = dataclasses.replace(DEFAULT_LIMITS, max_schema_values=500)
    with pytest.raises(DrawError, match="max_schema_values"):
        FromSchema(schema).draw(DrawContext(_REQUEST, 1, limits=limits))


def test_compiled_schemas_are_cached_by_content() -> None:
    schema = copy.deepcopy(SCHEMAS[7])
    first = structured.compiled_schema(schema)
    assert structured.compiled_schema(copy.deepcopy(schema)) is first
    schema["properties"]["id"] = {"type": "integer"}  # changed after its first use: not the old generator
    changed = structured.compiled_schema(schema)
    assert changed is not first
    assert changed.schema["properties"]["id"] == {"type": "integer"}


def test_content_keys_tell_apart_what_canonical_json_tells_apart() -> None:
    key = structured._content_key
    values = [1, 1.0, True, None, "1", [1], {"a": 1}, float("nan"), float("inf"), "null", 2**70, {"x": None}]
    keys = [key({"const": v}) for v in values]
    assert len(set(keys)) == len(values)
    assert key({"b": 1, "a": 2}) == key({"a": 2, "b": 1})  # order of keys does not matter, as canonically


def test_the_content_cache_is_bounded() -> None:
    structured._compile.cache_clear()
    for i in range(structured._MAX_SCHEMAS + 10):
        structured.compiled_schema({"type": "integer", "minimum": i})
    assert structured._compile.cache_info().currsize <= structured._MAX_SCHEMAS


def test_content_keys_are_the_canonical_json() -> None:
    for value in [1, 1.5, 1e-05, None, float("nan"), 2**70, "é", {"x": [None, True]}]:
        schema = {"const": value, "type": "integer"}
        assert structured._content_key(schema) == canonical_json(schema).encode()


def test_the_deepest_schema_accepted_draws_as_before() -> None:
    # deeper than 100 levels is refused when built (schema_check._MAX_WALK), so compiling stays shallow
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(95):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    compiled, walked = FromSchema(schema), FromSchema(schema)
    walked._plan = None
    ctx_a, ctx_b = DrawContext(_REQUEST, 1), DrawContext(_REQUEST, 1)
    assert repr(compiled.draw(ctx_a)) == repr(walked.draw(ctx_b))
    assert compiled._plan is not None


# -- strings drawn from their seed alone, formats taken at their first draw -----------------------------

_STRINGS = {
    name: {"type": "string"}
    for name in (
        "email", "website", "avatar", "guid", "phone", "username", "first_name", "last_name", "company",
        "product", "city", "country", "state", "street", "postcode", "created_at", "birthday", "ip", "host",
        "color", "currency", "language", "job", "title", "summary", "slug", "sku", "id", "status", "name",
        "anything_else",
    )
}  # fmt: skip
_FORMATTED = {
    f"f_{fmt}": {"type": "string", "format": fmt}
    for fmt in (
        "date-time", "date", "time", "uuid", "ipv4", "ipv6", "email", "idn-email", "uri", "url", "iri",
        "uri-reference", "iri-reference", "hostname", "idn-hostname", "unknown-format",
    )
}  # fmt: skip
SEEDED_SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": _STRINGS, "required": sorted(_STRINGS)},
    {"type": "object", "properties": _STRINGS},  # every one optional
    {"type": "object", "properties": _FORMATTED, "required": sorted(_FORMATTED)},
    {
        "type": "object",
        "properties": {
            # bounds: `fit_text` and the format's retries as before
            "email": {"type": "string", "maxLength": 12},
            "city": {"type": "string", "minLength": 30},
            "sku": {"type": "string", "minLength": 0},
            "id": {"type": "string", "minLength": 0.0},
            "f_email": {"type": "string", "format": "email", "maxLength": 24},
            "f_uuid": {"type": "string", "format": "uuid", "minLength": 1},
            "f_date": {"type": "string", "format": "date", "pattern": "^2[0-9]{3}-"},
            "name": {"type": ["string", "null"]},
            "company": {"type": ["string", "integer"]},
        },
        "required": ["email", "city", "sku", "id", "f_email", "f_uuid", "f_date", "name", "company"],
    },
    {
        "type": "array",
        "minItems": 1,
        "maxItems": 5,
        "items": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "email": {"type": "string", "format": "email"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "code": {"type": "string"},
                "price": {"type": "number", "minimum": 0, "maximum": 500},
                "qty": {"type": "integer", "minimum": 1, "maximum": 9},
                "step": {"type": "number", "multipleOf": 0.5},
                "none": {"type": "null"},
                "flag": {"type": "boolean"},
                "kind": {"enum": ["a", "b", 3]},
                "box": {"enum": [{"x": 1}, [2]]},
                "fixed": {"const": "v"},
                "fixed_obj": {"const": {"k": [1]}},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "string", "format": "uri"}, {"type": "integer"}],
                },
            },
            "required": [
                "email", "tags", "code", "price", "qty", "kind", "box", "fixed", "fixed_obj", "pair",
            ],
        },
    },
    {"type": "string", "format": "email"},  # the document's own RNG: a format drawn at the top
    {"type": "string", "format": "date-time"},
    {"type": "integer", "minimum": 0, "maximum": 3},
    {
        "$defs": {"addr": _ADDRESS},
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/addr"},
            "either": {"oneOf": [{"const": 1}, {"type": "string", "format": "email"}]},
            "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "email": {"type": "string"},
        },
        "required": ["home", "either", "any", "email"],
    },
]


@pytest.mark.parametrize("index", range(len(SEEDED_SCHEMAS)))
def test_values_drawn_from_their_seed_are_what_the_walk_draws(index: int) -> None:
    _draws_what_the_walk_draws(SEEDED_SCHEMAS[index], index, seeds=200, rng_every=4)


def _draws_what_the_walk_draws(schema: dict[str, Any], index: int, seeds: int, rng_every: int) -> None:
    """The compiled schema against the keyword walk over `seeds` seeds: the document and the RNG after it
    (every `rng_every`-th seed draws from the RNG first)."""
    for seed in range(seeds):
        planned, walked, rng_a, rng_b = _both(schema, seed * 104729 + index, rng_first=seed % rng_every == 0)
        assert repr(planned) == repr(walked)
        assert rng_a == rng_b


def test_the_order_schema_of_the_bench_draws_what_the_walk_draws() -> None:
    from bench.cases import NESTED_SCHEMA

    for seed in range(500):
        planned, walked, rng_a, rng_b = _both(NESTED_SCHEMA, seed * 15485863, rng_first=seed % 5 == 0)
        assert repr(planned) == repr(walked)
        assert rng_a == rng_b


def test_a_seed_drawer_draws_what_its_kind_drawer_draws() -> None:
    from synthgpt.generators import schema_names as names
    from synthgpt.seeding import DrawRandom

    kinds = {kind for kind, _ in names.STRING_NAMES} | set(names.SEEDED_FORMATS) | {"words", "first_name"}
    seeded = 0
    for kind in sorted(kinds):
        by_seed = names.seed_drawer(kind)
        if by_seed is None:
            continue
        seeded += 1
        for seed in range(0, 2**64, 2**64 // 97):
            # whatever the RNG, and whatever the request
            assert by_seed(seed) == names.kind_drawer(kind, None)(DrawRandom(seed ^ 5), seed, _REQUEST)
            assert by_seed(seed) == names.kind_drawer(kind, 7)(DrawRandom(3), seed, _REQUEST)
    assert seeded >= 20
    for kind in ("sentence", "slug", "word", "product", "words", "date-time", "date", "uuid", "ipv4"):
        assert names.seed_drawer(kind) is None  # drawn from the RNG


# -- the schema cache found by the text a schema is sent in ----------------------------------------------


def _reordered(value: Any) -> Any:
    """`value` with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


KEYED: list[Any] = [
    *SCHEMAS, *SEEDED_SCHEMAS,
    {"const": None, "type": "null"}, {"const": float("nan")}, {"const": float("inf")}, {"enum": [None, 1]},
    {"enum": [float("-inf"), 1]}, {"const": 1e-05}, {"const": 0.00001}, {"const": 1.5e-7}, {"const": 2**70},
    {"const": "\ud800"}, {"const": "null"}, {"const": [None]}, {"const": 1}, {"const": 1.0}, {"const": True},
    {"const": -0.0}, {"const": 0.0}, {"type": "string", "description": "e-mail 0.00001"},
    {"type": "integer", "default": None}, {"type": "integer", "minimum": 3},
]  # fmt: skip


def test_the_text_cache_gives_what_the_content_key_gives() -> None:
    for clear in (True, False):
        if clear:
            structured._BY_TEXT.clear()
        for schema in KEYED:
            for form in (schema, _reordered(schema), copy.deepcopy(schema)):
                try:
                    expected = structured._compile(structured._content_key(form))
                except Exception as exc:  # the same error either way
                    with pytest.raises(type(exc)):
                        structured._compiled(form)
                    continue
                assert structured._compiled(form) is expected
                assert structured._compiled(form) is expected  # found again


def test_null_and_nan_never_share_a_cached_text() -> None:
    for first, second in ((None, float("nan")), (float("nan"), None), (None, float("inf"))):
        structured._BY_TEXT.clear()
        a, b = {"const": first}, {"const": second}
        assert structured._compiled(a) is structured._compile(structured._content_key(a))
        assert structured._compiled(b) is structured._compile(structured._content_key(b))
        assert structured._compiled(a) is not structured._compiled(b)


def test_the_text_cache_is_bounded() -> None:
    for i in range(structured._MAX_SCHEMAS * 2 + 5):
        structured.compiled_schema({"type": "integer", "maximum": i})
        assert len(structured._BY_TEXT) <= structured._MAX_SCHEMAS


# -- values read from one output mixed with their seed (`MixedSeeds.with_outputs`) -----------------------


def _random_schema(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A schema of the shapes a compiled plan draws by outputs (objects with required and optional
    properties, arrays of every count bound, numbers with and without bounds, enums, booleans, Faker
    kinds, ids) mixed with those it draws from an RNG (nullable and multi-typed values, texts, formats)."""
    kinds = ["string", "integer", "number", "boolean", "enum", "const", "null", "multi", "format"]
    if depth < 3:
        kinds += ["object", "object", "array", "array"]
    kind = rng.choice(kinds)
    if kind == "object":
        pool = [*_STRINGS, "price", "qty", "age", "flag", "total", "score", "x"]
        names = rng.sample(pool, rng.randint(0, 7))
        props = {name: _random_schema(rng, depth + 1) for name in names}
        return {"type": "object", "properties": props, "required": [n for n in names if rng.random() < 0.6]}
    if kind == "array":
        out: dict[str, Any] = {"type": "array", "items": _random_schema(rng, depth + 1)}
        if rng.random() < 0.5:
            out["minItems"] = rng.randint(0, 4)
        if rng.random() < 0.5:
            out["maxItems"] = out.get("minItems", 0) + rng.randint(0, 5)
        if rng.random() < 0.2:
            out["prefixItems"] = [_random_schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]
        return out
    if kind in ("integer", "number"):
        out = {"type": kind}
        if rng.random() < 0.5:
            out["minimum"] = rng.choice([-(2**40), -5, 0, 1, 2.5, 10**12])
        if rng.random() < 0.5:
            out["maximum"] = out.get("minimum", 0) + rng.choice([0, 1, 3, 7.5, 2**33, 10**15])
        if rng.random() < 0.15:
            out["multipleOf"] = rng.choice([2, 0.5, 0.01])
        return out
    if kind == "enum":
        return {"enum": rng.sample(["a", "b", 3, 4.5, None, True, "c", [1], {"k": 2}], rng.randint(1, 5))}
    if kind == "const":
        return {"const": rng.choice(["v", 1, None, {"k": [1]}])}
    if kind == "multi":
        return {"type": rng.sample(["string", "integer", "null", "boolean", "object"], rng.randint(2, 3))}
    if kind == "format":
        formats = ["email", "uri", "hostname", "date-time", "uuid", "ipv4"]
        return {"type": "string", "format": rng.choice(formats)}
    if kind == "string" and rng.random() < 0.3:
        return {"type": "string", rng.choice(["minLength", "maxLength"]): rng.randint(0, 30)}
    return {"type": kind}


def test_random_schemas_draw_what_the_walk_draws() -> None:
    """Objects, arrays, numbers, enums and Faker values drawn from the outputs their parent mixes with their
    seeds, against the keyword-by-keyword walk: ~400 schemas, 30 seeds each."""
    rng = random.Random(2024)
    drawn = 0
    for n in range(400):
        schema = {"type": "object", "properties": {f"p{i}": _random_schema(rng) for i in range(3)},
                  "required": ["p0"]}  # fmt: skip
        if n % 4 == 0:
            schema = _random_schema(rng)
        try:
            FromSchema(schema)
        except SchemaError:  # bounds no value meets: refused before any draw, compiled or not
            continue
        drawn += 1
        for seed in range(30):
            planned, walked, rng_a, rng_b = _both(schema, rng.getrandbits(64), rng_first=seed % 3 == 0)
            assert repr(planned) == repr(walked), schema
            assert rng_a == rng_b
    assert drawn > 300


def test_a_number_from_its_output_is_the_number_from_its_rng() -> None:
    from synthgpt.generators.schema_check import number_drawer, number_output_drawer
    from synthgpt.seeding import DrawRandom

    rng = random.Random(7)
    schemas = [_random_schema(random.Random(i)) for i in range(3000)]
    numbers = [s for s in schemas if s.get("type") in ("integer", "number")]
    numbers += [
        {"type": "number", "minimum": 1, "maximum": 1},
        {"type": "number", "exclusiveMinimum": 3, "maximum": 3.5},
        {"type": "integer", "minimum": 7000, "maximum": 6999 + 2**32},
        {"type": "number", "minimum": 1e300},
        {"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1.001},
    ]
    found = 0
    for schema in numbers:
        for name in ("price", "age", "x", "total", "lat"):
            integer = schema["type"] == "integer"
            by_rng = number_drawer(schema, name, integer)
            by_output = number_output_drawer(schema, name, integer)
            if by_output is None:
                continue
            assert by_rng is not None
            found += 1
            for _ in range(20):
                seed = rng.getrandbits(64)
                value = by_output(DrawRandom(seed).next64())
                expected = by_rng(DrawRandom(seed))
                assert repr(value) == repr(expected), (schema, name)
    assert found > 200
    wide = {"type": "integer", "minimum": 5000, "maximum": 5000 + 2**32}
    assert number_output_drawer(wide, "x", True) is None
    assert number_output_drawer({**wide, "maximum": 4999 + 2**32}, "x", True)
    assert number_output_drawer({"type": "number", "multipleOf": 0.5}, "x", False) is None


def test_a_forked_drawer_draws_what_the_seed_drawer_draws() -> None:
    from synthgpt.generators import schema_names as names
    from synthgpt.seeding import mix_seed

    kinds = {kind for kind, _ in names.STRING_NAMES} | set(names.SEEDED_FORMATS) | {"words", "first_name"}
    forked = 0
    for kind in sorted(kinds):
        fork = names.forked_drawer(kind)
        if fork is None:
            assert kind in ("id", "code") or names.seed_drawer(kind) is None
            continue
        forked += 1
        key, at_fork = fork
        by_seed = names.seed_drawer(kind)
        assert by_seed is not None
        for seed in range(0, 2**64, 2**64 // 97):
            assert at_fork(mix_seed(seed, key)) == by_seed(seed)
    assert forked >= 18


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required}


_SIBLING_SCHEMAS: list[dict[str, Any]] = [
    # object siblings, required and optional, one empty, one nested in another, among plain values
    _obj({
        "a": _obj({"x": {"type": "integer"}, "y": {"type": "string"}}),
        "n": {"type": "number", "minimum": 0, "maximum": 9},
        "b": _obj({"z": {"type": "boolean"}, "inner": _obj({"p": {"type": "string"}, "q": _obj({})})},
                  required=["z"]),
        "e": _obj({}),
        "c": _obj({"w": {"enum": ["u", "v"]}}),
    }, required=["a", "n", "b"]),
    # arrays of objects: from one item to many, after prefixItems that are and are not objects
    _obj({"items": {"type": "array", "minItems": 0, "maxItems": 6,
                    "items": _obj({"sku": {"type": "string"}, "qty": {"type": "integer"}},
                                  required=["sku"])}}),
    {"type": "array", "minItems": 2, "maxItems": 5,
     "prefixItems": [_obj({"h": {"type": "string"}}), {"type": "integer"}, _obj({"k": {"type": "number"}})],
     "items": _obj({"t": {"type": "string", "format": "email"}})},
    # nullable objects are drawn by their own leaves, beside objects mixed together
    _obj({"a": {"type": ["object", "null"], "properties": {"x": {"type": "string"}}},
          "b": _obj({"y": {"type": "string"}}), "c": _obj({"z": {"type": "integer"}})}),
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(_SIBLING_SCHEMAS)))
def test_sibling_objects_mixed_at_once_draw_what_the_walk_draws(index: int) -> None:
    _draws_what_the_walk_draws(_SIBLING_SCHEMAS[index], index, seeds=600, rng_every=3)


def test_the_bench_order_mixes_its_object_siblings_at_once() -> None:
    from bench.cases import NESTED_SCHEMA
    from synthgpt.generators.schema_plan import _Builder

    builder = _Builder(FromSchema(NESTED_SCHEMA))
    builder.node(NESTED_SCHEMA, "", top=True)
    customer = builder.node(NESTED_SCHEMA["properties"]["customer"], "customer")
    totals = builder.node(NESTED_SCHEMA["properties"]["totals"], "totals")
    assert customer is not None and totals is not None
    assert builder.siblings([customer[1], totals[1]]) is not None
    assert builder.siblings([customer[1]]) is None  # one object: its own mix
