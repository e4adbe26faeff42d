"""Faker's idea of "now", pinned to the injected clock while synthgpt draws a value.

Faker's date providers (`date_time`, `date`, `iso8601`, `date_of_birth`, `past_date`, `credit_card_expire`,
…) pick a point between a start and *the current time*, and a few locale providers (some `ssn`s, ru_RU
company numbers) count back from today: seeded alone, they still drift with the wall clock and with the
machine's timezone. Inside `pinned_now(t)` those modules see `t` (UTC) as now and UTC as the local
timezone; outside it they behave exactly as before, so other users of Faker in the same process are
unaffected. The pin is a context variable: safe across threads and asyncio tasks.
"""

from __future__ import annotations

import datetime as _dt
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Self

__all__ = ["pin_faker_modules", "pinned_now"]

_NOW: ContextVar[float | None] = ContextVar("synthgpt_faker_now", default=None)
_REAL_DATETIME = _dt.datetime
_REAL_DATE = _dt.date


class _DelegatingType(type):
    # Faker checks `isinstance(value, datetime)` on values callers pass in: real datetimes must still pass.
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.__mro__[1])


class _Datetime(_REAL_DATETIME, metaclass=_DelegatingType):
    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> Self:
        t = _NOW.get()
        if t is None:
            return super().now(tz)
        at = cls.fromtimestamp(t, _dt.UTC)
        return at.astimezone(tz) if tz is not None else at.replace(tzinfo=None)

    @classmethod
    def today(cls) -> Self:
        return cls.now()

    @classmethod
    def utcnow(cls) -> Self:
        return cls.now(_dt.UTC).replace(tzinfo=None)


class _Date(_REAL_DATE, metaclass=_DelegatingType):
    @classmethod
    def today(cls) -> Self:
        t = _NOW.get()
        if t is None:
            return super().today()
        day = _REAL_DATETIME.fromtimestamp(t, _dt.UTC)
        return cls(day.year, day.month, day.day)


_Datetime.__name__ = _Datetime.__qualname__ = "datetime"
_Date.__name__ = _Date.__qualname__ = "date"

_PINNED_DATETIME_MODULE = types.ModuleType("datetime")
_PINNED_DATETIME_MODULE.__dict__.update({**vars(_dt), "datetime": _Datetime, "date": _Date})


def _local_timezone(real: Any) -> Any:
    def local_timezone() -> Any:
        return _dt.UTC if _NOW.get() is not None else real()

    return local_timezone


_patched: set[str] = set()
_lock = threading.Lock()


def pin_faker_modules() -> None:
    """Route the loaded Faker provider modules' `datetime`/`date` through the pin (idempotent)."""
    with _lock:
        for name, module in list(sys.modules.items()):
            if not name.startswith("faker.providers") or name in _patched or module is None:
                continue
            _patched.add(name)
            ns = vars(module)
            for key, value in list(ns.items()):
                if value is _dt:
                    ns[key] = _PINNED_DATETIME_MODULE
                elif value is _REAL_DATETIME:
                    ns[key] = _Datetime
                elif value is _REAL_DATE:
                    ns[key] = _Date
            if callable(ns.get("_get_local_timezone")):
                ns["_get_local_timezone"] = _local_timezone(ns["_get_local_timezone"])


@contextmanager
def pinned_now(t: float) -> Iterator[None]:
    """Faker reads `t` (Unix seconds, UTC) as the current time inside this block."""
    token = _NOW.set(t)
    try:
        yield
    finally:
        _NOW.reset(token)
