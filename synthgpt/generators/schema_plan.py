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
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ..seeding import DrawRandom, LaneMix, MixedSeeds
from .core import DrawContext, item_key
from .schema_check import _item, _prop, _types, number_drawer, number_output_drawer, too_long
from .schema_names import (
    FORMATS,
    SEEDED_FORMATS,
    fit_text,
    forked_drawer,
    kind_drawer,
    seed_drawer,
    string_kind,
)

if TYPE_CHECKING:
    from .schema import FromSchema
    from .schema_check import Schema

__all__ = ["Plan", "compile_plan"]

Node = Callable[[int, DrawContext, "random.Random | None"], Any]
"""(the value's seed, the document's context, the RNG when the caller already made it) -> the value."""
Leaf = Callable[[int, int, DrawContext], Any]
"""A node drawn as a property or an item, where the caller made no RNG: (the value's seed, the output its
`Then` asks for, the document's context) -> the value. The parent mixes every child's seed and output at
once (`MixedSeeds.with_outputs`): a value drawn from one output (a number, an enum's pick, a Faker value
at its fork of the seed) makes no RNG and no mix of its own, and an id is its seed's hash. Two or more
object children (of an object, or an array's items) have their own lanes mixed in one call too
(`_Builder.siblings`, `seeding.LaneMix`)."""
Then = tuple[int, int]
"""Which output of its seed a leaf reads, as `MixedSeeds.with_outputs` takes it: (k, 1) is `mix_seed(seed,
k)`, (0, 2) the first output of the RNG left after a choice among one type (`DrawRandom(seed + step)`),
(0, 1) that of a new `DrawRandom(seed)`, (0, 0) none."""
Body = Callable[["random.Random", int, DrawContext], Any]
"""A typed value drawn once its type is chosen: (the RNG after that choice, the seed, the context)."""
Part = tuple[Node, Leaf, Then, int]
"""A compiled node: its function, the same as a leaf, the output that leaf reads, the most values it draws."""
Fork = tuple[Leaf, Then]
"""A node as its parent draws it."""
Build = Callable[[tuple[int, ...], tuple[int, ...], DrawContext], dict[str, Any]]
"""An object's properties from the seeds and outputs of its lanes, mixed by its parent with its siblings'."""
Siblings = tuple[LaneMix, Callable[[tuple[int, ...]], Any], list[tuple[int, int, Build] | None]]
"""Sibling objects' lanes mixed at once: the mix, what gathers each lane's parent seed from the siblings'
seeds, and per sibling its lanes' span and its `Build` (None: a sibling drawn by its own leaf)."""

_IMMUTABLE = (str, int, float, bool, type(None))
_NO_OUTPUT: Then = (0, 0)
_FRESH: Then = (0, 1)  # the first output of `DrawRandom(seed)`
_AFTER_CHOICE: Then = (0, 2)  # the output after one draw: the choice among one type, as `_value` makes it
_HALF = 1 << 63
"""`DrawRandom.random() < 0.5` for an output below this: `random()` is the output's top 53 bits / 2**53."""


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
    return None if root is None else Plan(root[0], root[3])


class _Builder:
    def __init__(self, owner: FromSchema) -> None:
        self.owner = owner
        self.s = owner._s
        # each object's leaf (by id; the leaf kept too), its lanes' keys and `then` pairs, and its `Build`
        self.objects: dict[int, tuple[Leaf, tuple[int, ...], tuple[Then, ...], Build]] = {}

    def siblings(self, leaves: list[Leaf]) -> Siblings | None:
        """How a parent mixes the lanes of its object children (`leaves`, its children's) in one call; None
        when fewer than two of them are objects (nothing to save)."""
        found = [self.objects.get(id(leaf)) for leaf in leaves]
        spans: list[tuple[int, int, Build] | None] = []
        keys: list[int] = []
        thens: list[Then] = []
        parents: list[int] = []
        for i, entry in enumerate(found):
            if entry is None or len(entry[1]) == 0:
                spans.append(None)
                continue
            spans.append((len(keys), len(keys) + len(entry[1]), entry[3]))
            keys += entry[1]
            thens += entry[2]
            parents += [i] * len(entry[1])
        if sum(span is not None for span in spans) < 2 or len(keys) > 64:
            return None
        return LaneMix(tuple(keys), tuple(thens)), itemgetter(*parents), spans

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
        forks: dict[str, Fork | None] = {}
        most = 1
        for t in dict.fromkeys(types):
            body, fork, n = self._typed(f, t, name)
            bodies[t] = body
            forks[t] = fork
            most = max(most, n)
        node, (leaf, then) = _typed_node(types, bodies, forks)
        return node, leaf, then, most

    def _handed_over(self, s: Schema, name: str) -> Node:
        value = self.owner._value

        def node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            ctx = root.at_seed(seed)
            ctx._rng = rng
            return value(s, ctx, (), name, (), False)

        return node

    def _typed(self, f: Schema, t: str, name: str) -> tuple[Body, Fork | None, int]:
        """The body of type `t`, how a parent draws it as a leaf once the type is chosen (None: the body,
        from an RNG made for it, as `_typed_node` does) and the most values it draws."""
        if t == "object":
            fields, most = self._object(f)
            return (lambda rng, seed, root: fields(seed, 0, root)), (fields, _NO_OUTPUT), most
        if t == "array":
            return self._array(f, name)
        if t == "string":
            body, fork = self._string(f, name)
            return body, fork, 1
        if t in ("integer", "number"):
            draw = number_drawer(f, name, t == "integer")
            if draw is None:
                return (lambda rng, seed, root: None), ((lambda seed, out, root: None), _NO_OUTPUT), 1
            number = draw
            at = number_output_drawer(f, name, t == "integer")
            if at is None:
                return (lambda rng, seed, root: number(rng)), None, 1
            number_at = at
            # from the RNG left after the type's choice: the output after one step
            by_output: Leaf = lambda seed, out, root: number_at(out)  # noqa: E731
            return (lambda rng, seed, root: number(rng)), (by_output, _AFTER_CHOICE), 1
        if t == "null":
            return (lambda rng, seed, root: None), ((lambda seed, out, root: None), _NO_OUTPUT), 1
        # a boolean: `random() < 0.5` from the RNG left after the type's choice
        flip: Leaf = lambda seed, out, root: out < _HALF  # noqa: E731
        return (lambda rng, seed, root: rng.random() < 0.5), (flip, _AFTER_CHOICE), 1

    def _object(self, f: Schema) -> tuple[Leaf, int]:
        """The object's properties drawn (it draws nothing from its own RNG), and the most values.

        Each property's seed is `mix_seed(seed, value_key)`, and an optional one is there when
        `DrawRandom(mix_seed(seed, optional_key)).random() < 0.5`: all of them, and each leaf's output, are
        mixed at once."""
        from .schema import _prop_keys

        required = f.get("required", [])
        needed = set(required)  # a set: 4,000 properties tested against a list of 94,000 took 8.5 s
        names: list[str] = []
        leaves: list[Leaf] = []
        keys: list[int] = []
        thens: list[Then] = []
        optional: list[tuple[str, int]] = []
        most = 1
        for name in dict.fromkeys([*f.get("properties", {}), *required]):
            child = self.node(_prop(f, name), name)
            assert child is not None  # only the top may be left to `_value`
            optional_key, value_key = _prop_keys(name)
            names.append(name)
            leaves.append(child[1])
            keys.append(value_key)
            thens.append(child[2])
            if name not in needed:
                optional.append((name, optional_key))
            most += child[3] + (name not in needed)  # `_object` counts each optional one it weighs
        all_keys = (*keys, *(key for _, key in optional))
        all_thens = (*thens, *(_FRESH for _ in optional))
        mixed = MixedSeeds(all_keys, all_thens).with_outputs
        build = self._fields(names, leaves, optional)

        def fields(seed: int, out: int, root: DrawContext) -> dict[str, Any]:
            seeds, outs = mixed(seed)
            return build(seeds, outs, root)

        self.objects[id(fields)] = (fields, all_keys, all_thens, build)
        return fields, most

    def _fields(self, names: list[str], leaves: list[Leaf], optional: list[tuple[str, int]]) -> Build:
        """An object's properties from its lanes' seeds and outputs (`names` and `leaves` in the order of
        its lanes, then a lane for each of the `optional` ones saying whether it is there)."""
        batched = self.siblings(leaves)
        if not optional and batched is None:

            def plain(seeds: tuple[int, ...], outs: tuple[int, ...], root: DrawContext) -> dict[str, Any]:
                return {n: leaf(s, z, root) for n, leaf, s, z in zip(names, leaves, seeds, outs, strict=True)}

            return plain
        # (name, the output saying whether it is there (-1: required), its lane, its leaf, and for an object
        # child its span of the siblings' lanes and its `Build`)
        at = {name: len(names) + i for i, (name, _) in enumerate(optional)}
        spans = batched[2] if batched is not None else [None] * len(names)
        entries = [
            (name, at.get(name, -1), i, leaves[i], *(spans[i] or (-1, -1, None)))
            for i, name in enumerate(names)
        ]
        if batched is None:

            def some_fields(
                seeds: tuple[int, ...], outs: tuple[int, ...], root: DrawContext
            ) -> dict[str, Any]:
                doc: dict[str, Any] = {}
                for name, weighed, i, leaf, _, _, _ in entries:
                    if weighed < 0 or outs[weighed] >= _HALF:  # (left out when `random() < 0.5`)
                        doc[name] = leaf(seeds[i], outs[i], root)
                return doc

            return some_fields
        mix, gather, _ = batched

        def with_objects(seeds: tuple[int, ...], outs: tuple[int, ...], root: DrawContext) -> dict[str, Any]:
            inner, inner_outs = mix(gather(seeds))  # the object children's lanes, mixed at once
            doc: dict[str, Any] = {}
            for name, weighed, i, leaf, a, b, build in entries:
                if weighed < 0 or outs[weighed] >= _HALF:  # (left out when `random() < 0.5`)
                    if build is None:
                        doc[name] = leaf(seeds[i], outs[i], root)
                    else:
                        doc[name] = build(inner[a:b], inner_outs[a:b], root)
            return doc

        return with_objects

    def _array(self, f: Schema, name: str) -> tuple[Body, Fork, int]:
        prefix, items = f.get("prefixItems", []), f.get("items")
        lo, hi = f.get("minItems", 0), f.get("maxItems")
        if items is False or (items is None and prefix):  # as `FromSchema._array`
            hi = max(lo, len(prefix) if hi is None else min(hi, len(prefix)))
        top = hi if hi is not None else lo + 4
        base = min(max(lo, 1), top)  # a compiled schema has no $ref: always at the first level
        upper = min(top, base + 4)
        heads: list[Fork] = []
        most = 1
        for i in range(min(len(prefix), upper)):
            child = self.node(_item(f, i), name)
            assert child is not None  # only the top may be left to `_value`
            heads.append((child[1], child[2]))
            most += child[3]
        tail: Fork | None = None
        if upper > len(prefix):  # every item past prefixItems has the same schema
            child = self.node(_item(f, len(prefix)), name)
            assert child is not None
            tail = (child[1], child[2])
            most += (upper - len(prefix)) * child[3]
        nodes = heads + [tail] * min(upper - len(heads), 64) if tail is not None else heads
        leaves = [leaf for leaf, _ in nodes]
        # each count's item seeds and outputs, mixed at once (`mixed`), made once per count the array draws
        mixers: dict[int, Callable[[int], tuple[tuple[int, ...], tuple[int, ...]]]] = {}

        def mixed(n: int, seed: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
            mixer = mixers.get(n)
            if mixer is None:
                forks = [nodes[i] if i < len(nodes) else tail for i in range(n)]  # past 64: all the tail
                thens = tuple(fork[1] for fork in forks if fork is not None)
                mixer = MixedSeeds(tuple(item_key(i) for i in range(n)), thens).with_outputs
                if n <= len(nodes):  # (counts past them are rare and have no bound: not kept)
                    mixers[n] = mixer
            return mixer(seed)

        # each count's object items mixed at once (`Builder.siblings`); None: no two items are objects
        batches: dict[int, Siblings | None] = {}

        def item_list(seed: int, n: int, root: DrawContext) -> list[Any]:
            seeds, outs = mixed(n, seed)
            if n <= len(leaves):
                batched = batches[n] if n in batches else batches.setdefault(n, self.siblings(leaves[:n]))
                if batched is not None:
                    mix, gather, spans = batched
                    inner, inner_outs = mix(gather(seeds))
                    return [
                        leaf(s, z, root) if span is None else span[2](inner[span[0] : span[1]],
                                                                        inner_outs[span[0] : span[1]], root)
                        for leaf, s, z, span in zip(leaves, seeds, outs, spans, strict=False)
                    ]  # fmt: skip
                return [leaf(s, z, root) for leaf, s, z in zip(leaves, seeds, outs, strict=False)]
            assert tail is not None  # a count past the items listed: the tail draws them
            last = tail[0]
            return [(leaves[i] if i < len(leaves) else last)(seeds[i], outs[i], root) for i in range(n)]

        def body(rng: random.Random, seed: int, root: DrawContext) -> list[Any]:
            return item_list(seed, rng.randint(base, upper), root)

        span = upper - base + 1
        if type(base) is int and type(upper) is int and 0 < span <= 1 << 32:
            # `randint(base, upper)` from the RNG left after the type's choice: one output, mapped as
            # `DrawRandom` maps it

            def counted(seed: int, out: int, root: DrawContext) -> list[Any]:
                return item_list(seed, base + ((out * span) >> 64), root)

            return body, (counted, _AFTER_CHOICE), most
        rng_body: Leaf = lambda seed, out, root: body(DrawRandom(seed + _ONE_STEP), seed, root)  # noqa: E731
        return body, (rng_body, _NO_OUTPUT), most

    def _string(self, f: Schema, name: str) -> tuple[Body, Fork | None]:
        lo, hi, fmt = f.get("minLength", 0), f.get("maxLength"), f.get("format", "")
        unbounded = hi is None and type(lo) is int and lo <= 0  # any text fits: `fit_text` cuts nothing
        if "pattern" not in f and fmt in FORMATS and unbounded:
            # `FromSchema._string` takes the format's first draw, which always fits
            draw = SEEDED_FORMATS[fmt]
            forked = forked_drawer(fmt)
            if forked is None:
                return (lambda rng, seed, root: draw(rng, seed)), None
            fork_key, at_fork = forked
            faker: Leaf = lambda seed, out, root: at_fork(out)  # noqa: E731
            return (lambda rng, seed, root: draw(rng, seed)), (faker, (fork_key, 1))
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
            too_long(lo, root.limits.max_answer_bytes, name)  # (the plan keeps no path: the name says where)
            return fit_text(draw_text(rng, seed, root.request), lo, hi, rng)

        if not unbounded:
            return text, None
        forked = forked_drawer(kind)
        if forked is not None:
            kind_key, kind_at_fork = forked

            def forked_text(seed: int, out: int, root: DrawContext) -> str:
                value = kind_at_fork(out)
                return value[:-1] + "x" if value.endswith(" ") else value  # as `seed_text` below

            return text, (forked_text, (kind_key, 1))
        by_seed = seed_drawer(kind)
        if by_seed is None:
            return text, None
        seeded = by_seed

        def seed_text(seed: int, out: int, root: DrawContext) -> str:
            value = seeded(seed)
            return value[:-1] + "x" if value.endswith(" ") else value  # all `fit_text` does without bounds

        return text, (seed_text, _NO_OUTPUT)


def _unseeded(node: Node, most: int) -> Part:
    """A part whose node makes its own RNG when it has none."""
    return node, (lambda seed, out, root: node(seed, root, None)), _NO_OUTPUT, most


def _constant(value: Any) -> Part:
    if isinstance(value, _IMMUTABLE):
        return (lambda seed, root, rng: value), (lambda seed, out, root: value), _NO_OUTPUT, 1
    return _unseeded(lambda seed, root, rng: copy.deepcopy(value), 1)


def _enum(choices: list[Any]) -> Part:
    n = len(choices)
    if all(isinstance(v, _IMMUTABLE) for v in choices):

        def node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            return (rng or DrawRandom(seed)).choice(choices)

        if not 0 < n <= 1 << 32:  # (`DrawRandom.choice` hands these to `random.Random`)
            return node, (lambda seed, out, root: DrawRandom(seed).choice(choices)), _NO_OUTPUT, 1
        # a new RNG's `choice`: the high bits of its first output times the count, as `DrawRandom` maps it
        return node, (lambda seed, out, root: choices[(out * n) >> 64]), _FRESH, 1
    return _unseeded(lambda seed, root, rng: copy.deepcopy((rng or DrawRandom(seed)).choice(choices)), 1)


def _typed_node(
    types: list[str], bodies: dict[str, Body], forks: dict[str, Fork | None]
) -> tuple[Node, Fork]:
    """`_value`'s choice of a type (null one time in five when allowed, else any of the others), then
    the body of that type; and the same as a leaf."""
    concrete = [t for t in types if t != "null"] or ["null"]
    nullable = "null" in types
    if len(concrete) > 1 or nullable:

        def chosen(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is None:
                rng = DrawRandom(seed)
            t = "null" if nullable and rng.random() < 0.2 else rng.choice(concrete)
            return bodies[t](rng, seed, root)

        return chosen, ((lambda seed, out, root: chosen(seed, root, None)), _NO_OUTPUT)
    body = bodies[concrete[0]]
    fork = forks[concrete[0]]
    if concrete[0] == "object":
        assert fork is not None  # an object's fields: it draws nothing from its own RNG after the choice
        fields = fork[0]

        def object_node(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
            if rng is not None:
                rng.choice(concrete)
            return fields(seed, 0, root)

        return object_node, fork

    def single(seed: int, root: DrawContext, rng: random.Random | None) -> Any:
        if rng is None:
            # a choice among one type still takes one step of the stream, as `choice` does: the stream
            # one step on from `seed`
            return body(DrawRandom(seed + _ONE_STEP), seed, root)
        rng.choice(concrete)
        return body(rng, seed, root)

    if fork is not None:
        return single, fork
    return single, ((lambda seed, out, root: body(DrawRandom(seed + _ONE_STEP), seed, root)), _NO_OUTPUT)
