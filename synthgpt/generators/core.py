"""The generator protocol, the draw context and the combinators.

A generator is a small immutable object with one method, `draw(ctx)`. Randomness is passed in through the
context, never reached for: `ctx.rng` is a `random.Random` seeded from the context's seed, and a named
sub-generator draws from `ctx.fork(label)`, whose seed derives from the parent's seed and the label only.
So the value a field gets does not depend on which other fields exist or in what order they are drawn.

A fork is cheap: its seed mixes the parent's seed with the label's key (`seeding.mix_seed`, a few integer
operations; the label is hashed once per process), and its RNG is a `seeding.DrawRandom`, whose seeding is
one attribute store. A draw makes dozens of forks, most of which draw a value or two.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from .._validation import MAX_ITEMS, finite, shown, whole
from ..errors import DrawError, RuleError
from ..limits import DEFAULT_LIMITS, Limits
from ..model import ModelRequest
from ..seeding import DrawRandom, label_key, mix_seed

__all__ = [
    "Bind",
    "DrawContext",
    "Filter",
    "Generator",
    "Just",
    "Lists",
    "Map",
    "Objects",
    "OneOf",
    "Weighted",
    "lift",
    "snapshot",
]

T = TypeVar("T")
U = TypeVar("U")

# The checks' old private names here, for modules written against them (one implementation: _validation).
_whole, _real, _shown = whole, finite, shown


class DrawContext:
    """What a draw may depend on: the request, a seed, the clock reading and the rule's captures."""

    __slots__ = (
        "_call_index", "_order_reads", "_rng", "base_seed", "captures", "limits", "now", "received",
        "request", "rule", "seed",
    )  # fmt: skip

    def __init__(
        self,
        request: ModelRequest,
        seed: int,
        *,
        now: float = 0.0,
        captures: Mapping[str, str] | None = None,
        rule: str = "",
        call_index: int = 0,
        base_seed: int = 0,
        order_reads: list[int] | None = None,
        limits: Limits | None = None,
        received: ModelRequest | None = None,
    ) -> None:
        self.request = request
        self.received = request if received is None else received
        """The request as it arrived, triggers and all; `request` is what content is drawn from (the engine
        takes `!MOCK_…!` triggers out of it, so no generated text can quote one)."""
        self.seed = seed
        self.now = now
        self.captures: Mapping[str, str] = captures or {}
        self.rule = rule
        self._call_index = call_index
        self.base_seed = base_seed
        """The engine's seed, for values that must not depend on the rest of the request (embeddings)."""
        self._rng: random.Random | None = None
        # Shared by every context forked from this one; grows when a draw reads `call_index`, i.e. when the
        # answer depends on call order (the server's response memo must not replay such an answer).
        self._order_reads = order_reads
        self.limits = limits or DEFAULT_LIMITS
        """The request's budgets (`synthgpt.limits`): what a draw may build before it must stop."""

    @property
    def call_index(self) -> int:
        """The rule's 0-based call count: reading it makes the answer depend on call order."""
        if self._order_reads is not None:
            self._order_reads.append(self._call_index)
        return self._call_index

    @property
    def rng(self) -> random.Random:
        rng = self._rng
        if rng is None:
            rng = self._rng = DrawRandom(self.seed)
        return rng

    def fork(self, label: object) -> DrawContext:
        """The context of a named part: its seed derives from this seed and `label` only."""
        return self.fork_key(label_key(label))

    def at_seed(self, seed: int) -> DrawContext:
        """This context with another seed: the fork whose seed a caller worked out itself (a compiled
        schema follows forks by their seeds alone, and makes a context only where a value needs one)."""
        child = self.fork_key(0)
        child.seed = seed
        return child

    def fork_key(self, key: int) -> DrawContext:
        """`fork` with the label's `seeding.label_key` already taken (a generator keeps its labels' keys)."""
        child = _new_context(DrawContext)
        child.request = self.request
        child.received = self.received
        child.seed = mix_seed(self.seed, key)
        child.now = self.now
        child.captures = self.captures
        child.rule = self.rule
        child._call_index = self._call_index
        child.base_seed = self.base_seed
        child._rng = None
        child._order_reads = self._order_reads
        child.limits = self.limits
        return child

    @staticmethod
    def of_answer(
        request: ModelRequest,
        seed: int,
        now: float,
        captures: Mapping[str, str],
        rule: str,
        call_index: int,
        base_seed: int,
        order_reads: list[int] | None,
        limits: Limits,
        received: ModelRequest,
    ) -> DrawContext:
        """`DrawContext(request, seed, now=…, …, received=…)` with every argument given, as the engine makes
        one per choice: positional, without the keyword call (it cost about as much as the fields' stores)."""
        ctx = _new_context(DrawContext)
        ctx.request = request
        ctx.received = received
        ctx.seed = seed
        ctx.now = now
        ctx.captures = captures or {}
        ctx.rule = rule
        ctx._call_index = call_index
        ctx.base_seed = base_seed
        ctx._rng = None
        ctx._order_reads = order_reads
        ctx.limits = limits or DEFAULT_LIMITS
        return ctx

    def with_request(self, request: ModelRequest, seed: int | None = None) -> DrawContext:
        """This context for another request (and seed): same clock reading, captures, rule and call."""
        return DrawContext(
            request,
            self.seed if seed is None else seed,
            now=self.now,
            captures=self.captures,
            rule=self.rule,
            call_index=self._call_index,
            base_seed=self.base_seed,
            order_reads=self._order_reads,
            limits=self.limits,
            received=self.received,
        )

    def __repr__(self) -> str:
        return f"DrawContext(seed={self.seed}, rule={self.rule!r})"


class Generator(Generic[T]):
    """Base of every generator. Subclasses implement `draw` and `__repr__` (the expression that built it)."""

    __slots__ = ()

    def draw(self, ctx: DrawContext) -> T:
        raise NotImplementedError  # pragma: no cover - abstract

    def example(self, seed: int = 0, request: ModelRequest | Mapping[str, Any] | None = None) -> T:
        """One value, drawn against an empty request (or `request`, a ModelRequest or a plain dict of one, as
        `ModelRequest.from_dict` takes): handy in a REPL and in docs."""
        if request is not None and not isinstance(request, ModelRequest):
            request = ModelRequest.from_dict(request)
        # at the default FixedClock's instant, so "now"-relative values look as they do in answers
        return self.draw(DrawContext(request or _EMPTY_REQUEST, seed, now=1_767_225_600))

    def map(self, fn: Callable[[T], U]) -> Generator[U]:
        return Map(self, fn)

    def bind(self, fn: Callable[[T], Generator[U]]) -> Generator[U]:
        return Bind(self, fn)

    def filter(self, predicate: Callable[[T], bool], max_tries: int = 100) -> Generator[T]:
        return Filter(self, predicate, max_tries)

    def __or__(self, other: Generator[U]) -> Generator[T | U]:
        return OneOf(self, other)

    # Equality is by the expression (type and repr), which decides the draws, plus the identity of the
    # functions inside: `map(f)` and `map(g)` of two different lambdas print alike but draw differently.
    # Equal generators have equal reprs, so hashing the repr is consistent with it.
    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other) or repr(self) != repr(other):
            return False
        mine, theirs = self._functions(), cast(Generator[Any], other)._functions()
        return len(mine) == len(theirs) and all(a is b for a, b in zip(mine, theirs, strict=True))

    def __hash__(self) -> int:
        return hash(repr(self))

    def _functions(self) -> list[object]:
        """The user functions this generator and the generators inside it call, in a fixed order."""
        found: list[object] = []
        _collect_functions(self, found)
        return found


_EMPTY_REQUEST = ModelRequest()
_new_context = object.__new__


class NumberedKeys:
    """The fork keys of `(label, i)`, `label_key` of each, for the first `size` positions from a table:
    numbered labels (list items, a template's draws) are the commonest, and each look-up is an index."""

    __slots__ = ("_keys", "_label", "_size")

    def __init__(self, label: str, size: int) -> None:
        self._label, self._size = label, size
        self._keys: tuple[int, ...] = ()

    def __call__(self, i: int) -> int:
        keys = self._keys
        if i < len(keys):
            return keys[i]
        if i >= self._size:
            return label_key((self._label, i))
        # a whole new table, swapped in at once: threads growing it together each build a correct one
        label = self._label
        keys = self._keys = tuple(label_key((label, j)) for j in range(min(self._size, max(64, 2 * i + 1))))
        return keys[i]


item_key = NumberedKeys("item", 4096)
"""The fork key of `("item", i)`: list positions."""


def _collect_functions(value: Any, found: list[object]) -> None:
    if isinstance(value, Generator):
        if isinstance(value, Map | Bind):
            found.append(value.fn)
        elif isinstance(value, Filter):
            found.append(value.predicate)
        for cls in type(value).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                attr = getattr(value, slot, None)
                if isinstance(attr, Generator | Mapping | list | tuple):
                    _collect_functions(attr, found)
    elif isinstance(value, Mapping):
        for v in value.values():
            _collect_functions(v, found)
    elif isinstance(value, list | tuple):
        for v in value:
            _collect_functions(v, found)


def _num(x: float) -> str:
    """A number as a repr that rebuilds it (`:g` would turn 1234567.0 into 1.23457e+06)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else repr(float(x))


def _fn_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def snapshot(value: T) -> T:
    """`value` with its dicts and lists copied at every depth (other objects shared): a generator keeps
    this, so mutating the dict or list passed in later changes no answer."""
    if isinstance(value, dict):
        return cast(T, {k: snapshot(v) for k, v in value.items()})
    if isinstance(value, list):
        return cast(T, [snapshot(v) for v in value])
    return value


def lift(value: Any) -> Generator[Any]:
    """A generator for `value`: generators as they are, dicts and lists element-wise, the rest constants."""
    if isinstance(value, Generator):
        return value
    if isinstance(value, Mapping):
        if any(isinstance(v, Generator | Mapping | list | tuple) for v in value.values()):
            return Objects(value)
        return Just(dict(value))
    if isinstance(value, list | tuple):
        if any(isinstance(v, Generator | Mapping | list | tuple) for v in value):
            return Fixed([lift(v) for v in value])
        return Just(list(value))
    return Just(value)


class Just(Generator[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = snapshot(value)

    def draw(self, ctx: DrawContext) -> T:
        v = self.value
        # hand out copies of containers so a caller mutating one result cannot change the next
        if isinstance(v, dict | list):
            return cast(T, copy.deepcopy(v))
        return v

    def __repr__(self) -> str:
        return f"just({self.value!r})"


class Map(Generator[U]):
    __slots__ = ("fn", "inner")

    def __init__(self, inner: Generator[T], fn: Callable[[T], U]) -> None:
        self.inner = inner
        self.fn = fn

    def draw(self, ctx: DrawContext) -> U:
        return self.fn(self.inner.draw(ctx))

    def __repr__(self) -> str:
        return f"{self.inner!r}.map({_fn_name(self.fn)})"


class Bind(Generator[U]):
    __slots__ = ("fn", "inner")

    def __init__(self, inner: Generator[T], fn: Callable[[T], Generator[U]]) -> None:
        self.inner = inner
        self.fn = fn

    def draw(self, ctx: DrawContext) -> U:
        first = self.inner.draw(ctx.fork("bind:0"))
        nxt = self.fn(first)
        if not isinstance(nxt, Generator):
            raise DrawError(f"{self!r}: the bound function returned {type(nxt).__name__}, not a generator")
        return nxt.draw(ctx.fork("bind:1"))

    def __repr__(self) -> str:
        return f"{self.inner!r}.bind({_fn_name(self.fn)})"


class Filter(Generator[T]):
    __slots__ = ("inner", "max_tries", "predicate")

    def __init__(self, inner: Generator[T], predicate: Callable[[T], bool], max_tries: int = 100) -> None:
        if whole("filter: max_tries", max_tries) < 1:
            raise RuleError(f"filter: max_tries must be >= 1, got {max_tries}")
        self.inner = inner
        self.predicate = predicate
        self.max_tries = max_tries

    def draw(self, ctx: DrawContext) -> T:
        for attempt in range(self.max_tries):
            value = self.inner.draw(ctx.fork(("filter", attempt)))
            if self.predicate(value):
                return value
        raise DrawError(
            f"{self!r} rejected {self.max_tries} values in a row; "
            "loosen the predicate or narrow the generator"
        )

    def __repr__(self) -> str:
        tries = "" if self.max_tries == 100 else f", max_tries={self.max_tries}"
        return f"{self.inner!r}.filter({_fn_name(self.predicate)}{tries})"


class OneOf(Generator[Any]):
    __slots__ = ("options",)
    options: tuple[Generator[Any], ...]

    def __init__(self, *options: Any) -> None:
        if not options:
            raise RuleError("one_of needs at least one option")
        flat: list[Generator[Any]] = []
        for o in options:
            flat.extend(o.options if isinstance(o, OneOf) else [lift(o)])
        self.options = tuple(flat)

    def draw(self, ctx: DrawContext) -> Any:
        i = ctx.rng.randrange(len(self.options))
        return self.options[i].draw(ctx.fork(("one_of", i)))

    def __repr__(self) -> str:
        return "one_of(" + ", ".join(map(repr, self.options)) + ")"


class Weighted(Generator[Any]):
    __slots__ = ("options", "weights")

    def __init__(self, pairs: Sequence[tuple[float, Any]] | Mapping[Any, float]) -> None:
        items = [(w, v) for v, w in pairs.items()] if isinstance(pairs, Mapping) else list(pairs)
        if not items:
            raise RuleError("weighted needs at least one (weight, option) pair")
        for pair in items:
            if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise RuleError(f"weighted: pairs are (weight, option), got {shown(pair)}")
            w = pair[0]
            if not isinstance(w, int | float) or isinstance(w, bool) or not math.isfinite(w) or w < 0:
                raise RuleError(f"weighted: pairs are (weight, option) with a weight >= 0, got weight {w!r}")
        if sum(w for w, _ in items) <= 0:
            raise RuleError("weighted: at least one weight must be > 0")
        self.weights = tuple(float(w) for w, _ in items)
        self.options = tuple(lift(v) for _, v in items)

    def draw(self, ctx: DrawContext) -> Any:
        (i,) = ctx.rng.choices(range(len(self.options)), weights=self.weights)
        return self.options[i].draw(ctx.fork(("weighted", i)))

    def __repr__(self) -> str:
        pairs = ", ".join(f"({_num(w)}, {o!r})" for w, o in zip(self.weights, self.options, strict=True))
        return f"weighted([{pairs}])"


class Objects(Generator[dict[str, Any]]):
    """A dict whose values are drawn each from its own fork, labelled by key."""

    __slots__ = ("_keys", "fields")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        if not isinstance(fields, Mapping):
            got = type(fields).__name__
            raise RuleError(f"objects takes a dict of field name -> generator or value, got {got}")
        self.fields = {str(k): lift(v) for k, v in fields.items()}
        self._keys = tuple(label_key(("field", k)) for k in self.fields)  # each field's fork, hashed once

    def draw(self, ctx: DrawContext) -> dict[str, Any]:
        fork = ctx.fork_key
        return {k: g.draw(fork(key)) for (k, g), key in zip(self.fields.items(), self._keys, strict=True)}

    def __repr__(self) -> str:
        return "objects({" + ", ".join(f"{k!r}: {g!r}" for k, g in self.fields.items()) + "})"


class Fixed(Generator[list[Any]]):
    """A list of fixed length, each position from its own generator."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Generator[Any]]) -> None:
        self.items = tuple(items)

    def draw(self, ctx: DrawContext) -> list[Any]:
        return [g.draw(ctx.fork_key(item_key(i))) for i, g in enumerate(self.items)]

    def __repr__(self) -> str:
        return "[" + ", ".join(map(repr, self.items)) + "]"


class Lists(Generator[list[Any]]):
    __slots__ = ("element", "max_size", "min_size", "unique")

    def __init__(self, element: Any, min_size: int = 0, max_size: int = 5, *, unique: bool = False) -> None:
        whole("`lists`: min_size", min_size)
        whole("`lists`: max_size", max_size)
        if min_size < 0 or max_size < min_size:
            raise RuleError(f"lists takes 0 <= min_size <= max_size, got {min_size!r} and {max_size!r}")
        if max_size > MAX_ITEMS:
            raise RuleError(f"lists takes max_size <= {MAX_ITEMS}, got {max_size}")
        if not isinstance(unique, bool):
            raise RuleError(f"`lists`: unique must be true or false, got {shown(unique)}")
        self.element = lift(element)
        self.min_size = min_size
        self.max_size = max_size
        self.unique = unique

    def draw(self, ctx: DrawContext) -> list[Any]:
        size = ctx.rng.randint(self.min_size, self.max_size)
        if not self.unique:
            return [self.element.draw(ctx.fork_key(item_key(i))) for i in range(size)]
        out: list[Any] = []
        seen: set[str] = set()
        attempt = 0
        while len(out) < size and attempt < size * 20:
            v = self.element.draw(ctx.fork_key(item_key(attempt)))
            attempt += 1
            key = repr(v)
            if key not in seen:
                seen.add(key)
                out.append(v)
        if len(out) < self.min_size:
            raise DrawError(f"{self!r}: could not draw {self.min_size} distinct values")
        return out

    def __repr__(self) -> str:
        extra = ", unique=True" if self.unique else ""
        return f"lists({self.element!r}, {self.min_size}, {self.max_size}{extra})"
