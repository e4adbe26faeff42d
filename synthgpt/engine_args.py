"""Checks of MockGPT's constructor arguments, kept apart from the engine so they can be tested alone.

`MockGPT.__init__` calls `check_engine_args(seed, context_window, journal_size)` first: a
wrong seed (`"abc"`, `1.5`, `True`) or a window that can hold nothing is then a RuleError naming the
argument, instead of a silently truncated seed (`int(1.5)`) or a request failing later.
"""

from __future__ import annotations

from typing import Any

from .errors import RuleError

__all__ = ["check_engine_args"]


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def check_engine_args(seed: Any, context_window: Any = None, journal_size: Any = 1000) -> int:
    """The seed as an int, once every argument is checked; a RuleError for the first wrong one."""
    for what, v, lo, optional in (
        ("seed", seed, None, False),
        ("context_window", context_window, 1, True),
        ("journal_size", journal_size, 0, False),
    ):
        if v is None and optional:
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            raise RuleError(f"MockGPT: {what} must be a whole number, got {_shown(v)}")
        if lo is not None and v < lo:
            raise RuleError(f"MockGPT: {what} must be >= {lo}, got {v}")
    return int(seed)
