"""Clocks are injected: generation reads time only through one of these."""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol, runtime_checkable

from ._validation import finite

__all__ = ["Clock", "FixedClock", "StepClock", "SystemClock", "parse_clock"]


def _num(x: float) -> str:
    # reprs must rebuild the clock: `:g` would print 1767225600 as 1.76723e+09
    return str(int(x)) if x.is_integer() else repr(x)


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class FixedClock:
    """Always the same instant: the deterministic default."""

    __slots__ = ("_t",)

    def __init__(self, t: float = 1_767_225_600) -> None:  # 2026-01-01T00:00:00Z
        self._t = float(finite("FixedClock: t", t))

    def now(self) -> float:
        return self._t

    def __repr__(self) -> str:
        return f"FixedClock({_num(self._t)})"


class StepClock:
    """Advances by `step` seconds on every read.

    Answers then depend on how many answers came before: deterministic for a fixed call order only.
    """

    def __init__(self, start: float = 1_767_225_600, step: float = 1.0) -> None:
        self._start = float(finite("StepClock: start", start))
        self._step = float(finite("StepClock: step", step))
        self._reads = 0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            t = self._start + self._reads * self._step
            self._reads += 1
        return t

    def peek(self) -> float:
        """The reading the next `now()` will give, without advancing (what `explain` shows)."""
        with self._lock:
            return self._start + self._reads * self._step

    def __repr__(self) -> str:
        return f"StepClock({_num(self._start)}, step={_num(self._step)})"


class SystemClock:
    """The wall clock. Outputs then carry real `created` values and are no longer byte-identical."""

    def now(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "SystemClock()"


def _finite(text: str) -> float:
    value = float(text)  # ValueError for "" and non-numbers
    if not math.isfinite(value):  # FixedClock(nan) would only fail later, at the first `created`
        raise ValueError(text)
    return value


def parse_clock(spec: str) -> Clock:
    """`fixed`, `fixed:<unix-seconds>`, `step:<start>[:<step>]` or `system` (the CLI's and rule files' form).

    Anything else, including an empty or non-finite number, is a ValueError naming the accepted forms.
    """
    kind, colon, rest = spec.partition(":")
    try:
        if kind == "fixed":
            return FixedClock(_finite(rest)) if colon else FixedClock()
        if kind == "step":
            if not colon:
                return StepClock()
            start, colon, step = rest.partition(":")
            return StepClock(_finite(start), _finite(step) if colon else 1.0)
    except ValueError:
        pass
    else:
        if spec == "system":
            return SystemClock()
    raise ValueError(f"bad clock {spec!r}: use fixed, fixed:<unix-seconds>, step:<start>[:<step>] or system")
