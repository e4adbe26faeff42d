"""Templates that are only text, names and calls with constant arguments, rendered without Jinja.

Most rule templates are a sentence with `{{ fake('name') }}`, `{{ last_user }}` or `{{ integer(1, 6) }}`
in it. Jinja renders those through a new context per render and `Context.call` per call (the sandbox's
checks, then its look-ups of how to pass a context), several times the work of the draws themselves. Such a
template is read once into pieces (`plain_pieces`), and `plain_chunks` yields what Jinja's compiled code
yields for it, chunk for chunk: the text between expressions (adjacent text joined, as Jinja joins it),
`str()` of each name's value and of each call's result, calls made in the same order (so each draw gets
the same `("template", i)` fork). Whatever such a template could do that this does not (a name that is not
in the scope, a capture standing where a helper was, a callable that raises StopIteration) raises
`NotPlain`, and the caller renders the template with Jinja from the start.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import nodes

from ..errors import DrawError, RuleError
from ..seeding import mix_seed
from .core import DrawContext
from .sandbox import Helper
from .template import FakeKey, _cached_fake, fake_key, template_key

__all__ = ["Call", "NotPlain", "Piece", "plain_chunks", "plain_pieces"]

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


def plain_chunks(
    pieces: tuple[Piece, ...], scope: Mapping[str, Any], ctx: DrawContext, counter: itertools.count[int]
) -> Iterator[str]:
    """The chunks Jinja would yield for `pieces` under `scope`; `counter` numbers the draws, shared with
    the scope's helpers."""
    fake_is_builtin = "fake" not in ctx.captures  # a capture named `fake` stands where the helper was
    for piece in pieces:
        if isinstance(piece, str):
            yield piece
            continue
        name, args, kwargs, key = piece
        try:
            if args is _NAME:
                if name not in scope:
                    raise NotPlain
                yield str(scope[name])
            elif key is not None and fake_is_builtin:
                try:
                    gen = _cached_fake(*key)
                except RuleError as exc:
                    raise DrawError(f"template: {exc}") from None
                # what the draw's fork gives, from its seed: no context made for it
                yield str(gen.at(mix_seed(ctx.seed, template_key(next(counter))), ctx.now))
            else:
                fn = scope.get(name)
                if type(fn) is not Helper:
                    raise NotPlain
                yield str(fn(*args, **kwargs))
        except StopIteration:  # Jinja makes it an undefined value, whose error Jinja's render gives
            raise NotPlain from None
