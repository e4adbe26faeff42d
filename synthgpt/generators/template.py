"""Jinja2 templates as generators: sandboxed, strict about undefined names, seeded wherever they draw."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import DrawError, RuleError
from ..text_json import loads_text
from .core import DrawContext, Generator, NumberedKeys

if TYPE_CHECKING:
    from .fake import Fake
    from .sandbox import Helper

__all__ = ["TEMPLATE_NAMES", "Template"]

# Names every template can use besides the generators of the registry.
TEMPLATE_NAMES = frozenset(
    {
        "request",
        "last_user",
        "messages",
        "model",
        "tools",
        "captures",
        "system",
        "turn",
        "tool_results",
        "call_index",
        "fake",
        "now",
        "tool_result",
        "round",
    }
)


_BUILTIN_ORDER = (
    "request", "last_user", "messages", "system", "model", "tools", "tool_results", "turn", "call_index",
    "now", "captures", "fake", "tool_result", "round",
)  # fmt: skip


template_key = NumberedKeys("template", 1024)
"""The fork key of `("template", i)`, the i-th draw of a render."""


def _parse(source: str) -> Any:
    # Jinja2 is imported with the first template, not with synthgpt: a server whose rules have no template
    # never loads it (about 2 MB of a server's memory).
    from .sandbox import sandbox

    return sandbox().parse(source)


class Template(Generator[str]):
    """`template("Hello {{ fake('name') }}, you said {{ last_user }}")`.

    In scope: `request`, `last_user`, `messages`, `system`, `model`, `tools`, `tool_results`, `turn`,
    `call_index`, `now`, `captures` (and each capture by name), `fake(provider, **kw)`, every registered
    generator as a function that draws a value (`integer(1, 6)`), and a seeded `random` filter.
    For agent loops: `round` (tool rounds so far in the current turn) and `tool_result(name=None)`, the
    latest result of the current turn (of tool `name`), parsed as JSON when it is JSON.
    """

    __slots__ = ("_builtin_names", "_names", "_plain", "_template", "_unknown", "source")

    def __init__(self, source: str, *, known_names: Iterable[str] = ()) -> None:
        if not isinstance(source, str):
            raise RuleError(f"template takes a string, got {type(source).__name__}")
        self.source = source
        import jinja2
        from jinja2 import meta

        from .sandbox import compile_template
        from .template_plain import PlainRender, plain_pieces
        from .template_scope import check_scope

        try:
            ast = _parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise RuleError(f"template syntax error at line {exc.lineno}: {exc.message}") from None
        from .registry import REGISTRY

        known = set(known_names)
        allowed = TEMPLATE_NAMES | set(REGISTRY) | known
        names = meta.find_undeclared_variables(ast)
        unknown = sorted(names - allowed)
        check_scope(ast, shadowed=known)
        # only what the template reads is put in its scope: a drawer per registered generator on every
        # draw cost more than most renders, and reading `call_index` marks an answer as call-order dependent
        self._names = frozenset(names)
        # the built-in names it reads, in a fixed order (each is made once per render)
        self._builtin_names = tuple(n for n in _BUILTIN_ORDER if n in names)
        pieces = plain_pieces(ast)  # read before `compile_template`, which rewrites the tree
        self._plain = None if pieces is None else PlainRender.of(pieces, self._builtin_names, unknown)
        self._template = compile_template(ast)
        self._unknown = unknown  # names that must come from captures at draw time

    @property
    def undeclared(self) -> list[str]:
        """Names the template reads that are neither built in nor generators: they must be captures."""
        return list(self._unknown)

    def draw(self, ctx: DrawContext) -> str:
        late = _LATE or _load()
        plain = self._plain
        if plain is not None:
            try:
                return plain.render(ctx)
            except late.NotPlain:  # render it with Jinja, from the start (the draws are made again, alike)
                pass
        scope = self._scope(ctx, late)
        import jinja2  # loaded when the template was built: a look-up in sys.modules

        try:
            return late.render(self._template, scope, ctx.limits)
        except jinja2.TemplateError as exc:  # an undefined name, a refused call or attribute
            raise DrawError(f"template: {exc.message}") from None

    def _scope(self, ctx: DrawContext, late: _Late) -> dict[str, Any]:
        """What a render sees; its helpers number their draws in order (each draws from its own fork)."""
        counter = itertools.count()
        helper = late.Helper

        def drawer(factory: Any) -> Helper:
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    gen = factory(*args, **kwargs)
                except RuleError as exc:  # `{{ integer(5, 1) }}`: built at draw time, so a draw error
                    raise DrawError(f"template: {exc}") from None
                return gen.draw(ctx.fork_key(template_key(next(counter))))

            return helper(call)

        def seeded_random(seq: Sequence[Any]) -> Any:
            items = list(seq)
            if not items:
                raise DrawError("template: `random` filter on an empty sequence")
            return items[ctx.fork_key(template_key(next(counter))).rng.randrange(len(items))]

        registry = late.REGISTRY
        scope: dict[str, Any] = {name: drawer(registry[name]) for name in self._names if name in registry}
        # only the built-in names the template reads are made (`_BUILTINS`: plain data, see there)
        scope.update((name, _BUILTINS[name](ctx, drawer)) for name in self._builtin_names)
        scope.update(ctx.captures)  # a capture the rule's author named wins over a built-in of that name
        missing = [n for n in self._unknown if n not in scope]
        if missing:
            raise missing_names_error(missing)
        scope["_synthgpt_pick"] = seeded_random
        return scope

    def __repr__(self) -> str:
        return f"template({self.source!r})"


class _Late:
    """What a render uses from the modules a template imports when it is built (the sandbox loads Jinja2;
    the registry imports this module): taken once, as an import statement in every render cost ~1.5 µs."""

    def __init__(self) -> None:
        from .registry import REGISTRY
        from .sandbox import Helper, render, template_data
        from .template_plain import NotPlain

        self.REGISTRY = REGISTRY
        self.Helper = Helper
        self.render = render
        self.template_data = template_data
        self.NotPlain = NotPlain


_LATE: _Late | None = None


def _load() -> _Late:
    global _LATE
    _LATE = _Late()
    return _LATE


def missing_names_error(missing: list[str]) -> DrawError:
    """The error of a render whose template reads names (not built in, not generators) no capture gave."""
    return DrawError(
        f"template uses undefined name(s) {', '.join(map(repr, missing))}: "
        "neither built in, nor a generator, nor a capture of the rule's matcher"
    )


def _data(req: Any) -> dict[str, Any]:
    return (_LATE or _load()).template_data(req)


# Each built-in name's value for a render, made only for the templates that read it (a dict of closures
# made per render cost more than most renders): plain data only, as the live pydantic objects carry public
# methods (parse_raw, parse_file, …). Called with the draw's context and its drawer of generators.
_BUILTINS: dict[str, Callable[[DrawContext, Callable[[Any], Any]], Any]] = {
    "request": lambda ctx, drawer: _data(ctx.request),
    "last_user": lambda ctx, drawer: ctx.request.last_user,
    "messages": lambda ctx, drawer: _data(ctx.request)["messages"],
    "system": lambda ctx, drawer: ctx.request.system,
    "model": lambda ctx, drawer: ctx.request.model,
    "tools": lambda ctx, drawer: _data(ctx.request)["tools"],
    "tool_results": lambda ctx, drawer: _data(ctx.request)["tool_results"],
    "turn": lambda ctx, drawer: ctx.request.turn,
    "call_index": lambda ctx, drawer: ctx.call_index,
    "now": lambda ctx, drawer: ctx.now,
    "captures": lambda ctx, drawer: dict(ctx.captures),
    "fake": lambda ctx, drawer: drawer(_fake),
    "tool_result": lambda ctx, drawer: (_LATE or _load()).Helper(_tool_result_reader(ctx.request)),
    "round": lambda ctx, drawer: _tool_rounds(ctx.request),
}


def _tool_rounds(req: Any) -> int:
    # from its own module, for the templates that read `round`: `from rules.matchers import …` on every
    # render asked that module for `__path__` through its `__getattr__`, which raises (~2 µs)
    from ..rules.derived import tool_rounds

    return tool_rounds(req)


def _tool_result_reader(req: Any) -> Any:
    def tool_result(name: str | None = None) -> Any:
        for m in reversed(req.tool_results):
            if name is None or req.tool_result_name(m) == name:
                try:
                    return loads_text(m.content)
                except ValueError:
                    return m.content
        which = "a tool" if name is None else f"tool {name!r}"
        raise DrawError(f"template: no result of {which} in the current turn")

    return tool_result


FakeKey = tuple[tuple[tuple[type, Any], ...], tuple[tuple[str, type, Any], ...]]


def fake_key(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> FakeKey:
    """The cache key of `fake(*args, **kwargs)`: types in it, as 1, 1.0 and True are equal keys but may
    ask Faker for different things."""
    return tuple((type(a), a) for a in args), tuple(sorted((k, type(v), v) for k, v in kwargs.items()))


def _fake(*args: Any, **kwargs: Any) -> Generator[Any]:
    """`Fake(...)`, built once per distinct call: building one checks its arguments by drawing a value,
    which doubled the Faker work of every `fake(...)` in a template."""
    try:
        return _cached_fake(*fake_key(args, kwargs))
    except TypeError:  # an unhashable argument: build it each time
        from .fake import Fake

        return Fake(*args, **kwargs)


@lru_cache(maxsize=1024)
def _cached_fake(args: tuple[tuple[type, Any], ...], kwargs: tuple[tuple[str, type, Any], ...]) -> Fake:
    from .fake import Fake

    return Fake(*(a for _, a in args), **{k: v for k, _, v in kwargs})
