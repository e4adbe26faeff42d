"""Templates that are only text, names and calls with constant arguments, rendered without Jinja.

Most rule templates are a sentence with `{{ fake('name') }}`, `{{ last_user }}` or `{{ integer(1, 6) }}`
in it. Jinja renders those through a new context per render and `Context.call` per call (the sandbox's
checks, then its look-ups of how to pass a context), several times the work of the draws themselves. Such a
template is read once into pieces (`plain_pieces`), then into a `PlainRender`, whose `render` gives the
text Jinja's compiled code gives for it: the text between expressions (adjacent text joined, as Jinja joins
it), `str()` of each name's value and of each call's result, calls made in the same order (so each draw gets
the same `("template", i)` fork), the output's size checked chunk by chunk as `sandbox.render` checks it.
Whatever such a template could do that this does not (a name that is not in the scope, a capture standing
where a helper was, a callable that raises StopIteration) raises `NotPlain`, and the caller renders the
template with Jinja from the start.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jinja2 import nodes

from ..errors import DrawError, RuleError
from ..seeding import MixedSeeds
from .core import DrawContext
from .registry import REGISTRY
from .sandbox import Budget, render_budget, render_with
from .template import (
    _BUILTINS,
    TEMPLATE_NAMES,
    FakeKey,
    _cached_fake,
    _tool_result_reader,
    fake_key,
    missing_names_error,
    template_key,
)

__all__ = ["Call", "NotPlain", "Piece", "PlainRender", "plain_pieces"]

_CONSTANTS = (str, int, float, bool, type(None))
Call = tuple[str, tuple[Any, ...], dict[str, Any], "FakeKey | None"]
Piece = str | Call
"""Text, or (a name, its call's arguments and keyword arguments, the `fake` cache key of a fake(...)
call); a name without a call has `()` and `{}` and is marked by `_NAME`."""


class NotPlain(Exception):
    """This render needs Jinja after all."""


def _constant(node: nodes.Node) -> bool:
    return type(node) is nodes.Const and type(node.value) in _CONSTANTS


def plain_pieces(ast: nodes.Template) -> tuple[Piece, ...] | None:
    """The pieces of a template made of text, `{{ name }}` and `{{ name(constants…) }}` only, else None."""
    if not ast.body:
        return ()
    if len(ast.body) != 1 or type(ast.body[0]) is not nodes.Output:
        return None
    pieces: list[Piece] = []
    for node in ast.body[0].nodes:
        if type(node) is nodes.TemplateData:
            if pieces and type(pieces[-1]) is str:
                pieces[-1] += node.data  # Jinja yields adjacent text as one chunk
            else:
                pieces.append(node.data)
        elif type(node) is nodes.Name and node.ctx == "load":
            pieces.append((node.name, _NAME, {}, None))
        elif (
            type(node) is nodes.Call
            and type(node.node) is nodes.Name
            and node.dyn_args is None
            and node.dyn_kwargs is None
            and all(_constant(a) for a in node.args)
            and all(_constant(k.value) for k in node.kwargs)
        ):
            name = node.node.name
            args = tuple(a.value for a in node.args)  # type: ignore[attr-defined]
            kwargs = {k.key: k.value.value for k in node.kwargs}  # type: ignore[attr-defined]
            pieces.append((name, args, kwargs, fake_key(args, kwargs) if name == "fake" else None))
        else:
            return None
    return tuple(pieces)


_NAME: tuple[Any, ...] = ("name",)  # the arguments slot of a bare name: no tuple of arguments is this one

# What a step of a render does, after its text (`PlainRender.of`):
_FAKE = 0  # the built-in `fake(...)`, drawn from one of the render's fork seeds
_VALUE = 1  # str() of a name's value, a capture's or a built-in's
_DRAW = 2  # a registered generator, drawn in its fork
_TOOL_RESULT = 3  # the `tool_result(...)` helper, which draws nothing
_HELPERS = {"fake", "tool_result"}
"""The built-in names that are helpers: every other built-in is data."""


class PlainRender:
    """A template's pieces, read once into steps: `render` is what Jinja renders for them in that scope.

    In Jinja's scope (`template.Template._scope`) a name is a capture, else a built-in, else a registered
    generator's drawer; each draw of a generator or of `fake` takes the next `("template", i)` fork, so the
    forks of a plain template's draws are known before it renders: the seeds of its `fake` draws are mixed
    at once (`seeding.MixedSeeds`), and a `fake` value is read from its seed (`Fake.at`), no context made.
    """

    __slots__ = ("_data_names", "_fakes", "_helpers", "_nests", "_seeds", "_steps", "_tail", "_unknown")

    def __init__(
        self,
        steps: list[tuple[str, int, Any, Any]],
        tail: str,
        data_names: tuple[str, ...],
        helpers: frozenset[str],
        fake_draws: list[int],
        unknown: tuple[str, ...],
    ) -> None:
        self._steps = tuple(steps)
        self._tail = tail
        self._data_names = data_names
        self._helpers = helpers
        self._seeds = MixedSeeds(tuple(template_key(n) for n in fake_draws))
        self._fakes: list[Any] = [None] * len(fake_draws)  # each `fake(...)` generator, once built
        self._unknown = unknown
        # a generator's draw may render a template, or read the budget: it must see this render's
        self._nests = any(kind == _DRAW for _, kind, _, _ in steps)

    @classmethod
    def of(cls, pieces: tuple[Piece, ...], builtin_names: Iterable[str],
           unknown: Iterable[str]) -> PlainRender | None:  # fmt: skip
        """The render of `pieces`, or None for a template whose renders always need Jinja (a call of a
        built-in data name or of a name that is no generator).

        A step is (the text before it, what it does, and its two arguments): `_FAKE` (the cache key of the
        `fake(...)` call, the number of its seed), `_VALUE` (the name, None), `_DRAW` ((the name, the
        arguments, keyword arguments, n of its fork), None), `_TOOL_RESULT` (arguments, keyword arguments).
        """
        steps: list[tuple[str, int, Any, Any]] = []
        text = ""
        helpers: set[str] = set()
        fake_draws: list[int] = []
        draws = 0  # the draws before this step: `n` of its fork `("template", n)`
        for piece in pieces:
            if isinstance(piece, str):
                text = piece  # (adjacent text is one piece)
                continue
            name, args, kwargs, key = piece
            if args is _NAME:
                steps.append((text, _VALUE, name, None))
            elif key is not None:
                steps.append((text, _FAKE, key, len(fake_draws)))
                fake_draws.append(draws)
                draws += 1
            elif name == "tool_result":  # it draws nothing
                steps.append((text, _TOOL_RESULT, args, kwargs))
            elif name in REGISTRY and name not in TEMPLATE_NAMES:
                steps.append((text, _DRAW, (name, args, kwargs, draws), None))
                draws += 1
            else:
                return None
            if args is not _NAME:
                helpers.add(name)
            text = ""
        data_names = tuple(n for n in builtin_names if n not in _HELPERS)
        return cls(steps, text, data_names, frozenset(helpers), fake_draws, tuple(unknown))

    def render(self, ctx: DrawContext) -> str:
        """The text for `ctx`; NotPlain when Jinja must render it."""
        if self._nests:
            return render_with(lambda budget: self._render(ctx, budget), ctx.limits)
        return self._render(ctx, render_budget(ctx.limits))

    def _render(self, ctx: DrawContext, budget: Budget) -> str:
        """The text for `ctx`, its size checked against `budget` chunk by chunk."""
        captures = ctx.captures
        if captures and not self._helpers.isdisjoint(captures):
            raise NotPlain  # a capture stands where a helper was: Jinja gives its error
        if self._unknown:
            missing = [n for n in self._unknown if n not in captures]
            if missing:
                raise missing_names_error(missing)
        # every built-in the template reads, once per render, as `_scope` makes them (in its order)
        values: dict[str, Any] = {}
        for name in self._data_names:
            values[name] = _BUILTINS[name](ctx, _no_drawer)
        if captures:
            values.update(captures)  # a capture the rule's author named wins over a built-in of that name
        seeds = self._seeds(ctx.seed)
        fakes = self._fakes
        now = ctx.now
        out: list[str] = []
        append = out.append
        size = 0
        max_size = budget.max_size
        try:
            for text, kind, a, b in self._steps:
                if text:
                    size += len(text)
                    if size > max_size:  # (the check `budget.size` makes, without a call per chunk)
                        budget.size(size, "the rendered text")
                    append(text)
                if kind == _FAKE:
                    gen = fakes[b]
                    if gen is None:
                        try:
                            gen = fakes[b] = _cached_fake(*a)
                        except RuleError as exc:
                            raise DrawError(f"template: {exc}") from None
                    chunk = str(gen.at(seeds[b], now))
                elif kind == _VALUE:
                    try:
                        value = values[a]
                    except KeyError:  # a generator's drawer or a helper (or no name at all): Jinja's
                        raise NotPlain from None
                    chunk = str(value)
                elif kind == _DRAW:
                    chunk = str(_draw(ctx, *a))
                else:
                    chunk = str(_tool_result_reader(ctx.request)(*a, **b))
                size += len(chunk)
                if size > max_size:
                    budget.size(size, "the rendered text")
                append(chunk)
        except StopIteration:  # Jinja makes it an undefined value, whose error Jinja's render gives
            raise NotPlain from None
        tail = self._tail
        if tail:
            size += len(tail)
            if size > max_size:
                budget.size(size, "the rendered text")
            append(tail)
        return "".join(out)


def _draw(ctx: DrawContext, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], n: int) -> Any:
    """What the drawer of the registered generator `name` gives for the render's n-th draw."""
    factory = REGISTRY.get(name)
    if factory is None:
        raise NotPlain
    try:
        gen = factory(*args, **kwargs)
    except RuleError as exc:  # `{{ integer(5, 1) }}`: built at draw time, so a draw error
        raise DrawError(f"template: {exc}") from None
    return gen.draw(ctx.fork_key(template_key(n)))


def _no_drawer(factory: Any) -> Any:  # pragma: no cover - the data built-ins never call it
    raise AssertionError("a data built-in asked for a drawer")
