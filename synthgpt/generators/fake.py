"""Faker-backed fields. One Faker instance per locale, re-seeded for every value from the draw's own seed."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from ..errors import RuleError, UnknownNameError
from ..jsonutil import dumps
from .core import DrawContext, Generator
from .faker_time import pin_faker_modules, pinned_now

if TYPE_CHECKING:
    from faker import Faker

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


class _FakerRandom(random.Random):
    """The Mersenne Twister Faker always uses, drawing the same values, minus a cost Faker pays per value.

    Faker's weighted pools (last names, first names, …) hand `choices` their weights on every call, and
    `choices` sums the ~1,000 weights again each time: ~30 µs a name. The running sums are kept here per
    population instead (Faker passes the same cached key tuple each time; the weights beside it never
    change), and `choices` given `cum_weights` draws exactly what it draws given `weights`.
    """

    def __init__(self) -> None:
        super().__init__(0)
        self._cum: dict[int, tuple[Sequence[Any], list[float]]] = {}

    def choices(  # type: ignore[override]
        self,
        population: Sequence[Any],
        weights: Sequence[float] | None = None,
        *,
        cum_weights: Sequence[float] | None = None,
        k: int = 1,
    ) -> list[Any]:
        if weights is not None and cum_weights is None and type(population) is tuple and len(population) > 16:
            hit = self._cum.get(id(population))
            # the population itself is kept in the entry, so its id cannot be reused by another object
            if hit is None or hit[0] is not population or len(hit[1]) != len(weights):
                if len(self._cum) >= 256:  # a provider building a new pool per call must not grow this
                    self._cum.clear()
                hit = self._cum[id(population)] = (population, list(accumulate(weights)))
            return super().choices(population, cum_weights=hit[1], k=k)
        return super().choices(population, weights, cum_weights=cum_weights, k=k)


def faker_for(seed: int, locale: str = "en_US") -> Faker:
    """This thread's Faker for `locale`, seeded with `seed`: use it at once, for one value."""
    cache_: dict[str, tuple[Faker, random.Random]] | None = getattr(_local, "fakers", None)
    if cache_ is None:
        cache_ = _local.fakers = {}
    hit = cache_.get(locale)
    if hit is None:
        from faker import Faker  # imported with the first Faker value: ~45 ms and ~5 MB a server may not need

        fk = Faker(locale)
        rng = fk.random = _FakerRandom()  # type: ignore[attr-defined]  # a property its stub omits
        hit = cache_[locale] = (fk, rng)
        pin_faker_modules()  # the locale's provider modules are loaded now
    hit[1].seed(seed)  # what `seed_instance` does, without its per-call proxy walk
    return hit[0]


@cache
def faker_providers(locale: str = "en_US") -> frozenset[str]:
    from faker import Faker

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
        return sorted((_jsonable(v) for v in value), key=lambda v: dumps(v, allow_nan=True))
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
