"""Turn the `match` and `generate` trees of a rule file into the objects the Python DSL builds.

A name with its arguments is written `{name: arguments}`: a list gives positional arguments, a mapping
keyword arguments, any other value the one positional argument, and `null`, `true`, `[]` or `{}` none.
A bare name (`always`, `prose`) takes no arguments. Inside generator arguments, a one-key mapping whose
key is a generator name is that generator (`{fake: city}`); other values are literals (`{just: …}` makes
anything literal). Every mistake becomes a RuleFileError at the offending node.
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from ..errors import RuleError, SchemaError, UnknownNameError, suggest
from ..generators import choice, just, objects, weighted
from ..generators.core import Generator
from ..generators.registry import REGISTRY
from ..generators.template import TEMPLATE_NAMES, Template
from . import matchers as m
from .locations import NodePath, RuleFileError, SourceMap

__all__ = ["MATCHERS", "Builder", "generator_names"]

# Every matcher function of the Python DSL, by the name it has there.
MATCHERS: dict[str, Callable[..., m.Matcher]] = {
    name: getattr(m, name)
    for name in m.__all__
    if name[0].islower() and name not in ("as_matcher", "where", "tool_rounds")
}
_COMBINATORS = ("all", "any", "not")

# Generators whose one argument is written whole: `{objects: {id: …, age: …}}`, `{choice: [a, b]}`.
_WHOLE = (objects, choice, weighted, just)
# Arguments taken verbatim, never read as generator specs (a JSON Schema has keys like `items`, `id`, …).
_RAW = {("from_schema", "schema"), ("just", "value")}
# Arguments whose mapping is always an object of fields, like `objects`: tool arguments such as
# `{id: 42}` are data, not the `id` generator.
_FIELDS = {("tool_call", "args")}


def generator_names() -> dict[str, str]:
    """Registered generator names, each with its call form and the summary of its documentation."""
    return {name: describe(name, factory) for name, factory in REGISTRY.items()}


def describe(name: str, factory: Callable[..., Any]) -> str:
    """`name(arg=default, …)` plus the first paragraph of the factory's own docstring (not inherited)."""
    params = []
    for p in _signature(factory).parameters.values():
        if p.name == "known_names":  # Template's hook for the loader itself, not for files
            continue
        stars: dict[Any, str] = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}
        text = stars.get(p.kind, "") + p.name
        params.append(text if p.default is p.empty else f"{text}={p.default!r}")
    own = factory.__dict__.get("__doc__") if inspect.isclass(factory) else factory.__doc__
    summary = " ".join(inspect.cleandoc(own).split("\n\n")[0].split()) if own else ""
    call = f"{name}({', '.join(params)})"
    return f"{call}: {summary}" if summary else call


@cache
def _signature(factory: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(factory)


def _no_args(value: Any) -> bool:
    return value is None or value is True or value == [] or value == {}


class Builder:
    """Builds the matchers and generators of one rule, remembering what the lints need."""

    def __init__(self, smap: SourceMap) -> None:
        self.smap = smap
        self.captures: set[str] = set()
        """Regex group names of the rule's matcher: what templates may read besides the built-ins."""
        self.templates: list[tuple[Template, NodePath]] = []

    def fail(self, at: NodePath, message: str, *, key: bool = False) -> RuleFileError:
        return self.smap.error(at, message, key=key)

    # ------------------------------------------------------------------------------------ matchers

    def matcher(self, node: Any, at: NodePath) -> m.Matcher:
        if isinstance(node, str):
            return self._named_matcher(node, None, at, key=False)
        if isinstance(node, list):
            if not node:
                raise self.fail(at, "an empty list matches nothing useful: write `always` or some matchers")
            return m.All(*(self.matcher(x, (*at, i)) for i, x in enumerate(node)))
        if isinstance(node, dict):
            if not node:
                raise self.fail(at, "an empty matcher: write `always` or `{name: arguments}`")
            parts = [self._named_matcher(str(k), v, (*at, k), key=True) for k, v in node.items()]
            return parts[0] if len(parts) == 1 else m.All(*parts)
        raise self.fail(at, f"a matcher is a name, `{{name: arguments}}` or a list of matchers, got {node!r}")

    def _named_matcher(self, name: str, args: Any, at: NodePath, *, key: bool) -> m.Matcher:
        if name in ("all", "any"):
            if not isinstance(args, list) or not args:
                raise self.fail(at, f"`{name}` takes a non-empty list of matchers", key=key)
            parts = [self.matcher(x, (*at, i)) for i, x in enumerate(args)]
            return m.All(*parts) if name == "all" else m.Any_(*parts)
        if name == "not":
            if args is None:
                raise self.fail(at, "`not` takes a matcher", key=key)
            return m.Not(self.matcher(args, at))
        factory = MATCHERS.get(name)
        if factory is None:
            err = UnknownNameError("matcher", name, [*MATCHERS, *_COMBINATORS])
            raise self.fail(at, str(err), key=key)
        pos, kw = self._arguments(name, factory, args, at, build=False)
        matcher: m.Matcher = self.construct(name, factory, pos, kw, at, key=key)
        test = getattr(matcher, "test", None)  # a text or header matcher's test: its regex's groups
        regex = getattr(test, "regex", None)
        if regex is not None:
            self.captures.update(regex.groupindex)
        return matcher

    # ---------------------------------------------------------------------------------- generators

    def generator(self, node: Any, at: NodePath) -> Generator[Any]:
        """A generator spec in generator position (`generate:`, `overrides` values)."""
        if isinstance(node, str):
            return self.named_generator(node, None, at, key=False)
        if isinstance(node, dict) and len(node) == 1:
            ((name, args),) = node.items()
            return self.named_generator(str(name), args, (*at, name), key=True)
        if isinstance(node, dict) and node:
            keys = ", ".join(map(str, node))
            raise self.fail(
                at,
                f"a generator is one `{{name: arguments}}` pair, got several keys ({keys}); "
                "for an object of fields write `{objects: {field: generator, …}}`",
            )
        raise self.fail(
            at, f"a generator is a name or `{{name: arguments}}`, got {node!r}; a fixed value is {{just: …}}"
        )

    def value(self, node: Any, at: NodePath) -> Any:
        """An argument value: a generator spec if it is one, else a literal with generators inside."""
        if isinstance(node, dict):
            if len(node) == 1:
                ((name, args),) = node.items()
                if isinstance(name, str) and name in REGISTRY:
                    return self.named_generator(name, args, (*at, name), key=True)
                hint = _typo_of_generator(name)
                if hint:  # data would be read silently; a one-letter slip of a generator name is not data
                    message = f"unknown generator {name!r} — did you mean {hint!r}?"
                    raise self.fail((*at, name), message, key=True)
            return {k: self.value(v, (*at, k)) for k, v in node.items()}
        if isinstance(node, list):
            return [self.value(v, (*at, i)) for i, v in enumerate(node)]
        return node

    def named_generator(self, name: str, args: Any, at: NodePath, *, key: bool) -> Generator[Any]:
        try:
            factory = REGISTRY[name]
        except KeyError:
            err = UnknownNameError("generator", name, REGISTRY)
            hint = "" if err.suggestion else " (a fixed value is `{just: …}`, fixed text `output: {text: …}`)"
            raise self.fail(at, f"{err}{hint}", key=key) from None
        pos, kw = self._arguments(name, factory, args, at, build=True)
        schema_at = (*at, "schema") if isinstance(args, dict) else (*at, 0) if isinstance(args, list) else at
        # a template's errors point at its text, a schema's at the schema node they are about
        gen = self.construct(name, factory, pos, kw, at, key=key and name != "template", schema_at=schema_at)
        if isinstance(gen, Template):
            self.templates.append((gen, at))
        return gen  # type: ignore[no-any-return]

    # ----------------------------------------------------------------------------------- arguments

    def _arguments(
        self, name: str, factory: Callable[..., Any], args: Any, at: NodePath, *, build: bool
    ) -> tuple[list[Any], dict[str, Any]]:
        sig = _signature(factory)
        params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        names = [p.name for p in params]

        def conv(value: Any, param: str | None, where: NodePath) -> Any:
            if not build or (name, param) in _RAW:
                return value
            if (name, param) in _FIELDS and isinstance(value, dict):
                return {k: self.value(v, (*where, k)) for k, v in value.items()}
            return self.value(value, where)

        if build and factory in _WHOLE:  # even `{just: null}` or `{just: []}`: the value itself
            if factory is objects:
                if not isinstance(args, dict):
                    raise self.fail(at, f"`{name}` takes a mapping of field names to generators", key=True)
                return [{k: self.value(v, (*at, k)) for k, v in args.items()}], {}
            return [conv(args, names[0], at)], {}
        if _no_args(args):
            return [], {}
        if isinstance(args, list):
            positional = [n for n in names if sig.parameters[n].kind != inspect.Parameter.KEYWORD_ONLY]
            return [
                conv(v, positional[i] if i < len(positional) else None, (*at, i)) for i, v in enumerate(args)
            ], {}
        if isinstance(args, dict):
            keys = [str(k) for k in args]
            var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
            one_gen = len(keys) == 1 and keys[0] in REGISTRY and keys[0] not in names
            if build and one_gen:  # `{lists: {fake: name}}`: a generator as the one argument
                return [self.value(args, at)], {}
            for k in keys:
                if k not in names and not var_kw:
                    hint = suggest(k, names)
                    tail = f" — did you mean {hint!r}?" if hint else (
                        f" (it takes {', '.join(names)})" if names else " (it takes none)"
                    )
                    raise self.fail((*at, k), f"`{name}` has no argument {k!r}{tail}", key=True)
            return [], {str(k): conv(v, str(k), (*at, k)) for k, v in args.items()}
        return [conv(args, names[0] if names else None, at)], {}

    def construct(
        self, name: str, factory: Callable[..., Any], pos: list[Any], kw: dict[str, Any],
        at: NodePath, *, key: bool = True, schema_at: NodePath | None = None,
    ) -> Any:
        arguments = _params(factory).bind(pos, kw)
        bound: inspect.BoundArguments | None = None
        if arguments is None:  # *args, positional-only parameters, or a mistake to word: inspect's binding
            sig = _signature(factory)
            try:
                bound = sig.bind(*pos, **kw)
            except TypeError as exc:
                raise self.fail(at, _binding_message(name, sig, pos, str(exc)), key=key) from None
            problem = _check_types(name, factory, bound.arguments, _var_positional(sig))
        else:
            problem = _check_types(name, factory, arguments, None)
        if problem is not None:
            raise self.fail(at, problem, key=key)
        # (a BoundArguments reads its `arguments` when asked: after `_check_types` converted them)
        args, kwargs = (bound.args, bound.kwargs) if bound is not None else ((), arguments or {})
        try:
            return factory(*args, **kwargs)
        except SchemaError as exc:
            if schema_at is None:
                raise self.fail(at, str(exc), key=key) from None
            parts = [p.replace("~1", "/").replace("~0", "~") for p in exc.pointer.split("/") if p]
            where = (*schema_at, *(int(p) if p.isdigit() else p for p in parts))
            raise self.fail(where, str(exc)) from None
        except RuleError as exc:
            raise self.fail(at, str(exc), key=key) from None
        except (TypeError, ValueError) as exc:
            raise self.fail(at, f"`{name}`: {exc}", key=key) from None

    # ----------------------------------------------------------------------------------- templates

    def check_templates(self) -> None:
        """Template names that are neither built in, nor generators, nor captures of the matcher."""
        for tpl, at in self.templates:
            unknown = [n for n in tpl.undeclared if n not in self.captures]
            if not unknown:
                continue
            known = [*TEMPLATE_NAMES, *REGISTRY, *self.captures]
            hint = suggest(unknown[0], known)
            tail = f" — did you mean {hint!r}?" if hint else (
                " (names come from the built-ins, the generators and the regex groups of the rule's matcher)"
            )
            raise self.fail(at, f"template uses undefined name {unknown[0]!r}{tail}")


@cache
def _adapters(factory: Callable[..., Any]) -> dict[str, TypeAdapter[Any]]:
    """Validators for the factory's annotated parameters; `Any`, type variables and iterables are left
    out (a generator or any value is welcome there, and an iterable would be consumed), and so are
    literals (the factories check those themselves, with a "did you mean")."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # pragma: no cover - an annotation that cannot be resolved checks nothing
        return {}
    out: dict[str, TypeAdapter[Any]] = {}
    for pname, hint in hints.items():
        if pname == "return" or hint is Any or isinstance(hint, TypeVar) or "Iterable" in str(hint) or (
            "Literal" in str(hint)
        ):
            continue
        with contextlib.suppress(Exception):  # a hint pydantic cannot check checks nothing
            out[pname] = TypeAdapter(hint, config=ConfigDict(arbitrary_types_allowed=True))
    return out


@dataclass(frozen=True, slots=True)
class _Params:
    """A factory's parameters, read once. Binding a rule file's arguments with them instead of
    `inspect.Signature.bind` (its general algorithm is most of the cost of building a matcher) is what
    lets 20,000 rules load in seconds; `bind` gives up on what it does not handle, and inspect's binding
    then binds it or words the mistake."""

    positional: tuple[str, ...]
    """The parameters a positional argument fills, in order."""
    keyword: frozenset[str]
    """The parameters a keyword argument may name."""
    required: frozenset[str]
    simple: bool
    """No positional-only parameter, no `*args`, no `**kwargs`: a call with keywords alone binds."""

    def bind(self, pos: list[Any], kw: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments by parameter name, or None when this cannot tell (see the class docstring)."""
        if not self.simple or len(pos) > len(self.positional):
            return None
        arguments = dict(zip(self.positional, pos, strict=False))
        for k, v in kw.items():
            if k in arguments or k not in self.keyword:
                return None
            arguments[k] = v
        if not self.required <= arguments.keys():
            return None
        return arguments


@cache
def _params(factory: Callable[..., Any]) -> _Params:
    ps = list(_signature(factory).parameters.values())
    kinds = {p.kind for p in ps}
    simple = not kinds & {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL,
                          inspect.Parameter.VAR_KEYWORD}  # fmt: skip
    return _Params(
        positional=tuple(p.name for p in ps if p.kind == p.POSITIONAL_OR_KEYWORD),
        keyword=frozenset(p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)),
        required=frozenset(p.name for p in ps if p.default is p.empty),
        simple=simple,
    )


def _var_positional(sig: inspect.Signature) -> str | None:
    return next((p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL), None)


def _check_types(
    name: str, factory: Callable[..., Any], arguments: dict[str, Any], var_positional: str | None
) -> str | None:
    """What is wrong with an argument whose type the factory's annotation rules out, if anything; the
    arguments are converted in place as YAML writes them (a list where a tuple is annotated, `1` for
    `1.0`).

    Factories trust their arguments' types: a rule file's `contains: [a]` or `lo: [1]` would otherwise
    build a matcher or generator that fails on the first request it sees, far from the file."""
    adapters = _adapters(factory)
    for pname, value in list(arguments.items()):
        adapter = adapters.get(pname)
        if adapter is None:
            continue
        var = pname == var_positional
        checked = []
        for v in value if var else (value,):
            try:
                checked.append(adapter.validate_python(v))
            except ValidationError as exc:
                shown = repr(v) if len(repr(v)) <= 60 else repr(v)[:59] + "…"
                what = "a generator" if isinstance(v, Generator) else f"{type(v).__name__} {shown}"
                return f"`{name}` argument `{pname}`: {exc.errors()[0]['msg'].lower()}, got {what}"
        arguments[pname] = tuple(checked) if var else checked[0]
    return None


def _typo_of_generator(key: Any) -> str | None:
    """The generator `key` is one slip away from (a letter added, dropped, changed or two swapped).

    Plurals (`items`, `choices`, `numbers`) and short keys (`ids`) are left alone: they are common in data.
    """
    if not isinstance(key, str) or len(key) < 4:
        return None
    for name in REGISTRY:
        if key != name + "s" and key + "s" != name and _one_edit(key, name):
            return name
    return None


def _one_edit(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _binding_message(name: str, sig: inspect.Signature, pos: list[Any], problem: str) -> str:
    if "missing a required argument" in problem:
        missing = problem.split(":", 1)[1].strip()
        return f"`{name}` needs argument {missing}"
    if "too many positional arguments" in problem:
        n = sum(1 for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        return f"`{name}` takes at most {n} argument{'s' if n != 1 else ''}, got {len(pos)}"
    return f"`{name}`: {problem}"
