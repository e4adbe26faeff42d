"""Faker-backed fields. One Faker instance per locale, re-seeded for every value from the draw's own seed.

The common clock-free providers (names, emails, companies, addresses, phone numbers, …) draw from a table
per (locale, provider, arguments) instead: `TABLE_SIZE` slots, slot `seed % TABLE_SIZE`, each filled the
first time it is asked for with the value Faker draws from that slot's own seed. A slot's value depends on
nothing but its key, so answers are the same in every process whichever slots it filled first; a process
drawing thousands of values stops calling Faker (~30-150 µs a value) once its tables are full, and one
drawing a few pays no more than before.

The en_US tables without arguments ship with synthgpt, drawn that way once (`faker_tables/`,
`scripts/faker_tables.py` writes them): a server that only needs those never imports Faker (~5 MB of its
memory, 45 ms), and their values stay what they are when a newer Faker changes its word lists.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Sequence
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RuleError, UnknownNameError
from ..jsonutil import dumps
from ..seeding import DrawRandom, derive_seed, first_outputs
from .core import DrawContext, Generator
from .faker_time import pin_faker_modules, pinned_now

if TYPE_CHECKING:
    from faker import Faker

__all__ = ["SHIPPED_TABLES", "TABLED_PROVIDERS", "TABLE_SIZE", "Fake", "draw_slot", "fake_value", "faker_for",
           "faker_providers"]  # fmt: skip

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


TABLE_SIZE = 1024
"""Slots per tabled provider: values of one provider repeat across a process after about this many."""
TABLED_PROVIDERS = frozenset(
    """
    name first_name last_name name_male name_female first_name_male first_name_female last_name_male
    last_name_female prefix suffix email safe_email free_email company_email user_name domain_name
    domain_word hostname url company company_suffix catch_phrase bs job address street_address street_name
    street_suffix building_number secondary_address city state state_abbr country country_code postcode
    zipcode phone_number color_name safe_color_name currency_code currency_name language_name word words
    sentence paragraph text title
    """.split()
)
"""Providers whose values never depend on the clock and are not identifiers: they draw from tables. Ids
(`bothify`, `uuid4`, `ean`, …) and dates stay drawn by Faker each time, so ids do not repeat after 1,024."""
_TABLES: dict[tuple[str, str, str], list[Any]] = {}
_UNSET = object()
SHIPPED_TABLES = Path(__file__).with_name("faker_tables")
"""`<locale>/<provider>.json`: a provider's table without arguments, `TABLE_SIZE` strings."""


def _shipped(locale: str, provider: str) -> list[Any] | None:
    """The table synthgpt ships for `provider` without arguments in `locale`, if it ships one."""
    try:
        values = json.loads((SHIPPED_TABLES / locale / f"{provider}.json").read_text("utf-8"))
    except FileNotFoundError:
        return None
    if not isinstance(values, list) or len(values) != TABLE_SIZE:  # a damaged install: draw instead
        return None
    return values


def draw_slot(locale: str, provider: str, kwargs: dict[str, Any], args: str, slot: int) -> Any:
    """What Faker draws for a table slot: from the slot's own seed, the clock pinned."""
    with pinned_now(_BUILD_TIME):
        fk = faker_for(derive_seed("faker-table", locale, provider, args, slot), locale)
        return _jsonable(getattr(fk, provider)(**kwargs))


def fake_value(seed: int, locale: str, provider: str, kwargs: dict[str, Any], key: str | None = None) -> Any:
    """The value of `provider` (with `kwargs`) for a draw seeded `seed`: from its table when tabled.

    `key` is `repr` of the sorted keyword arguments, when the caller keeps it.
    """
    if provider not in TABLED_PROVIDERS:
        return _jsonable(getattr(faker_for(seed, locale), provider)(**kwargs))
    args = key if key is not None else repr(sorted(kwargs.items()))
    table = _TABLES.get((locale, provider, args))
    if table is None:
        if len(_TABLES) >= 256:  # arguments built from data must not grow this without bound
            _TABLES.clear()
        shipped = _shipped(locale, provider) if args == "[]" else None
        table = _TABLES[(locale, provider, args)] = shipped or [_UNSET] * TABLE_SIZE
    slot = seed % TABLE_SIZE
    value = table[slot]
    if value is _UNSET:
        # the slot's own seed: the same value whoever fills it, in any order, in any process
        value = draw_slot(locale, provider, kwargs, args, slot)
        if isinstance(value, str):  # shared between answers: only immutable values are kept
            table[slot] = value
    return value


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
_ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _pattern(rng: random.Random, text: str, letters: str, digits: bool, letters_too: bool) -> str:
    """Faker's `numerify`/`lexify`/`bothify` rules, in one pass: # a digit, % 1-9, $ 2-9, ! a digit or
    nothing, @ 1-9 or nothing; ? a character of `letters`."""
    out: list[str] = []
    for ch in text:
        if digits and ch in "#%$!@":
            if ch == "#":
                out.append(str(rng.randrange(10)))
            elif ch == "%":
                out.append(str(rng.randrange(1, 10)))
            elif ch == "$":
                out.append(str(rng.randrange(2, 10)))
            elif rng.randrange(2):  # ! and @: half the time nothing
                out.append(str(rng.randrange(10) if ch == "!" else rng.randrange(1, 10)))
        elif letters_too and ch == "?":
            out.append(rng.choice(letters) if letters else "")
        else:
            out.append(ch)
    return "".join(out)


class _Pattern:
    """`_pattern` for one text and set of letters, read once into what it draws.

    Each of # % $ and ? (with letters) is one draw, `randrange` or `choice`, whose output `z` becomes an
    index, `(z * n) >> 64`, into its n characters: a digit is `str` of `randrange(10)`, `randrange(1, 10)`
    or `randrange(2, 10)`, i.e. one of the characters of `_DIGIT_PICKS`. A pattern takes all its draws at
    once (`DrawRandom.next64s`, `seeding.first_outputs`) and formats them in (`??-#####`: ~2x less work
    than one `randrange` at a time). ! and @ draw once or twice: a text with them (rare) is drawn by
    `_pattern`.
    """

    __slots__ = ("_args", "_format", "_picks")

    def __init__(self, text: str, letters: str, digits: bool, letters_too: bool) -> None:
        self._args = (text, letters, digits, letters_too)
        self._format = ""
        self._picks: tuple[tuple[str, int], ...] | None = None
        if (digits and ("!" in text or "@" in text)) or len(letters) > 1 << 32:
            return  # (`DrawRandom.choice` hands a sequence that long to `random.Random`)
        parts: list[str] = []
        picks: list[tuple[str, int]] = []
        for ch in text:
            chars = _DIGIT_PICKS.get(ch) if digits else None
            if chars is None and letters_too and ch == "?":
                if not letters:
                    continue  # nothing, and no draw
                chars = letters
            if chars is None:
                parts.append(ch.replace("%", "%%"))
            else:
                parts.append("%s")
                picks.append((chars, len(chars)))
        self._format = "".join(parts)
        self._picks = tuple(picks)

    def __call__(self, rng: random.Random) -> str:
        picks = self._picks
        if picks is None or type(rng) is not DrawRandom:  # any other RNG: its own draws, one at a time
            return _pattern(rng, *self._args)
        return self._filled(picks, rng.next64s(len(picks)))

    def at(self, seed: int) -> str:
        """What it draws with a new `DrawRandom(seed)`."""
        picks = self._picks
        if picks is None:
            return _pattern(DrawRandom(seed), *self._args)
        return self._filled(picks, first_outputs(seed, len(picks)))

    def _filled(self, picks: tuple[tuple[str, int], ...], outs: list[int]) -> str:
        return self._format % tuple([chars[(z * n) >> 64] for (chars, n), z in zip(picks, outs, strict=True)])


class _Choice:
    """`rng.choice(items)`; `at(seed)` is the choice of a new `DrawRandom(seed)`, without making it."""

    __slots__ = ("_items",)

    def __init__(self, items: tuple[str, ...]) -> None:
        self._items = items

    def __call__(self, rng: random.Random) -> str:
        return rng.choice(self._items)

    def at(self, seed: int) -> str:
        items = self._items
        return items[(first_outputs(seed, 1)[0] * len(items)) >> 64]


_DIGIT_PICKS = {"#": "0123456789", "%": "123456789", "$": "23456789"}
"""The characters `#`, `%` and `$` draw from: `str` of `randrange(10)`, `randrange(1, 10)`,
`randrange(2, 10)`, each the index its draw gives."""

# Providers drawn here from the draw's own RNG instead of by Faker (the same kinds of values, ~20x cheaper):
# the character patterns of any locale (whether each reads digits and `?`, its default text and letters),
# and en_US's day and month names (Faker takes them from a random datetime before the clock's now; any of
# the seven days is as likely).
_PATTERNS: dict[str, tuple[bool, bool, str, str]] = {
    "bothify": (True, True, "## ??", _ASCII_LETTERS),
    "numerify": (True, False, "###", ""),
    "lexify": (False, True, "????", _ASCII_LETTERS),
}
_NATIVE_EN_US = {"day_of_week": _Choice(_DAYS), "month_name": _Choice(_MONTHS)}


def _native(provider: str, locale: str, kwargs: dict[str, Any]) -> _Pattern | _Choice | None:
    """The native drawer of `provider` with these arguments, given the draw's RNG, if it has one that takes
    them as Faker does (any other argument fails `Fake`'s trial call with Faker)."""
    text, letters = kwargs.get("text", ""), kwargs.get("letters", "")
    if not isinstance(text, str) or not isinstance(letters, str):
        return None  # Faker takes any sequence of letters; these take text
    pattern = _PATTERNS.get(provider)
    if pattern is not None:
        digits, letters_too, default_text, default_letters = pattern
        if set(kwargs) - {"text", "letters"} or ("letters" in kwargs and not letters_too):
            return None
        return _Pattern(kwargs.get("text", default_text), kwargs.get("letters", default_letters), digits,
                        letters_too)  # fmt: skip
    found = _NATIVE_EN_US.get(provider) if locale == "en_US" else None
    return None if found is None or kwargs else found


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

    __slots__ = ("_key", "_native", "_table_key", "kwargs", "locale", "provider")

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
        self._key = repr(sorted(kwargs.items()))  # the table's key for these arguments
        self._native = _native(provider, locale, kwargs)
        # the key of its table in `_TABLES`, if it has one
        self._table_key = (locale, provider, self._key) if provider in TABLED_PROVIDERS else None
        # Fail at build time, not draw time, if the keyword arguments do not fit the provider.
        try:
            with pinned_now(_BUILD_TIME):
                getattr(faker_for(0, locale), provider)(**kwargs)
        except TypeError as exc:
            raise RuleError(f"fake({provider!r}): {exc}") from None

    def draw(self, ctx: DrawContext) -> Any:
        if self._native is not None:
            return self._native(ctx.rng)  # (a context's RNG may have drawn before)
        return self.at(ctx.seed, ctx.now)

    def at(self, seed: int, now: float) -> Any:
        """What `draw` gives in a new context (a fork) of this seed and clock reading: all such a value
        depends on, so a caller that knows a fork's seed (a template's n-th draw) need not build the fork."""
        if self._native is not None:
            return self._native.at(seed)  # what a new context's `rng` draws
        if self._table_key is not None:
            table = _TABLES.get(self._table_key)
            if table is not None:  # a filled slot is what `fake_value` gives, read here without a call
                value = table[seed % TABLE_SIZE]
                if value is not _UNSET:
                    return value
            return fake_value(seed, self.locale, self.provider, self.kwargs, self._key)
        # relative dates ("date_of_birth", "past_date", …) count from the injected clock, not the wall clock
        with pinned_now(now):
            value = getattr(faker_for(seed, self.locale), self.provider)(**self.kwargs)
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
