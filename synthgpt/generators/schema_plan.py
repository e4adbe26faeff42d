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
from .schema_names import FORMATS, fit_text, kind_drawer, string_kind

if TYPE_CHECKING:
    from .schema import FromSchema
    from .schema_check import Schema

__all__ = ["Plan", "compile_plan"]

Node = Callable[[int, DrawContext, "random.Random | None"], Any]
"""(the value's seed, the document's context, the RNG when the caller already made it) -> the value."""
Body = Callable[["random.Random", int, DrawContext], Any]
"""A typed value drawn once its type is chosen: (the RNG after that choice, the seed, the context)."""

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
    return None if root is None else Plan(root[0], root[1])


class _Builder:
    def __init__(self, owner: FromSchema) -> None:
        self.owner = owner
        self.s = owner._s

    def node(self, s: Schema, name: str, *, top: bool = False) -> tuple[Node, int] | None:
        """(the node's drawing function, the most values it draws); None at the top when not compiled."""
        f, followed = self.s.flat(s)
        if followed or "anyOf" in f or "oneOf" in f:
            return None if top else (self._handed_over(s, name), 0)
        if "const" in f:
            return _constant(f["const"]), 1
        if "enum" in f:
            return _enum(self.s.choices(f)), 1
        types = _types(f)
        if "array" in types and f.get("uniqueItems"):  # drawn again until distinct: left to `_value`
            return None if top else (self._handed_over(s, name), 0)
        bodies: dict[str, Body] = {}
        most = 1
        for t in dict.fromkeys(types):
            body, n = self._typed(f, t, name)
            bodies[t] = body
            most = max(most, n)
        return _typed_node(types, bodies), most

    def _handed_over(self, s: Schema, name: str) -> Node:
        value = self.owner._value

        def node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            ctx = root.at_seed(seed)
            ctx._rng = rng
            return value(s, ctx, (), name, (), False)

        return node

    def _typed(self, f: Schema, t: str, name: str) -> tuple[Body, int]:
        if t == "object":
            return self._object(f)
        if t == "array":
            return self._array(f, name)
        if t == "string":
            return self._string(f, name), 1
        if t in ("integer", "number"):
            draw = number_drawer(f, name, t == "integer")
            if draw is None:
                return (lambda rng, seed, root: None), 1
            return (lambda rng, seed, root: draw(rng)), 1
        if t == "null":
            return (lambda rng, seed, root: None), 1
        return (lambda rng, seed, root: rng.random() < 0.5), 1

    def _object(self, f: Schema) -> tuple[Body, int]:
        from .schema import _prop_keys

        required = f.get("required", [])
        entries: list[tuple[str, bool, int, int, Node]] = []
        most = 1
        for name in dict.fromkeys([*f.get("properties", {}), *required]):
            child = self.node(_prop(f, name), name)
            assert child is not None  # only the top may be left to `_value`
            optional_key, value_key = _prop_keys(name)
            entries.append((name, name in required, optional_key, value_key, child[0]))
            most += child[1] + (name not in required)  # `_object` counts each optional one it weighs

        def body(rng: random.Random, seed: int, root: DrawContext) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, is_required, optional_key, value_key, child in entries:
                if not is_required and DrawRandom(mix_seed(seed, optional_key)).random() < 0.5:
                    continue
                out[name] = child(mix_seed(seed, value_key), root, None)
            return out

        return body, most

    def _array(self, f: Schema, name: str) -> tuple[Body, int]:
        prefix, items = f.get("prefixItems", []), f.get("items")
        lo, hi = f.get("minItems", 0), f.get("maxItems")
        if items is False or (items is None and prefix):  # as `FromSchema._array`
            hi = max(lo, len(prefix) if hi is None else min(hi, len(prefix)))
        top = hi if hi is not None else lo + 4
        base = min(max(lo, 1), top)  # a compiled schema has no $ref: always at the first level
        upper = min(top, base + 4)
        heads: list[Node] = []
        most = 1
        for i in range(min(len(prefix), upper)):
            child = self.node(_item(f, i), name)
            assert child is not None  # only the top may be left to `_value`
            heads.append(child[0])
            most += child[1]
        tail: Node | None = None
        if upper > len(prefix):  # every item past prefixItems has the same schema
            child = self.node(_item(f, len(prefix)), name)
            assert child is not None
            tail = child[0]
            most += (upper - len(prefix)) * child[1]
        nodes: list[Node] = heads + [tail] * min(upper - len(heads), 64) if tail is not None else heads

        def body(rng: random.Random, seed: int, root: DrawContext) -> list[Any]:
            n = rng.randint(base, upper)
            if n <= len(nodes):
                return [nodes[i](mix_seed(seed, item_key(i)), root, None) for i in range(n)]
            return [
                (nodes[i] if i < len(heads) else tail)(mix_seed(seed, item_key(i)), root, None)  # type: ignore[misc]
                for i in range(n)
            ]

        return body, most

    def _string(self, f: Schema, name: str) -> Body:
        lo, hi = f.get("minLength", 0), f.get("maxLength")
        if "pattern" in f or f.get("format", "") in FORMATS:
            string = self.owner._string

            def handed(rng: random.Random, seed: int, root: DrawContext) -> str:
                ctx = root.at_seed(seed)
                ctx._rng = rng
                return string(f, ctx, (), name)

            return handed
        draw_text = kind_drawer(string_kind(name), hi)

        def text(rng: random.Random, seed: int, root: DrawContext) -> str:
            return fit_text(draw_text(rng, seed, root.request), lo, hi, rng)

        return text


def _constant(value: Any) -> Node:
    if isinstance(value, _IMMUTABLE):
        return lambda seed, root, rng: value
    return lambda seed, root, rng: copy.deepcopy(value)


def _enum(choices: list[Any]) -> Node:
    if all(isinstance(v, _IMMUTABLE) for v in choices):
        return lambda seed, root, rng: (rng or DrawRandom(seed)).choice(choices)
    return lambda seed, root, rng: copy.deepcopy((rng or DrawRandom(seed)).choice(choices))


def _typed_node(types: list[str], bodies: dict[str, Body]) -> Node:
    """`_value`'s choice of a type (null one time in five when allowed, else any of the others), then
    the body of that type."""
    concrete = [t for t in types if t != "null"] or ["null"]
    nullable = "null" in types
    if len(concrete) > 1 or nullable:

        def chosen(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is None:
                rng = DrawRandom(seed)
            t = "null" if nullable and rng.random() < 0.2 else rng.choice(concrete)
            return bodies[t](rng, seed, root)

        return chosen
    body = bodies[concrete[0]]
    if concrete[0] == "object":
        # an object draws nothing from its own RNG after the choice: a fork's RNG need not be made at all
        def object_node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is not None:
                rng.choice(concrete)
            return body(rng, seed, root)  # type: ignore[arg-type]

        return object_node

    def single(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
        if rng is None:
            # a choice among one type still takes one step of the stream, as `choice` does: the stream
            # one step on from `seed`
            return body(DrawRandom(seed + _ONE_STEP), seed, root)
        rng.choice(concrete)
        return body(rng, seed, root)

    return single
