"""`from_schema`: realistic values that validate against a JSON schema (structured outputs, tool arguments).

The schema is checked once, when the generator is built: anything it can't honour raises SchemaError naming
the JSON pointer, so a bad rule fails where it is written rather than in the middle of a test run.
Every property draws from its own fork (`("prop", name)`) and every array item from `("item", i)`, so
adding a property to a schema leaves the values of the others as they were.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import math
from collections.abc import Mapping
from typing import Any, cast

from ..errors import DrawError, RuleError, SchemaError
from ..seeding import canonical_json, label_key
from .core import DrawContext, Generator, item_key, lift
from .schema_check import (
    _ONE_OF_TRIES,
    _TYPES,
    Path,
    Schema,
    _item,
    _matches,
    _number,
    _prop,
    _Schema,
    _span,
    _types,
    too_long,
    validate_supported,
)
from .schema_names import FORMATS, fit_text, text_for_name
from .schema_plan import Plan, compile_plan

__all__ = ["FromSchema", "validate_supported"]

_SPREAD = 256
"""At most this many characters past a pattern's minimum: `maxLength: 1e9` allows that, never asks for it."""
_STRING_ATTEMPTS = 40  # draws of a string tried against its minLength and maxLength

_UNBUILT = object()

# values drawn so far in the current document, and the limit: shared by nested from_schema draws
_DRAWN: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("synthgpt_drawn", default=None)


def _count(n: int) -> None:
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn[0] += n
        if drawn[0] > drawn[1]:  # a recursive schema whose optional branches keep multiplying
            raise DrawError(
                f"from_schema: the document grew past this server's limit of {drawn[1]} values "
                "(max_schema_values); make recursive properties rarer or lower max_depth",
                code="draw_over_budget",
            )


@functools.lru_cache(maxsize=4096)
def _prop_keys(name: str) -> tuple[int, int]:
    """The fork keys of property `name`: whether it is present (`("optional", name)`), and its value."""
    return label_key(("optional", name)), label_key(("prop", name))


class FromSchema(Generator[Any]):
    """Values valid against `schema`; `overrides` maps dotted paths ("user.name", "items.*.id") to values."""

    __slots__ = ("_ov", "_plan", "_s", "max_depth", "overrides", "schema")

    def __init__(
        self, schema: Any, overrides: Mapping[str, Any] | None = None, *, max_depth: int = 6
    ) -> None:
        if max_depth < 1:
            raise RuleError(f"from_schema: max_depth must be >= 1, got {max_depth}")
        try:
            self.schema: Schema = copy.deepcopy(schema)  # the caller mutating its dict later changes nothing
            self._s = _Schema(self.schema, whole_counts=True)
        except RecursionError:  # (a wire body is refused past MAX_JSON_DEPTH levels before it gets here)
            raise SchemaError("", "the schema, or a value in it, nests too deeply to read") from None
        self.max_depth = max_depth
        self.overrides = {str(k): lift(v) for k, v in (overrides or {}).items()}
        for path in self.overrides:
            self._s.check_path(path)
        self._ov = tuple((tuple(p.split(".")), g) for p, g in self.overrides.items())
        self._plan: Plan | object | None = _UNBUILT  # compiled with the first draw (`schema_plan`)
        # (an override may cut a recursion short, so only a schema without them is judged here)
        if not self.overrides and math.isinf(self._s.cost(self.schema)):
            raise SchemaError(
                "", "no finite document satisfies this schema: every way through its $refs requires another "
                "level (make a recursive property optional, or allow an empty array)"
            )

    def draw(self, ctx: DrawContext) -> Any:
        self._check_budget(ctx)
        outer = _DRAWN.get()
        if self._plan is _UNBUILT:
            try:
                self._plan = compile_plan(self)
            except RecursionError:  # nested too deeply to compile: drawn by `_value`, which says so
                self._plan = None
        plan = cast("Plan | None", self._plan)
        if plan is not None and outer is None and plan.max_values <= ctx.limits.max_schema_values:
            done, value = self._planned(plan, ctx)
            if done:
                return value
        token = _DRAWN.set(outer or [0, ctx.limits.max_schema_values])
        try:
            return self._value(self.schema, ctx, (), "", (), False)
        except RecursionError:
            raise DrawError("from_schema: the schema nests too deeply to draw; lower max_depth") from None
        finally:
            _DRAWN.reset(token)

    def _planned(self, plan: Plan, ctx: DrawContext) -> tuple[bool, Any]:
        """The document from the compiled plan, or (False, None) when a part it handed to `_value` failed:
        the caller then draws it all again the slow way, from the same RNG state, for the same error."""
        rng = ctx._rng
        state = rng.getstate() if rng is not None else ()
        # the compiled nodes count nothing: they start the count at the most they can draw
        token = _DRAWN.set([plan.max_values, ctx.limits.max_schema_values])
        try:
            return True, plan.draw(ctx)
        except (DrawError, RecursionError):
            if rng is None:
                ctx._rng = None
            else:
                rng.setstate(state)
            return False, None
        finally:
            _DRAWN.reset(token)

    def smallest_values(self) -> float:
        """How many values the smallest document of this schema has (inf: only overrides end it)."""
        return self._s.smallest(self.schema)[0]

    def _check_budget(self, ctx: DrawContext) -> None:
        """Refuse, before drawing anything, a schema whose smallest document is over the request's limits."""
        limits = ctx.limits
        values, chars = self._s.smallest(self.schema)
        if math.isinf(values):  # only overrides end its recursion: `_value` says where, when it gets there
            return
        if values > limits.max_schema_values:
            where = self._s.blame(self.schema, "", lambda vc: vc[0] > limits.max_schema_values)
            raise DrawError(
                f"from_schema: {where}: the smallest document this schema allows has {values:.0f} values, "
                f"over this server's limit of {limits.max_schema_values} values (max_schema_values)",
                code="draw_over_budget",
            )
        if chars > limits.max_answer_bytes:
            where = self._s.blame(self.schema, "", lambda vc: vc[1] > limits.max_answer_bytes)
            raise DrawError(
                f"from_schema: {where}: the smallest document this schema allows has {chars:.0f} characters "
                f"of strings, over this server's answer limit of {limits.max_answer_bytes} bytes "
                "(max_answer_bytes)",
                code="draw_over_budget",
            )

    def __repr__(self) -> str:
        extra = f", overrides={self.overrides!r}" if self.overrides else ""
        extra += f", max_depth={self.max_depth}" if self.max_depth != 6 else ""
        return f"from_schema({self.schema!r}{extra})"

    def _value(self, s: Schema, ctx: DrawContext, path: Path, name: str, refs: Path, minimal: bool) -> Any:
        _count(1)
        f, followed = self._s.flat(s)
        for r in followed:
            refs = (*refs, r)
            if not minimal and refs.count(r) > self.max_depth:
                # from here on take the smallest option everywhere, which the cost check says bottoms out
                minimal = True
                if math.isinf(self._s.cost(f)):
                    raise DrawError(
                        f"from_schema: $ref {r!r} at {'.'.join(path) or 'the root'} recurses past "
                        f"max_depth={self.max_depth} and every way to stop needs another level"
                    )
        if "const" in f:
            return copy.deepcopy(f["const"])
        if "enum" in f:
            return copy.deepcopy(ctx.rng.choice(self._s.choices(f)))
        if "anyOf" in f:
            options = [self._s.branch(f, "anyOf", i) for i in range(len(f["anyOf"]))]
            costs = [self._s.cost(o) for o in options] if minimal else []
            i = costs.index(min(costs)) if minimal else ctx.rng.randrange(len(options))
            return self._value(options[i], ctx.fork(("anyOf", i)), path, name, refs, minimal)
        if "oneOf" in f:
            return self._one_of(f, ctx, path, name, refs, minimal)
        types = _types(f)
        if minimal:
            t = min(types, key=_TYPES.index)
        else:
            # null is allowed but rarely what a realistic payload has
            t = (
                "null"
                if "null" in types and ctx.rng.random() < 0.2
                else ctx.rng.choice([t for t in types if t != "null"] or ["null"])
            )
        if t == "object":
            return self._object(f, ctx, path, refs, minimal)
        if t == "array":
            return self._array(f, ctx, path, name, refs, minimal)
        if t == "string":
            return self._string(f, ctx, path, name)
        if t in ("integer", "number"):
            return _number(f, ctx.rng, name, t == "integer")
        return None if t == "null" else ctx.rng.random() < 0.5

    def _one_of(self, f: Schema, ctx: DrawContext, path: Path, name: str, refs: Path, minimal: bool) -> Any:
        """A value of one branch that no other branch accepts: `oneOf` means exactly one."""
        branches = f["oneOf"]
        options = [self._s.branch(f, "oneOf", i) for i in range(len(branches))]
        if minimal:
            costs = [self._s.cost(o) for o in options]
            order = sorted(range(len(options)), key=lambda i: costs[i])
        else:
            first = ctx.rng.randrange(len(options))
            order = [first, *(i for i in range(len(options)) if i != first)]
        for attempt in range(_ONE_OF_TRIES):
            i = order[attempt % len(order)]
            c = ctx.fork(("oneOf", i)) if attempt < len(order) else ctx.fork(("oneOf", i, attempt))
            v = self._value(options[i], c, path, name, refs, minimal)
            if sum(1 for j, b in enumerate(branches) if j == i or self._s.valid(v, b)) == 1:
                return v
        raise DrawError(
            f"from_schema: no value found at {'.'.join(path) or 'the root'} that matches exactly one `oneOf` "
            "branch; make the branches exclusive (e.g. a `const` tag per branch) or use `anyOf`"
        )

    def _slot(self, s: Schema, ctx: DrawContext, path: Path, name: str, refs: Path, minimal: bool) -> Any:
        for pattern, gen in self._ov:
            if _matches(pattern, path):
                return gen.draw(ctx)
        return self._value(s, ctx, path, name, refs, minimal)

    def _object(self, f: Schema, ctx: DrawContext, path: Path, refs: Path, minimal: bool) -> dict[str, Any]:
        required = f.get("required", [])
        needed = set(required)  # a set: 4,000 properties tested against a list of 94,000 took 8.5 s
        _count(sum(1 for p in f.get("properties", ()) if p not in needed))  # weighing one is work too
        out: dict[str, Any] = {}
        for name in dict.fromkeys([*f.get("properties", {}), *required]):
            p = (*path, name)
            forced = any(_matches(pat[: len(p)], p) for pat, _ in self._ov)  # an override asks for it
            if (
                name not in needed
                and not forced
                and (minimal or ctx.fork_key(_prop_keys(name)[0]).rng.random() < 0.5)
            ):
                continue
            out[name] = self._slot(_prop(f, name), ctx.fork_key(_prop_keys(name)[1]), p, name, refs, minimal)
        return out

    def _array(
        self, f: Schema, ctx: DrawContext, path: Path, name: str, refs: Path, minimal: bool
    ) -> list[Any]:
        prefix, items = f.get("prefixItems", []), f.get("items")
        lo, hi = f.get("minItems", 0), f.get("maxItems")
        if items is False or (items is None and prefix):  # beyond prefixItems: none allowed, or none known
            hi = max(lo, len(prefix) if hi is None else min(hi, len(prefix)))
        if minimal:
            n = lo
        else:
            # deep inside a recursive schema, fewer and possibly no items, so trees stay small
            level = max((refs.count(r) for r in refs), default=0)
            top = hi if hi is not None else lo + 4
            base = min(lo if level > 1 else max(lo, 1), top)
            n = ctx.rng.randint(base, min(top, base + max(1, 4 - level)))
            d = len(path)
            wanted = [
                int(p[d]) + 1 for p, _ in self._ov if len(p) > d and p[d].isdigit() and _matches(p[:d], path)
            ]
            n = max(n, min(max(wanted, default=0), top))
        if not f.get("uniqueItems"):
            return [
                self._slot(_item(f, i), ctx.fork_key(item_key(i)), (*path, str(i)), name, refs, minimal)
                for i in range(n)
            ]
        out: list[Any] = []
        seen: set[str] = set()
        for attempt in range(n * 20):
            if len(out) == n:
                break
            i = len(out)
            v = self._slot(_item(f, i), ctx.fork_key(item_key(attempt)), (*path, str(i)), name, refs, minimal)
            if canonical_json(v) not in seen:
                seen.add(canonical_json(v))
                out.append(v)
        if len(out) < lo:
            raise DrawError(
                f"from_schema: could not draw {lo} distinct items at {'.'.join(path) or 'the root'}"
            )
        return out

    def _string(self, f: Schema, ctx: DrawContext, path: Path, name: str) -> str:
        lo, hi, fmt = f.get("minLength", 0), f.get("maxLength"), f.get("format", "")
        too_long(lo, ctx.limits.max_answer_bytes, ".".join(path))
        if "pattern" not in f and fmt not in FORMATS:
            return fit_text(text_for_name(ctx, name, hi), lo, hi, ctx.rng)
        pattern = self._s.patterns[f["pattern"]] if "pattern" in f else None
        # quantifiers stretch by a random amount up to what minLength needs, the spread keeps under maxLength
        need = max(0, lo - pattern.min_len) if pattern else 0
        spread = 8 if hi is None else max(1, min(hi - lo, _SPREAD))
        for attempt in range(_STRING_ATTEMPTS):
            c = ctx.fork(("retry", attempt)) if attempt else ctx
            # the first half of the attempts stretch by a random amount; the rest by all that minLength
            # needs, which reaches it whenever one quantifier can stretch that far (a random stretch seldom
            # does for one wide quantifier: `[A-Z]{2,40}` with minLength 38 found none in 40 tries for
            # some seeds)
            low = 0
            if need:
                low = c.rng.randint(0, need) if attempt < _STRING_ATTEMPTS // 2 else need
            v = pattern.sample(c.rng, low, low + spread) if pattern else FORMATS[fmt](c)
            if lo <= len(v) and (hi is None or len(v) <= hi):
                return v
        what = f"pattern {pattern.source!r}" if pattern else f"format {fmt!r}"
        where = ".".join(path) or "the root"
        raise DrawError(f"from_schema: no string of length {_span(lo, hi)} found for {what} at {where}")
