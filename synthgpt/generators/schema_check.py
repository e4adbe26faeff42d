"""The JSON-schema analyser behind `from_schema`: what a schema may use, its flattened form, its cost.

`_Schema` checks a schema once, when the generator is built (anything it cannot honour is a SchemaError
naming the JSON pointer), flattens `$ref`/`allOf`/`anyOf` branches, ranks subschemas by the cost of
drawing them and validates drawn values. `schema.FromSchema` draws with it.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

from ..errors import DrawError, RuleError, SchemaError
from ..linear_regex import RuleRegex, compile_rule_regex
from ..seeding import canonical_json
from .pattern import Pattern, PatternError
from .schema_names import NUMBER_NAMES, by_name

_UNIT = 2.0**-53
"""What a `DrawRandom` scales an output's top 53 bits by for `random()`."""

__all__ = ["Schema", "validate_supported"]

Schema = dict[str, Any]
Path = tuple[str, ...]


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")  # cheapest first
_KEYWORDS = frozenset(
    _names(
        "type enum const properties required additionalProperties items prefixItems minItems maxItems "
        "uniqueItems minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength "
        "pattern format nullable $ref $defs definitions anyOf oneOf allOf"
    )
)
_ANNOTATIONS = frozenset(
    _names("title description default examples $schema $id $comment readOnly writeOnly deprecated")
)
# what a $ref's siblings and a branch's parent do not pass on: notes, and definitions (which only $refs
# read; merged along, every merge would make a new schema and a self-referring one would never settle)
_NOT_MERGED = _ANNOTATIONS | {"$defs", "definitions"}
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "uniqueItems")  # allOf keeps the largest
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "nullable")  # allOf keeps the smallest
_ANY: Schema = {}  # kept alive at module level: schemas are cached by identity
_ONE_OF_TRIES = 12
_MAX_WALK = 100


def _show(value: Any, limit: int = 80) -> str:
    """A value in an error message, cut short: a request may put megabytes where a keyword goes."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _nonempty_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v)


def _is_count(v: Any) -> bool:
    """A non-negative integer as JSON Schema counts it: `3` or `3.0`, never `inf` or `nan`."""
    return _is_num(v) and (isinstance(v, int) or v.is_integer()) and v >= 0


def too_long(min_length: int, limit: int, where: str) -> None:
    """Refuse a string whose `minLength` alone is over the answer limit (`limit`), before building it: a
    branch the check before drawing did not weigh (a nullable or optional one) may ask for `minLength:
    1e15`."""
    if min_length > limit:
        raise DrawError(
            f"from_schema: {where or 'the root'}: minLength {min_length} is over this server's answer limit "
            f"of {limit} bytes (max_answer_bytes)",
            code="draw_over_budget",
        )


_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(_COUNTS, (_is_count, "a non-negative integer")),
    **dict.fromkeys(("minimum", "maximum"), (_is_num, "a number")),
    **dict.fromkeys(
        ("exclusiveMinimum", "exclusiveMaximum"), (lambda v: _is_num(v) or v in (True, False), "a number")
    ),
    "multipleOf": (lambda v: _is_num(v) and v > 0, "a number > 0"),
    **dict.fromkeys(
        ("properties", "$defs", "definitions"), (lambda v: isinstance(v, dict), "an object of schemas")
    ),
    **dict.fromkeys(
        ("anyOf", "oneOf", "allOf", "prefixItems"), (_nonempty_list, "a non-empty array of schemas")
    ),
    "enum": (_nonempty_list, "a non-empty array"),
    "required": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "an array of strings"),
    **dict.fromkeys(("pattern", "format", "$ref"), (lambda v: isinstance(v, str), "a string")),
    **dict.fromkeys(("uniqueItems", "nullable"), (lambda v: isinstance(v, bool), "a boolean")),
    "type": (
        lambda v: v in _TYPES or (_nonempty_list(v) and all(t in _TYPES for t in v)),
        f"one of {', '.join(_TYPES)}, or a list of them",
    ),
}


def _bounds(f: Schema) -> tuple[Any, bool, Any, bool]:
    lo, hi = f.get("minimum"), f.get("maximum")
    lox = hix = False
    xlo, xhi = f.get("exclusiveMinimum"), f.get("exclusiveMaximum")
    if isinstance(xlo, bool):  # the draft-4 / OpenAPI 3.0 spelling
        lox = xlo and lo is not None
    elif xlo is not None and (lo is None or xlo >= lo):
        lo, lox = xlo, True
    if isinstance(xhi, bool):
        hix = xhi and hi is not None
    elif xhi is not None and (hi is None or xhi <= hi):
        hi, hix = xhi, True
    return lo, lox, hi, hix


class _Lowest:
    """An RNG stand-in that always gives the lowest value: `_number` without an rng, "is there one?"."""

    @staticmethod
    def uniform(a: float, b: float) -> float:
        return a

    @staticmethod
    def randint(a: int, b: int) -> int:
        return a


_LOWEST: Any = _Lowest()


def _finite(bound: Any, integer: bool) -> bool:
    """Whether a number's bound (None: none) is one drawing can reach: any int for an integer, a value
    within the floats' range for a number."""
    if bound is None or (integer and type(bound) is int):
        return True
    return bool(-sys.float_info.max <= bound <= sys.float_info.max)


def _inside(lo: Any, lox: bool, hi: Any, hix: bool, fits: Callable[[float], bool], a: float) -> float:
    """A finite float within the bounds when drawing and the middle missed them: the midpoint without
    overflow, then the floats at or next to each bound (`a` when the bounds allow none, which the check
    before drawing refuses)."""
    tried = [a / 2 + (hi if hi is not None else a) / 2]
    if lo is not None:
        tried.append(math.nextafter(float(lo), math.inf) if lox else float(lo))
    if hi is not None:
        tried.append(math.nextafter(float(hi), -math.inf) if hix else float(hi))
    return next((c for c in tried if fits(c)), a)


def _number(f: Schema, rng: random.Random | None, name: str, integer: bool) -> int | float | None:
    """A value within f's bounds, or None if there is none; with no rng, only whether one exists."""
    draw = number_drawer(f, name, integer)
    if draw is None:
        return None
    return draw(_LOWEST if rng is None else rng)


def number_drawer(f: Schema, name: str, integer: bool) -> Callable[[random.Random], int | float] | None:
    """What `_number` draws for f, with the bounds worked out once (a compiled schema keeps it), or None
    when f allows no number."""
    return _number_drawers(f, name, integer)[0]


def number_output_drawer(f: Schema, name: str, integer: bool) -> Callable[[int], int | float] | None:
    """`number_drawer(f, name, integer)` from the one output of a `DrawRandom` it draws: for a DrawRandom
    `rng`, `drawer(rng.next64())` is `number_drawer(…)(rng)`, so a compiled schema takes that output along
    with the value's seed (`MixedSeeds.with_outputs`). None where the number may take more than one output
    (`multipleOf`, a range of integers over 2**32 wide) or f allows no number."""
    return _number_drawers(f, name, integer)[1]


def _number_drawers(
    f: Schema, name: str, integer: bool
) -> tuple[Callable[[random.Random], int | float] | None, Callable[[int], int | float] | None]:
    """`number_drawer` and `number_output_drawer` of f."""
    lo, lox, hi, hix = _bounds(f)
    # a bound no float holds (an infinity from YAML's `.inf`, a 400-digit integer for a `number`): past it
    # on the side every value lies, it allows nothing; on the other, it bounds nothing
    if not _finite(lo, integer):
        if lo > 0:
            return None, None
        lo, lox = None, False
    if not _finite(hi, integer):
        if hi < 0:
            return None, None
        hi, hix = None, False
    m = f.get("multipleOf")
    dlo, dhi = by_name(name, NUMBER_NAMES) or (0, 1000)
    if (lo is None or lo <= dlo) and (hi is None or dhi <= hi):
        # bounds around the name's usual range (zod 4's `.int()` adds ±2^53) keep it: an age stays an age
        a, b = dlo, dhi
    else:
        # a bound inside it keeps the name's usual spread, shifted to start (or end) at that bound
        a = lo if lo is not None else dlo if hi is None or dlo < hi else hi - (dhi - dlo)
        b = hi if hi is not None else dhi if dhi > a else a + (dhi - dlo)

    def ok(v: float) -> bool:
        return (lo is None or v > lo or (v == lo and not lox)) and (
            hi is None or v < hi or (v == hi and not hix)
        )

    def fits(v: float) -> bool:  # (a midpoint near the largest float overflows to inf)
        return ok(v) and math.isfinite(v)

    if m is None and not integer:
        # no float at or just inside a bound: none between two exclusive bounds one float apart, none past
        # an exclusive bound at the largest float
        if lo is not None and not (fits(float(lo)) or fits(math.nextafter(float(lo), math.inf))):
            return None, None
        if hi is not None and not (fits(float(hi)) or fits(math.nextafter(float(hi), -math.inf))):
            return None, None

        def settled(v: float) -> float:
            # the first of these that is in bounds: the value to the cent, as drawn, the middle, the floats
            # next to the bounds (bounds closer than the name's spread, or near the largest float), `a`
            for c in (round(v, 2), v, (a + b) / 2):
                if fits(c):
                    return c
            return _inside(lo, lox, hi, hix, fits, a)

        def real(rng: random.Random) -> float:
            return settled(rng.uniform(a, b))

        def real_at(z: int) -> float:
            # `uniform(a, b)` is `a + (b - a) * random()`; a DrawRandom's `random()`, `(z >> 11) * 2**-53`
            return settled(a + (b - a) * ((z >> 11) * _UNIT))

        return real, real_at
    if m is None:  # whole numbers: the steps below with a step of 1, in plain integer arithmetic
        kmin = None if lo is None else math.ceil(lo)
        kmin = None if kmin is None else kmin + (lox and kmin == lo)
        kmax = None if hi is None else math.floor(hi)
        kmax = None if kmax is None else kmax - (hix and kmax == hi)
        if kmin is not None and kmax is not None and kmin > kmax:
            return None, None
        ka, kb = math.ceil(a), math.floor(b)
        ka, kb = max(ka, kmin if kmin is not None else ka), min(kb, kmax if kmax is not None else kb)
        if ka > kb:
            ka = kb = kmin if kmin is not None else kmax if kmax is not None else ka
        span = kb - ka + 1
        # a DrawRandom's `randint` over fewer than 2**32 integers: the high bits of one output times the span
        one_output = type(ka) is int and type(kb) is int and 0 < span <= 1 << 32
        return (lambda rng: rng.randint(ka, kb)), (lambda z: ka + ((z * span) >> 64)) if one_output else None
    step = Fraction(str(m))
    step = Fraction(step.numerator) if integer else step  # the integers that are multiples of p/q
    kmin = None if lo is None else math.ceil(Fraction(lo) / step)
    kmin = None if kmin is None else kmin + (lox and kmin * step == lo)
    kmax = None if hi is None else math.floor(Fraction(hi) / step)
    kmax = None if kmax is None else kmax - (hix and kmax * step == hi)
    if kmin is not None and kmax is not None and kmin > kmax:
        return None, None
    if not integer:  # every multiple past a bound may be past the largest float too
        last = math.floor(Fraction(sys.float_info.max) / step)
        if (kmin is not None and kmin > last) or (kmax is not None and kmax < -last):
            return None, None
    ka, kb = math.ceil(Fraction(a) / step), math.floor(Fraction(b) / step)
    ka, kb = max(ka, kmin if kmin is not None else ka), min(kb, kmax if kmax is not None else kb)
    if ka > kb:
        ka = kb = kmin if kmin is not None else kmax if kmax is not None else ka

    def fits_multiple(v: float) -> bool:
        return fits(v) and _divides(v, m)

    def whole(v: float) -> bool:
        return fits_multiple(v) and v.is_integer()

    def multiple(rng: random.Random) -> int | float:
        k = rng.randint(ka, kb)
        if integer or not isinstance(m, float):
            n = int(k * step)
            if not isinstance(m, float) or not -_FLOAT_MAX <= n <= _FLOAT_MAX or _divides(n, m):
                return n
            # an integer whose quotient by a float step is past the floats: one the step divides exactly
            near = _binary_multiple(float(n), m, whole)
            return n if near is None else int(near)
        # a float multipleOf is checked by float division, which 0.29/0.01 fails: prefer a k that passes.
        # Far from zero a multiple's float may round onto a bound, or its quotient pass the floats: then a
        # float the step divides exactly, or one next to a bound.
        for j in range(min(20, kb - ka + 1)):
            v = float((ka + (k - ka + j) % (kb - ka + 1)) * step)
            if fits_multiple(v):
                return v
        v = float(k * step)
        near = _binary_multiple(v, m, fits_multiple)
        return near if near is not None else _inside(lo, lox, hi, hix, fits_multiple, v)

    return multiple, None


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, `1` is `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _is_type(v: Any, t: str) -> bool:
    checks: dict[str, Callable[[Any], bool]] = {
        "null": lambda x: x is None,
        "boolean": lambda x: isinstance(x, bool),
        "integer": lambda x: _is_num(x) and float(x).is_integer(),
        "number": _is_num,
        "string": lambda x: isinstance(x, str),
        "array": lambda x: isinstance(x, list),
        "object": lambda x: isinstance(x, dict),
    }
    return checks[t](v)


def _valid_number(v: float, f: Schema) -> bool:
    lo, lox, hi, hix = _bounds(f)
    if lo is not None and (v < lo or (lox and v == lo)):
        return False
    if hi is not None and (v > hi or (hix and v == hi)):
        return False
    m = f.get("multipleOf")
    if m is None:
        return True
    if isinstance(m, float) or isinstance(v, float):  # as JSON Schema validators divide floats
        try:
            return _divides(float(v), float(m))
        except OverflowError:  # (an integer past the floats)
            return False
    return v % m == 0


_FLOAT_MAX = sys.float_info.max


def _divides(v: float, m: float) -> bool:
    """Whether v is a multiple of m as JSON Schema validators judge floats: by float division, and where
    the quotient is past the floats, by exact division (jsonschema's own fallback)."""
    q = v / m
    if math.isfinite(q):
        return q == int(q)
    return (Fraction(v) / Fraction(m)).denominator == 1


def _binary_multiple(v: float, m: float, fits: Callable[[float], bool]) -> float | None:
    """A float near v that is ±m·2**i (an exact multiple of m, and a float, m being one), or None when
    none of those near v fits: the multiples a quotient past the floats leaves (one in each binade)."""
    step = Fraction(m)
    ratio = abs(Fraction(v)) / step
    i = max(0, ratio.numerator.bit_length() - ratio.denominator.bit_length())
    sign = -1 if v < 0 else 1
    for j in (i, i - 1, i + 1, i - 2, i + 2):
        if j < 0:  # (m itself and larger: m * 2**-1 is no multiple)
            continue
        try:
            c = float(sign * step * 2**j)
        except OverflowError:  # past the largest float
            continue
        if fits(c):
            return c
    return None


def _types(f: Schema) -> list[str]:
    t = f.get("type")
    if t is not None:
        types = [t] if isinstance(t, str) else list(t)
    elif any(k in f for k in ("properties", "required", "additionalProperties")):
        types = ["object"]
    elif any(k in f for k in ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")):
        types = ["array"]
    elif any(k in f for k in _NUMBERS):
        types = ["number"]
    else:
        types = ["string"]
    return [*types, "null"] if f.get("nullable") and "null" not in types else types


def _merge(a: Schema, b: Schema, ptr: str) -> Schema:
    """Both schemas at once (allOf, or $ref with siblings), as far as this generator needs."""
    if not a or not b:
        return a or b
    out = dict(a)
    # both sides say what items hold, and differently: position by position (`prefixItems`, then `items`)
    positional = (
        any(k in a for k in _POSITIONAL)
        and any(k in b for k in _POSITIONAL)
        and any(canonical_json(a.get(k)) != canonical_json(b.get(k)) for k in _POSITIONAL)
    )
    for k, v in b.items():
        if positional and k in _POSITIONAL:
            continue
        if k not in out:
            out[k] = v
        elif k in _ANNOTATIONS or k == "additionalProperties":
            continue  # no extra properties are generated, so either form will do
        elif k == "properties":
            out[k] = {**out[k], **{n: {"allOf": [out[k][n], p]} if n in out[k] else p for n, p in v.items()}}
        elif k == "required":
            out[k] = list(dict.fromkeys([*out[k], *v]))
        elif k in _LOWER or k in _UPPER:
            out[k] = max(out[k], v) if k in _LOWER else min(out[k], v)
        elif k == "type":
            ta, tb = _types({"type": out[k]}), _types({"type": v})
            out[k] = [
                t for t in _TYPES if all(t in ts or (t == "integer" and "number" in ts) for ts in (ta, tb))
            ]
            if not out[k]:
                raise SchemaError(ptr, f"combined schemas: types {ta} and {tb} have nothing in common")
        elif k == "enum":
            out[k] = [x for x in out[k] if canonical_json(x) in {canonical_json(y) for y in v}]
            if not out[k]:
                raise SchemaError(ptr, "combined schemas: the enums have no value in common")
        elif canonical_json(out[k]) != canonical_json(v):
            raise SchemaError(ptr, f"combined schemas: cannot merge two different {k!r} values")
    if positional:
        _merge_items(out, a, b)
    if out.get("nullable") and not (_null_typed(a) and _null_typed(b)):
        del out["nullable"]  # both must allow null for the combination to
    if "properties" in out and ("additionalProperties" in a or "additionalProperties" in b):
        _restrict_properties(out, a, b, ptr)
    return out


_POSITIONAL = ("items", "prefixItems")


def _merge_items(out: Schema, a: Schema, b: Schema) -> None:
    """`out`'s `prefixItems` and `items` where both a and b say what items hold: each position of either
    prefix takes both sides' schemas for it (a side's own prefix there, else its `items`), and `items`
    both sides' `items`. Where a side allows no item (`items: false`), the prefix ends."""
    pa, ia, pb, ib = a.get("prefixItems", []), a.get("items"), b.get("prefixItems", []), b.get("items")
    prefix: list[Any] = []
    items = _both(ia, ib)
    for i in range(max(len(pa), len(pb))):
        here = _both(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib)
        if here is False:
            items = False
            break
        prefix.append(here)  # (never None: a side has a prefix here)
    for key, value in (("prefixItems", prefix), ("items", items)):
        out.pop(key, None)
        if value or value is False:
            out[key] = value


def _both(x: Any, y: Any) -> Any:
    """Both item schemas at once (None or True: a side that allows any item)."""
    if x is None or x is True or y is None or y is True:
        return y if x is None or x is True else x
    if x is False or y is False:
        return False
    return x if canonical_json(x) == canonical_json(y) else {"allOf": [x, y]}


def _restrict_properties(out: Schema, a: Schema, b: Schema, ptr: str) -> None:
    """A property of the combination must be one each side allows: one side's `additionalProperties`
    (false, or a schema) rules over the properties only the other side declares."""
    props = dict(out["properties"])
    for side in (a, b):
        extra, own = side.get("additionalProperties"), side.get("properties", {})
        for name in list(props):
            if name in own or extra is None or extra is True:
                continue
            if extra is False:
                del props[name]
            else:
                props[name] = {"allOf": [props[name], extra]}
        if extra is False:
            out["additionalProperties"] = False
    out["properties"] = props
    for name in out.get("required", []):
        if name not in props and out.get("additionalProperties") is False:
            raise SchemaError(ptr, f"combined schemas: required property {name!r} is not allowed by a part "
                                   "with `additionalProperties: false`")


def _null_typed(f: Schema) -> bool:
    """Whether f's type keywords let null through (its `enum`/`const` are checked on their own)."""
    t = f.get("type")
    return t is None or t == "null" or (isinstance(t, list) and "null" in t) or f.get("nullable") is True


def _esc(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _span(lo: int, hi: int | None) -> str:
    return f"{lo}..{hi}" if hi is not None else f"{lo} or more"


def _matches(pattern: Path, path: Path) -> bool:
    return len(pattern) == len(path) and all(
        p == q or (p == "*" and q.isdigit()) for p, q in zip(pattern, path, strict=True)
    )


class _Schema:
    """A checked schema plus what drawing needs, cached by identity (every cached dict is kept alive)."""

    def __init__(self, root: Any, *, whole_counts: bool = False) -> None:
        """`whole_counts`: make each count written as a whole float (`"maxItems": 3.0`, a JSON Schema
        integer) an int, in place, as the walk reaches it (drawing slices, repeats and ranges by the counts,
        which a float refuses): only for a generator's own copy of a schema, never a caller's."""
        self.root = root
        self._whole_counts = whole_counts
        self.patterns: dict[str, Pattern] = {}
        self.regexes: dict[str, RuleRegex] = {}
        self._flat: dict[int, tuple[Schema, Schema, tuple[str, ...]]] = {}
        self._branches: dict[tuple[int, str, int], Schema] = {}
        self._costs: dict[tuple[int, frozenset[str]], float] = {}
        self._walked: set[int] = set()
        self._depth = 0
        self._choices: dict[int, list[Any]] = {}
        self._rests: list[Schema] = []
        self._smallest: dict[tuple[int, frozenset[str]], tuple[float, float]] = {}
        self.walk(root, "")

    def walk(self, s: Any, ptr: str) -> None:
        self._depth += 1
        try:
            if self._depth > _MAX_WALK:
                # merges make new schemas: an allOf/anyOf that reaches itself again without going through
                # a property or an item would otherwise be walked for ever
                raise SchemaError(ptr, f"the schema nests more than {_MAX_WALK} levels, or refers to itself "
                                       "through allOf/anyOf/oneOf without going into a property or an item")
            self._walk(s, ptr)
        finally:
            self._depth -= 1

    def _walk(self, s: Any, ptr: str) -> None:
        if not isinstance(s, dict):
            raise SchemaError(ptr, f"expected a schema (a JSON object), got {type(s).__name__} {_show(s)}")
        if id(s) in self._walked:
            return
        self._walked.add(id(s))
        if self._whole_counts:
            for k in _COUNTS:
                v = s.get(k)
                if type(v) is float and v.is_integer():
                    s[k] = int(v)
        for k in s:  # every keyword of this level before any level below: the same error whatever the order
            if k not in _KEYWORDS and k not in _ANNOTATIONS:
                # a high cutoff: only plain typos get a hint, not e.g. patternProperties -> properties
                import difflib  # only for a refused schema (see errors.suggest)

                close = difflib.get_close_matches(k, _KEYWORDS, n=1, cutoff=0.8)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise SchemaError(
                    ptr, f"unsupported keyword {k!r}{hint}; supported: {', '.join(sorted(_KEYWORDS))}"
                )
        for k, v in s.items():
            check = _CHECKS.get(k)
            if check and not check[0](v):
                raise SchemaError(ptr, f"{k} must be {check[1]}, got {_show(v)}")
            if k in ("properties", "$defs", "definitions"):
                for name, sub in v.items():
                    self.walk(sub, f"{ptr}/{k}/{_esc(name)}")
            elif k in ("anyOf", "oneOf", "allOf", "prefixItems"):
                for i, sub in enumerate(v):
                    self.walk(sub, f"{ptr}/{k}/{i}")
            elif k in ("items", "additionalProperties") and not isinstance(v, bool):
                self.walk(v, f"{ptr}/{k}")
            elif k == "$ref":
                self.walk(self.target(v, ptr), v[1:])
        f, _ = self.flat(s, ptr)
        if f is not s:  # a merge: check the combination too
            self.walk(f, ptr)
            return
        self.check_ranges(f, ptr)
        for key in ("anyOf", "oneOf"):
            for i in range(len(f.get(key, ()))):
                self.walk(self.branch(f, key, i, f"{ptr}/{key}/{i}"), f"{ptr}/{key}/{i}")

    def choices(self, f: Schema) -> list[Any]:
        """The values of f's `enum` (or its `const`) that f's other keywords allow too."""
        hit = self._choices.get(id(f))
        if hit is None:
            key = "const" if "const" in f else "enum"  # (a `const` is drawn before any `enum`)
            rest = {k: v for k, v in f.items() if k != key}
            self._rests.append(rest)  # kept alive: `flat` caches it by identity
            given = [f["const"]] if "const" in f else f["enum"]
            hit = self._choices[id(f)] = [v for v in given if self.valid(v, rest)]
        return hit

    def check_ranges(self, f: Schema, ptr: str) -> None:
        if "pattern" in f:  # first: an `enum`'s or a `const`'s values are validated against it
            self._compile_pattern(f["pattern"], ptr, sampled="enum" not in f and "const" not in f)
        if ("enum" in f or "const" in f) and not self.choices(f):
            what = "the `const` value does not satisfy" if "const" in f else "no `enum` value satisfies"
            raise SchemaError(ptr, f"{what} the schema's other keywords ({_show(f)})")
        for a, b in (("minLength", "maxLength"), ("minItems", "maxItems"), ("minimum", "maximum")):
            if a in f and b in f and f[a] > f[b]:
                raise SchemaError(ptr, f"{a} {f[a]} is greater than {b} {f[b]}")
        if f.get("additionalProperties") is False:
            undeclared = [n for n in f.get("required", []) if n not in f.get("properties", {})]
            if undeclared:
                raise SchemaError(
                    ptr, f"required property {undeclared[0]!r} is not in `properties`, and "
                    "`additionalProperties: false` allows no other: declare it or drop it from `required`"
                )
        prefix = f.get("prefixItems", [])
        if f.get("items") is False and f.get("minItems", 0) > len(prefix):
            raise SchemaError(
                ptr,
                f"minItems {f['minItems']} is more than the {len(prefix)} prefixItems `items: false` allows",
            )
        if f.get("uniqueItems") and f.get("minItems", 0) > len(prefix):
            distinct = self._distinct(_item(f, len(prefix)))
            if distinct is not None and f["minItems"] > len(prefix) + distinct:
                raise SchemaError(
                    ptr, f"minItems {f['minItems']} with uniqueItems, but the items allow only {distinct} "
                    "distinct values"
                )
        for integer in sorted({t == "integer" for t in _types(f) if t in ("integer", "number")}):
            if _number(f, None, "", integer) is None:
                desc = ", ".join(f"{k} {_show(f[k], 40)}" for k in _NUMBERS if k in f)
                raise SchemaError(ptr, f"no {'integer' if integer else 'number'} satisfies {desc}")
        if "pattern" in f and f["pattern"] in self.patterns:
            pat, lo, hi = self.patterns[f["pattern"]], f.get("minLength", 0), f.get("maxLength")
            if (pat.max_len is not None and pat.max_len < lo) or (hi is not None and pat.min_len > hi):
                raise SchemaError(
                    ptr, f"pattern {pat.source!r} cannot produce a string of length {_span(lo, hi)}"
                )

    def _compile_pattern(self, source: str, ptr: str, *, sampled: bool) -> None:
        """Compile `pattern`: as a regex (what values are checked against, on RE2, so never for seconds) and,
        when strings are drawn from it (`sampled`: no `enum` or `const` beside it), as a `Pattern`."""
        try:
            if sampled and source not in self.patterns:
                self.patterns[source] = Pattern(source)
            if source not in self.regexes:
                self.regexes[source] = compile_rule_regex(source, ignore_case=False)
        except PatternError as e:
            raise SchemaError(ptr, f"pattern {source!r} {e}") from None
        except RuleError as e:
            raise SchemaError(ptr, "pattern " + str(e).removeprefix("regex: regex ")) from None

    def _distinct(self, s: Schema) -> int | None:
        """How many distinct values s allows, when that is a small known number (enum, const, boolean)."""
        f, _ = self.flat(s)
        if "const" in f or "enum" in f:
            return len({canonical_json(v) for v in self.choices(f)})
        types = _types(f)
        if set(types) <= {"boolean", "null"} and "anyOf" not in f and "oneOf" not in f:
            return sum(2 if t == "boolean" else 1 for t in types)
        return None

    def target(self, ref: str, ptr: str) -> Schema:
        if ref != "#" and not ref.startswith("#/"):
            raise SchemaError(
                ptr, f"only $refs to a JSON pointer in this schema ('#/...') are supported, got {ref!r}"
            )
        node: Any = self.root
        for raw in ref.split("/")[1:]:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(ptr, f"unresolvable $ref {ref!r}")
        if not isinstance(node, dict):
            raise SchemaError(ptr, f"$ref {ref!r} does not point to a schema")
        return node

    def flat(self, s: Schema, ptr: str = "") -> tuple[Schema, tuple[str, ...]]:
        """s with its $ref followed and allOf merged in, and the refs followed on the way."""
        hit = self._flat.get(id(s))
        if hit is None:
            hit = self._flat[id(s)] = (s, *self._flatten(s, ptr, ()))
        return hit[1], hit[2]

    def _flatten(self, s: Schema, ptr: str, seen: tuple[str, ...]) -> tuple[Schema, tuple[str, ...]]:
        refs: tuple[str, ...] = ()
        if "$ref" in s:
            ref = s["$ref"]
            if ref in seen:
                raise SchemaError(ptr, f"$ref {ref!r} refers back to itself without reaching a schema")
            target, refs = self._flatten(self.target(ref, ptr), ptr, (*seen, ref))
            refs = (ref, *refs)
            s = _merge(target, {k: v for k, v in s.items() if k != "$ref" and k not in _NOT_MERGED}, ptr)
        if "allOf" in s:
            out = {k: v for k, v in s.items() if k != "allOf"}
            for sub in s["allOf"]:
                f, more = self._flatten(sub, ptr, (*seen, *refs))
                out, refs = _merge(out, f, ptr), (*refs, *more)
            s = out
        return s, refs

    def branch(self, f: Schema, key: str, i: int, ptr: str = "") -> Schema:
        """Branch i of f's anyOf/oneOf, with f's other keywords merged in."""
        hit = self._branches.get((id(f), key, i))
        if hit is None:
            rest = {k: v for k, v in f.items() if k != key and k not in _NOT_MERGED}
            hit = self._branches[(id(f), key, i)] = _merge(rest, f[key][i], ptr)
        return hit

    def cost(self, s: Schema, stack: frozenset[str] = frozenset()) -> float:
        """The size of the smallest value s allows, refs in `stack` barred; inf if it never bottoms out."""
        key = (id(s), stack)
        if key not in self._costs:
            self._costs[key] = math.inf
            f, refs = self.flat(s)
            self._costs[key] = math.inf if stack & set(refs) else len(refs) + self._cost(f, stack | set(refs))
        return self._costs[key]

    def _cost(self, f: Schema, stack: frozenset[str]) -> float:
        if "const" in f or "enum" in f:
            return 1
        key = "anyOf" if "anyOf" in f else "oneOf"
        if key in f:
            return min(self.cost(self.branch(f, key, i), stack) for i in range(len(f[key])))
        t = min(_types(f), key=_TYPES.index)
        if t == "object":
            return 1 + sum(self.cost(_prop(f, name), stack) for name in f.get("required", []))
        if t == "array":  # multiplied, not summed item by item: minItems may be a billion
            lo, prefix = f.get("minItems", 0), f.get("prefixItems", [])
            head = sum(self.cost(_item(f, i), stack) for i in range(min(lo, len(prefix))))
            rest = lo - len(prefix)
            return 1 + head + (rest * self.cost(_item(f, len(prefix)), stack) if rest > 0 else 0)
        return 1

    def smallest(self, s: Schema, stack: frozenset[str] = frozenset()) -> tuple[float, float]:
        """(values, characters) of the smallest document s allows: what drawing it costs at the least."""
        key = (id(s), stack)
        hit = self._smallest.get(key)
        if hit is None:
            self._smallest[key] = (math.inf, math.inf)
            f, refs = self.flat(s)
            hit = (math.inf, math.inf) if stack & set(refs) else self._smallest_flat(f, stack | set(refs))
            self._smallest[key] = hit
        return hit

    def _smallest_flat(self, f: Schema, stack: frozenset[str]) -> tuple[float, float]:
        if "const" in f or "enum" in f:
            return 1, 0
        key = "anyOf" if "anyOf" in f else "oneOf"
        if key in f:
            return min(self.smallest(self.branch(f, key, i), stack) for i in range(len(f[key])))
        t = min(_types(f), key=_TYPES.index)
        parts: list[tuple[float, float]] = []
        if t == "object":
            parts = [self.smallest(_prop(f, name), stack) for name in f.get("required", [])]
        elif t == "array":
            lo, prefix = f.get("minItems", 0), f.get("prefixItems", [])
            parts = [self.smallest(_item(f, i), stack) for i in range(min(lo, len(prefix)))]
            if lo > len(prefix):
                v, c = self.smallest(_item(f, len(prefix)), stack)
                parts.append(((lo - len(prefix)) * v, (lo - len(prefix)) * c))
        elif t == "string":
            pattern = self.patterns.get(f["pattern"]) if "pattern" in f else None
            return 1, max(f.get("minLength", 0), pattern.min_len if pattern else 0)
        return 1 + sum(v for v, _ in parts), sum(c for _, c in parts)

    def blame(self, s: Schema, ptr: str, over: Callable[[tuple[float, float]], bool]) -> str:
        """The keyword (and its pointer) that makes s's smallest document `over` a limit: the deepest one
        on the way down whose subschema alone is not over it."""
        if "$ref" in s:
            ptr = s["$ref"][1:]
        f, _ = self.flat(s)
        key = "anyOf" if "anyOf" in f else "oneOf"
        if key in f and "const" not in f and "enum" not in f:
            i = min(range(len(f[key])), key=lambda j: self.smallest(self.branch(f, key, j)))
            return self.blame(self.branch(f, key, i), f"{ptr}/{key}/{i}", over)
        t = min(_types(f), key=_TYPES.index)
        if t == "object":
            for name in f.get("required", []):
                sub = _prop(f, name)
                if over(self.smallest(sub)):
                    return self.blame(sub, f"{ptr}/properties/{_esc(name)}", over)
            return f"`required` ({len(f.get('required', []))} properties) at {ptr or '/'}"
        if t == "array":
            prefix = f.get("prefixItems", [])
            sub = _item(f, len(prefix))
            if over(self.smallest(sub)):
                return self.blame(sub, f"{ptr}/items", over)
            return f"`minItems {f.get('minItems', 0)}` at {ptr or '/'}"
        if "pattern" in f and self.patterns[f["pattern"]].min_len >= f.get("minLength", 0):
            return f"`pattern {_show(f['pattern'], 40)}` at {ptr or '/'}"
        return f"`minLength {f.get('minLength', 0)}` at {ptr or '/'}"

    def valid(self, v: Any, s: Schema) -> bool:
        """Whether `v` satisfies `s`, over the keywords this module supports (formats are annotations, as
        JSON Schema validators treat them by default)."""
        f, _ = self.flat(s)
        if "const" in f and not _same(v, f["const"]):
            return False
        if "enum" in f and not any(_same(v, e) for e in f["enum"]):
            return False
        if v is None and f.get("nullable"):  # (after `enum`: OpenAPI's null must be among its values too)
            return True
        if "type" in f and not any(_is_type(v, t) for t in ([f["type"]] if isinstance(f["type"], str)
                                                             else f["type"])):  # fmt: skip
            return False
        if isinstance(v, str) and not self._valid_string(v, f):
            return False
        if _is_num(v) and not _valid_number(v, f):
            return False
        if isinstance(v, list) and not self._valid_array(v, f):
            return False
        if isinstance(v, dict) and not self._valid_object(v, f):
            return False
        if "anyOf" in f and not any(self.valid(v, b) for b in f["anyOf"]):
            return False
        return "oneOf" not in f or sum(1 for b in f["oneOf"] if self.valid(v, b)) == 1

    def _valid_string(self, v: str, f: Schema) -> bool:
        if len(v) < f.get("minLength", 0) or len(v) > f.get("maxLength", len(v)):
            return False
        return "pattern" not in f or self.regexes[f["pattern"]].search(v) is not None

    def _valid_array(self, v: list[Any], f: Schema) -> bool:
        if len(v) < f.get("minItems", 0) or len(v) > f.get("maxItems", len(v)):
            return False
        prefix, items = f.get("prefixItems", []), f.get("items")
        for i, x in enumerate(v):
            sub = prefix[i] if i < len(prefix) else items
            if sub is False or (isinstance(sub, dict) and not self.valid(x, sub)):
                return False
        return not f.get("uniqueItems") or len({canonical_json(x) for x in v}) == len(v)

    def _valid_object(self, v: dict[str, Any], f: Schema) -> bool:
        props, extra = f.get("properties", {}), f.get("additionalProperties")
        if any(k not in v for k in f.get("required", [])):
            return False
        for k, x in v.items():
            sub = props.get(k, extra)
            if sub is False or (isinstance(sub, dict) and not self.valid(x, sub)):
                return False
        return True

    def check_path(self, path: str) -> None:
        level: list[tuple[str, Schema]] = [("", self.root)]
        for seg in path.split("."):
            nxt: list[tuple[str, Schema]] = []
            seen: set[int] = set()
            for ptr, s in level:
                nxt += self._children(s, seg, ptr, seen)
            if not nxt:
                if seg == "*" or seg.isdigit():
                    raise SchemaError(
                        level[0][0],
                        f"override path {path!r}: {seg!r} indexes array items, but there are none here",
                    )
                known = sorted({n for _, s in level for n in self.flat(s)[0].get("properties", {})})
                raise SchemaError(
                    level[0][0],
                    f"override path {path!r}: no property {seg!r} here; known: {', '.join(known) or 'none'}",
                )
            level = nxt

    def _children(self, s: Schema, seg: str, ptr: str, seen: set[int]) -> list[tuple[str, Schema]]:
        f, _ = self.flat(s)
        if id(f) in seen:
            return []
        seen.add(id(f))
        out = [
            hit
            for key in ("anyOf", "oneOf")
            for i in range(len(f.get(key, ())))
            for hit in self._children(self.branch(f, key, i), seg, f"{ptr}/{key}/{i}", seen)
        ]
        if seg in f.get("properties", {}):
            out.append((f"{ptr}/properties/{_esc(seg)}", f["properties"][seg]))
        prefix, items = f.get("prefixItems", []), f.get("items")
        if seg.isdigit() and int(seg) < len(prefix):
            out.append((f"{ptr}/prefixItems/{seg}", prefix[int(seg)]))
        elif (seg == "*" or seg.isdigit()) and isinstance(items, dict):
            out.append((f"{ptr}/items", items))
        if seg == "*":
            out += [(f"{ptr}/prefixItems/{i}", p) for i, p in enumerate(prefix)]
        return out


def _prop(f: Schema, name: str) -> Schema:
    extra = f.get("additionalProperties")
    sub: Schema = f.get("properties", {}).get(name, extra if isinstance(extra, dict) else _ANY)
    return sub


def _item(f: Schema, i: int) -> Schema:
    prefix, items = f.get("prefixItems", []), f.get("items")
    sub: Schema = prefix[i] if i < len(prefix) else items if isinstance(items, dict) else _ANY
    return sub


def validate_supported(schema: Any) -> None:
    """Raise SchemaError (with the JSON pointer) for anything in `schema` that `FromSchema` can't honour."""
    _Schema(schema)


