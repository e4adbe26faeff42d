"""A schema compiled into drawing functions: what `FromSchema` draws, without re-reading the schema per value.

`FromSchema._value` reads each node's keywords, flattens it, picks its type and forks a `DrawContext` for
every property and item, for every value of every answer. A schema's shape does not change between
answers, so `compile_plan` walks it once and keeps, per node, a function of the value's seed: the keywords
read, the property order, the fork keys, the number bounds and the kind of text a property's name asks for
are settled at build time, and a fork is followed by its seed alone (`mix_seed`), a `DrawRandom` made only
where the value draws from it.

Every function makes exactly the draws `_value` makes, in the same order and from the same seeds, so the
documents are byte-identical (`tests/generators/test_schema_plan.py` compares the two on many schemas and
seeds). Nodes whose drawing depends on more than their own keywords (`$ref` recursion, `anyOf`/`oneOf`,
`uniqueItems`, patterns and formats that may retry) are handed to `_value` itself, at the seed it would have
had. A plan is built only for a schema without overrides; the owner keeps its own deep copy of the schema,
so the plan cannot go stale.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..seeding import DrawRandom, mix_seed
from .core import DrawContext, item_key
from .schema_check import _item, _prop, _types, number_drawer
from .schema_names import FORMATS, SEEDED_FORMATS, fit_text, kind_drawer, seed_drawer, string_kind

if TYPE_CHECKING:
    from .schema import FromSchema
    from .schema_check import Schema

__all__ = ["Plan", "compile_plan"]

Node = Callable[[int, DrawContext, "random.Random | None"], Any]
"""(the value's seed, the document's context, the RNG when the caller already made it) -> the value."""
Fresh = Callable[[int, DrawContext], Any]
"""A node where the caller made no RNG (every property and item): `node(seed, root, None)`, the RNG made
only when the value draws from it (an id or a Faker value is drawn from its seed alone)."""
Body = Callable[["random.Random", int, DrawContext], Any]
"""A typed value drawn once its type is chosen: (the RNG after that choice, the seed, the context)."""
Part = tuple[Node, Fresh, int]
"""A compiled node: its function, the same where the caller made no RNG, the most values it draws."""

_IMMUTABLE = (str, int, float, bool, type(None))


def _one_step() -> int:
    """What one draw adds to a `DrawRandom`'s state (SplitMix64 is a counter: state + step, modulo 2**64)."""
    rng = DrawRandom(0)
    rng.next64()
    step: int = rng.getstate()[1]
    return step


_ONE_STEP = _one_step()


class Plan:
    """A compiled schema: `draw(ctx)` is what `FromSchema._value(schema, ctx, …)` returns at its root.

    `max_values` bounds the values the compiled nodes draw (those handed to `_value` count themselves)."""

    __slots__ = ("max_values", "root")

    def __init__(self, root: Node, max_values: int) -> None:
        self.root = root
        self.max_values = max_values

    def draw(self, ctx: DrawContext) -> Any:
        return self.root(ctx.seed, ctx, ctx.rng)


def compile_plan(owner: FromSchema) -> Plan | None:
    """The plan of `owner`'s schema, or None when its root must be drawn by `_value` (a `$ref`, `anyOf`
    or `oneOf` at the top, or overrides)."""
    if owner.overrides:
        return None
    builder = _Builder(owner)
    root = builder.node(owner.schema, "", top=True)
    return None if root is None else Plan(root[0], root[2])


class _Builder:
    def __init__(self, owner: FromSchema) -> None:
        self.owner = owner
        self.s = owner._s

    def node(self, s: Schema, name: str, *, top: bool = False) -> Part | None:
        """The node's drawing functions and the most values it draws; None at the top when not compiled."""
        f, followed = self.s.flat(s)
        if followed or "anyOf" in f or "oneOf" in f:
            return None if top else _unseeded(self._handed_over(s, name), 0)
        if "const" in f:
            return _constant(f["const"])
        if "enum" in f:
            return _enum(self.s.choices(f))
        types = _types(f)
        if "array" in types and f.get("uniqueItems"):  # drawn again until distinct: left to `_value`
            return None if top else _unseeded(self._handed_over(s, name), 0)
        bodies: dict[str, Body] = {}
        seeded: dict[str, Fresh | None] = {}
        most = 1
        for t in dict.fromkeys(types):
            body, fresh, n = self._typed(f, t, name)
            bodies[t] = body
            seeded[t] = fresh
            most = max(most, n)
        node, fresh = _typed_node(types, bodies, seeded)
        return node, fresh, most

    def _handed_over(self, s: Schema, name: str) -> Node:
        value = self.owner._value

        def node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            ctx = root.at_seed(seed)
            ctx._rng = rng
            return value(s, ctx, (), name, (), False)

        return node

    def _typed(self, f: Schema, t: str, name: str) -> tuple[Body, Fresh | None, int]:
        """The body of type `t`, what it gives from a fork's own new RNG (None: the body, from an RNG made
        for it, as `_typed_node` does) and the most values it draws."""
        if t == "object":
            fields, most = self._object(f)
            return (lambda rng, seed, root: fields(seed, root)), fields, most
        if t == "array":
            body, most = self._array(f, name)
            return body, None, most
        if t == "string":
            body, fresh = self._string(f, name)
            return body, fresh, 1
        if t in ("integer", "number"):
            draw = number_drawer(f, name, t == "integer")
            if draw is None:
                return (lambda rng, seed, root: None), (lambda seed, root: None), 1
            # the RNG after the type's choice: one step on from the seed, as `_typed_node` makes it
            number = draw

            def by_rng(seed: int, root: DrawContext) -> Any:
                return number(DrawRandom(seed + _ONE_STEP))

            return (lambda rng, seed, root: number(rng)), by_rng, 1
        if t == "null":
            return (lambda rng, seed, root: None), (lambda seed, root: None), 1
        return (lambda rng, seed, root: rng.random() < 0.5), None, 1

    def _object(self, f: Schema) -> tuple[Fresh, int]:
        """The object's properties drawn (it draws nothing from its own RNG), and the most values."""
        from .schema import _prop_keys

        required = f.get("required", [])
        entries: list[tuple[str, bool, int, int, Fresh]] = []
        most = 1
        for name in dict.fromkeys([*f.get("properties", {}), *required]):
            child = self.node(_prop(f, name), name)
            assert child is not None  # only the top may be left to `_value`
            optional_key, value_key = _prop_keys(name)
            entries.append((name, name in required, optional_key, value_key, child[1]))
            most += child[2] + (name not in required)  # `_object` counts each optional one it weighs

        def fields(seed: int, root: DrawContext) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, is_required, optional_key, value_key, child in entries:
                if not is_required and DrawRandom(mix_seed(seed, optional_key)).random() < 0.5:
                    continue
                out[name] = child(mix_seed(seed, value_key), root)
            return out

        return fields, most

    def _array(self, f: Schema, name: str) -> tuple[Body, int]:
        prefix, items = f.get("prefixItems", []), f.get("items")
        lo, hi = f.get("minItems", 0), f.get("maxItems")
        if items is False or (items is None and prefix):  # as `FromSchema._array`
            hi = max(lo, len(prefix) if hi is None else min(hi, len(prefix)))
        top = hi if hi is not None else lo + 4
        base = min(max(lo, 1), top)  # a compiled schema has no $ref: always at the first level
        upper = min(top, base + 4)
        heads: list[Fresh] = []
        most = 1
        for i in range(min(len(prefix), upper)):
            child = self.node(_item(f, i), name)
            assert child is not None  # only the top may be left to `_value`
            heads.append(child[1])
            most += child[2]
        tail: Fresh | None = None
        if upper > len(prefix):  # every item past prefixItems has the same schema
            child = self.node(_item(f, len(prefix)), name)
            assert child is not None
            tail = child[1]
            most += (upper - len(prefix)) * child[2]
        nodes: list[Fresh] = heads + [tail] * min(upper - len(heads), 64) if tail is not None else heads
        keys = [item_key(i) for i in range(len(nodes))]  # each item's fork key, taken once

        def body(rng: random.Random, seed: int, root: DrawContext) -> list[Any]:
            n = rng.randint(base, upper)
            if n <= len(nodes):
                return [nodes[i](mix_seed(seed, keys[i]), root) for i in range(n)]
            return [
                (nodes[i] if i < len(heads) else tail)(mix_seed(seed, item_key(i)), root)  # type: ignore[misc]
                for i in range(n)
            ]

        return body, most

    def _string(self, f: Schema, name: str) -> tuple[Body, Fresh | None]:
        lo, hi, fmt = f.get("minLength", 0), f.get("maxLength"), f.get("format", "")
        unbounded = hi is None and type(lo) is int and lo <= 0  # any text fits: `fit_text` cuts nothing
        if "pattern" not in f and fmt in FORMATS and unbounded:
            # `FromSchema._string` takes the format's first draw, which always fits
            draw = SEEDED_FORMATS[fmt]
            return (lambda rng, seed, root: draw(rng, seed)), _by_seed(seed_drawer(fmt))
        if "pattern" in f or fmt in FORMATS:
            string = self.owner._string

            def handed(rng: random.Random, seed: int, root: DrawContext) -> str:
                ctx = root.at_seed(seed)
                ctx._rng = rng
                return string(f, ctx, (), name)

            return handed, None
        kind = string_kind(name)
        draw_text = kind_drawer(kind, hi)

        def text(rng: random.Random, seed: int, root: DrawContext) -> str:
            return fit_text(draw_text(rng, seed, root.request), lo, hi, rng)

        by_seed = seed_drawer(kind)
        if by_seed is None or not unbounded:
            return text, None

        def seed_text(seed: int, root: DrawContext) -> str:
            value = by_seed(seed)
            return value[:-1] + "x" if value.endswith(" ") else value  # all `fit_text` does without bounds

        return text, seed_text


def _by_seed(draw: Callable[[int], str] | None) -> Fresh | None:
    """A value drawn from its seed alone, as a node where the caller made no RNG (None for None)."""
    if draw is None:
        return None
    return lambda seed, root: draw(seed)


def _unseeded(node: Node, most: int) -> Part:
    """A part whose node makes its own RNG when it has none."""
    return node, (lambda seed, root: node(seed, root, None)), most


def _constant(value: Any) -> Part:
    if isinstance(value, _IMMUTABLE):
        return (lambda seed, root, rng: value), (lambda seed, root: value), 1
    return _unseeded(lambda seed, root, rng: copy.deepcopy(value), 1)


def _enum(choices: list[Any]) -> Part:
    if all(isinstance(v, _IMMUTABLE) for v in choices):
        return (
            (lambda seed, root, rng: (rng or DrawRandom(seed)).choice(choices)),
            (lambda seed, root: DrawRandom(seed).choice(choices)),
            1,
        )
    return _unseeded(lambda seed, root, rng: copy.deepcopy((rng or DrawRandom(seed)).choice(choices)), 1)


def _typed_node(
    types: list[str], bodies: dict[str, Body], seeded: dict[str, Fresh | None]
) -> tuple[Node, Fresh]:
    """`_value`'s choice of a type (null one time in five when allowed, else any of the others), then
    the body of that type; and the same where the caller made no RNG."""
    concrete = [t for t in types if t != "null"] or ["null"]
    nullable = "null" in types
    if len(concrete) > 1 or nullable:

        def chosen(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is None:
                rng = DrawRandom(seed)
            t = "null" if nullable and rng.random() < 0.2 else rng.choice(concrete)
            return bodies[t](rng, seed, root)

        return chosen, (lambda seed, root: chosen(seed, root, None))
    body = bodies[concrete[0]]
    fresh = seeded[concrete[0]]
    if concrete[0] == "object":
        assert fresh is not None  # an object's fields: it draws nothing from its own RNG after the choice
        fields = fresh

        def object_node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is not None:
                rng.choice(concrete)
            return fields(seed, root)

        return object_node, fields

    def single(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
        if rng is None:
            # a choice among one type still takes one step of the stream, as `choice` does: the stream
            # one step on from `seed`
            return body(DrawRandom(seed + _ONE_STEP), seed, root)
        rng.choice(concrete)
        return body(rng, seed, root)

    return single, fresh or (lambda seed, root: body(DrawRandom(seed + _ONE_STEP), seed, root))
