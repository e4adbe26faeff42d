"""Argument checks, one message format: "<what> must be <rule>, got <value>" raised as a RuleError.

Every public constructor (generators, matchers, MockGPT, clocks) checks its arguments here when it is
built, so a wrong argument names itself at once instead of failing as a TypeError mid-draw or, worse,
being silently truncated (`int(1.5)`). `what` carries the caller's name (`` `lists`: min_size ``,
`MockGPT: seed`), so the message says where to look.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import RuleError

__all__ = ["MAX_ITEMS", "check_engine_args", "finite", "shown", "size_range", "whole"]

MAX_ITEMS = 10_000
"""The most items `lists` may draw and the most words or sentences a text generator may: far past any
useful answer, and small enough that one draw cannot stall the server."""


def shown(v: Any) -> str:
    """`repr(v)`, cut to 40 characters: enough to recognise the value in a message."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def whole(what: str, v: Any, lo: int | None = None, hi: int | None = None) -> int:
    """`v` if it is a whole number (a bool is not) within `lo`..`hi`; else a RuleError naming `what`."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise RuleError(f"{what} must be a whole number, got {shown(v)}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bound = f"<= {hi}" if lo is None else f">= {lo}" if hi is None else f"between {lo} and {hi}"
        raise RuleError(f"{what} must be a whole number {bound}, got {v}")
    return v


def finite(what: str, v: Any) -> float:
    """`v` if it is a finite number (a bool is not); else a RuleError naming `what`."""
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        raise RuleError(f"{what} must be a finite number, got {shown(v)}")
    return v


def size_range(name: str, lo: int, hi: int, what: str = "words") -> None:
    """`min_<what>`..`max_<what>` of the generator `name`: whole, 0 <= lo <= hi <= MAX_ITEMS."""
    whole(f"`{name}`: min_{what}", lo)
    whole(f"`{name}`: max_{what}", hi)
    if lo < 0 or lo > hi:
        raise RuleError(f"`{name}` takes 0 <= min <= max, got {lo} and {hi}")
    if hi > MAX_ITEMS:
        raise RuleError(f"`{name}` takes at most {MAX_ITEMS} {what}, got max_{what}={hi}")


def check_engine_args(seed: Any, context_window: Any = None, journal_size: Any = 1000) -> int:
    """MockGPT's seed as an int, once every constructor argument is checked; a RuleError for the first
    wrong one (a seed like `"abc"`, `1.5` or `True`, a window that can hold nothing)."""
    for what, v, lo in (
        ("seed", seed, None),
        ("context_window", context_window, 1),
        ("journal_size", journal_size, 0),
    ):
        if v is None and what == "context_window":
            continue
        whole(f"MockGPT: {what}", v)
        if lo is not None and v < lo:
            raise RuleError(f"MockGPT: {what} must be >= {lo}, got {v}")
    return int(seed)
