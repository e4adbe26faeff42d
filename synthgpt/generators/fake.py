"""Faker-backed fields. One Faker instance per locale, re-seeded for every value from the draw's own seed."""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from faker import Faker

from ..errors import RuleError, UnknownNameError
from ..jsonutil import dumps
from .core import DrawContext, Generator
from .faker_time import pin_faker_modules, pinned_now

__all__ = ["Fake", "faker_for", "faker_providers"]

_local = threading.local()
_BUILD_TIME = 1_767_225_600.0  # any fixed instant: the build-time trial call's value is thrown away
# Methods of a Faker instance that are not data providers.
_NOT_PROVIDERS = frozenset(
    {
        "seed",
        "seed_instance",
        "seed_locale",
        "add_provider",
        "get_providers",
        "provider",
        "set_formatter",
        "get_formatter",
        "format",
        "parse",
        "set_arguments",
        "get_arguments",
        "del_arguments",
        "random",
        "items",
        "weights",
        "locales",
        "factories",
        "optional",
        "unique",
        "enum",
        "xml",
        "binary",
        "image",
        "tar",
        "zip",
        "json_bytes",
    }
)


def faker_for(seed: int, locale: str = "en_US") -> Faker:
    """This thread's Faker for `locale`, seeded with `seed`: use it at once, for one value."""
    cache_: dict[str, Faker] | None = getattr(_local, "fakers", None)
    if cache_ is None:
        cache_ = _local.fakers = {}
    fk = cache_.get(locale)
    if fk is None:
        fk = cache_[locale] = Faker(locale)
        pin_faker_modules()  # the locale's provider modules are loaded now
    fk.seed_instance(seed)
    return fk


@cache
def faker_providers(locale: str = "en_US") -> frozenset[str]:
    fk = Faker(locale)
    pin_faker_modules()
    return frozenset(
        n
        for n in dir(fk)
        if not n.startswith("_") and n not in _NOT_PROVIDERS and callable(getattr(fk, n, None))
    )


class Fake(Generator[Any]):
    """Any Faker provider by name, with its keyword arguments: fake("name"), fake("date", pattern="%Y")."""

    __slots__ = ("kwargs", "locale", "provider")

    def __init__(self, provider: str, locale: str = "en_US", **kwargs: Any) -> None:
        try:
            known = faker_providers(locale)
        except AttributeError as exc:  # Faker raises this for an unknown locale
            raise RuleError(f"unknown faker locale {locale!r}") from exc
        if provider not in known:
            raise UnknownNameError("faker provider", provider, known)
        if provider == "passport_dates" and "birthday" not in kwargs:
            # its default birthday is the real date Faker was imported on
            raise RuleError("fake('passport_dates') needs birthday=<a date>; or use fake('passport_full')")
        self.provider = provider
        self.locale = locale
        self.kwargs = kwargs
        # Fail at build time, not draw time, if the keyword arguments do not fit the provider.
        try:
            with pinned_now(_BUILD_TIME):
                getattr(faker_for(0, locale), provider)(**kwargs)
        except TypeError as exc:
            raise RuleError(f"fake({provider!r}): {exc}") from None

    def draw(self, ctx: DrawContext) -> Any:
        # relative dates ("date_of_birth", "past_date", …) count from the injected clock, not the wall clock
        with pinned_now(ctx.now):
            value = getattr(faker_for(ctx.seed, self.locale), self.provider)(**self.kwargs)
        return _jsonable(value)

    def __repr__(self) -> str:
        args = [repr(self.provider)]
        if self.locale != "en_US":
            args.append(f"locale={self.locale!r}")
        args += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"fake({', '.join(args)})"


def _jsonable(value: Any) -> Any:
    # dates, decimals and the like become strings so answers always serialise to JSON
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):  # set order follows the per-process string hash: sort it
        return sorted((_jsonable(v) for v in value), key=lambda v: dumps(v))
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
