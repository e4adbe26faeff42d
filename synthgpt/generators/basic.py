"""Scalar generators: constants, numbers, choices and seeded identifiers."""

from __future__ import annotations

import uuid as _uuid
from collections.abc import Sequence
from typing import Any

from .._validation import finite, shown, whole
from ..errors import RuleError
from ..seeding import token_from_seed
from .core import DrawContext, Generator, _num, lift, snapshot

__all__ = ["Boolean", "Choice", "Id", "Integer", "Number", "Uuid"]


class Integer(Generator[int]):
    __slots__ = ("hi", "lo")

    def __init__(self, lo: int = 0, hi: int = 100) -> None:
        whole("`integer`: lo", lo)
        whole("`integer`: hi", hi)
        if lo > hi:
            raise RuleError(f"`integer` takes `lo` <= `hi`, got {lo} > {hi}")
        self.lo = lo
        self.hi = hi

    def draw(self, ctx: DrawContext) -> int:
        return ctx.rng.randint(self.lo, self.hi)

    def __repr__(self) -> str:
        return f"integer({self.lo}, {self.hi})"


class Number(Generator[float]):
    __slots__ = ("decimals", "hi", "lo")

    def __init__(self, lo: float = 0.0, hi: float = 1.0, decimals: int | None = 2) -> None:
        finite("`number`: lo", lo)
        finite("`number`: hi", hi)
        if decimals is not None:
            whole("`number`: decimals", decimals)
        if lo > hi:
            raise RuleError(f"`number` takes `lo` <= `hi`, got {lo} > {hi}")
        if decimals is not None and not 0 <= decimals <= 15:
            raise RuleError(f"`number` takes 0 <= decimals <= 15, got {decimals}")
        self.lo = float(lo)
        self.hi = float(hi)
        self.decimals = decimals

    def draw(self, ctx: DrawContext) -> float:
        v = ctx.rng.uniform(self.lo, self.hi)
        if self.decimals is not None:
            v = min(max(round(v, self.decimals), self.lo), self.hi)
        return v

    def __repr__(self) -> str:
        return f"number({_num(self.lo)}, {_num(self.hi)}, decimals={self.decimals})"


class Boolean(Generator[bool]):
    __slots__ = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= finite("`boolean`: p", p) <= 1.0:
            raise RuleError(f"`boolean` takes a probability 0 <= p <= 1, got {p}")
        self.p = p

    def draw(self, ctx: DrawContext) -> bool:
        return ctx.rng.random() < self.p

    def __repr__(self) -> str:
        return "boolean()" if self.p == 0.5 else f"boolean({_num(self.p)})"


class Choice(Generator[Any]):
    """One of fixed values (generators among them are drawn)."""

    __slots__ = ("options",)

    def __init__(self, options: Sequence[Any]) -> None:
        if isinstance(options, str) or not isinstance(options, Sequence) or not options:
            raise RuleError("`choice` takes a non-empty list of options")
        self.options = tuple(snapshot(o) for o in options)  # dict/list options: copies, not the caller's

    def draw(self, ctx: DrawContext) -> Any:
        i = ctx.rng.randrange(len(self.options))
        opt = self.options[i]
        return lift(opt).draw(ctx.fork(("choice", i))) if isinstance(opt, Generator | dict | list) else opt

    def __repr__(self) -> str:
        return f"choice({list(self.options)!r})"


class Id(Generator[str]):
    """`prefix` + a seeded base-62 token, e.g. id("user") -> "user_4fQ2…"."""

    __slots__ = ("length", "prefix", "sep")

    def __init__(self, prefix: str = "", length: int = 24, sep: str = "_") -> None:
        for what, text in (("prefix", prefix), ("sep", sep)):
            if not isinstance(text, str):
                raise RuleError(f"`id`: {what} must be a string, got {shown(text)}")
        if not 1 <= whole("`id`: length", length) <= 256:
            raise RuleError(f"`id` takes 1 <= length <= 256, got {length}")
        self.prefix = prefix
        self.length = length
        self.sep = sep

    def draw(self, ctx: DrawContext) -> str:
        token = token_from_seed(ctx.rng.getrandbits(64), self.length)
        return f"{self.prefix}{self.sep}{token}" if self.prefix else token

    def __repr__(self) -> str:
        sep = "" if self.sep == "_" else f", sep={self.sep!r}"
        return f"id({self.prefix!r}, length={self.length}{sep})"


class Uuid(Generator[str]):
    """A version-4-shaped UUID whose bits come from the seed (never the uuid module's random ones)."""

    __slots__ = ()

    def draw(self, ctx: DrawContext) -> str:
        return str(_uuid.UUID(int=ctx.rng.getrandbits(128), version=4))

    def __repr__(self) -> str:
        return "uuid()"
