"""What `from_schema` draws for a property by its name and format: the heuristic tables.

A string property called `email` gets an email, `company_name` a company, `created_at` a timestamp; a
number called `age` lands in 18..90. Kept apart from `schema.py`, which honours the schema's keywords: these
tables only decide what a value looks like, never whether it is valid.
"""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
import random
import re
import uuid
from collections.abc import Callable
from typing import Any

from ..model import ModelRequest
from ..seeding import label_key, mix_seed, token_from_seed
from .core import DrawContext
from .fake import fake_value
from .prose import sentence_about, topic

__all__ = [
    "FORMATS", "NUMBER_NAMES", "SEEDED_FORMATS", "WORDS", "by_name", "fit_text", "forked_drawer",
    "kind_drawer", "seed_drawer", "string_kind", "text_for_name", "text_of_kind",
]  # fmt: skip


_WORDS_TEXT = (
    "amber anchor apple breeze canyon cedar cobalt coral delta ember falcon fern garnet harbor hazel indigo "
    "juniper lagoon lantern maple meadow mint nova oak opal orbit pebble pine quartz raven river saffron "
    "sage sierra silver slate spruce summit tundra velvet willow zephyr"
)
WORDS = tuple(_WORDS_TEXT.split())
_EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)

_FAKER_ARGS: dict[str, tuple[str, dict[str, Any]]] = {
    "title": ("sentence", {"nb_words": 4}),
    "sentence": ("sentence", {"nb_words": 10}),
}


def _faker(seed: int, method: str) -> str:
    """Faker's `method` for a value drawn at `seed` (from the fork `"faker"` of it, as it always was)."""
    return _faker_drawer(method)(seed)


@functools.lru_cache(maxsize=256)
def _faker_drawer(method: str) -> Callable[[int], str]:
    """`_faker` for one method, its provider, arguments, table key and fork key looked up once."""
    return _faker_drawers(method)[2]


_FAKER_KEY = label_key("faker")
"""The fork of a value's seed its Faker value is drawn at."""


@functools.lru_cache(maxsize=256)
def _faker_drawers(method: str) -> tuple[int, Callable[[int], str], Callable[[int], str]]:
    """Faker's `method` drawn at a seed already forked (`mix_seed(seed, key)`): the key, that drawer, and
    the drawer from the value's seed (`_faker_drawer`)."""
    provider, kwargs = _FAKER_ARGS.get(method, (method, {}))
    table_key = repr(sorted(kwargs.items()))  # what `fake_value` would make of `kwargs` on every call
    fork_key = _FAKER_KEY
    title = method == "title"

    def at_fork(forked: int) -> str:
        value = str(fake_value(forked, "en_US", provider, kwargs, table_key))
        return value.rstrip(".") if title else value

    def draw(seed: int) -> str:  # (`at_fork` written out: one call fewer per value)
        value = str(fake_value(mix_seed(seed, fork_key), "en_US", provider, kwargs, table_key))
        return value.rstrip(".") if title else value

    return fork_key, at_fork, draw


def _moment(rng: random.Random, fmt: str) -> str:
    return (_EPOCH + dt.timedelta(seconds=rng.randrange(6 * 365 * 86400))).strftime(fmt)


# The formats Faker draws (from the value's seed alone): the format, and the Faker method that draws it
_FAKER_FORMATS = {
    **dict.fromkeys(("email", "idn-email"), "email"),
    **dict.fromkeys(("uri", "url", "iri", "uri-reference", "iri-reference"), "url"),
    **dict.fromkeys(("hostname", "idn-hostname"), "domain_name"),
}


def _faker_format(method: str) -> Callable[[random.Random, int], str]:
    return lambda r, s: _faker(s, method)


# Each format from the value's RNG and seed: a compiled schema (`schema_plan`) draws without a DrawContext
# per value; `FORMATS` is the same drawers for a context.
SEEDED_FORMATS: dict[str, Callable[[random.Random, int], str]] = {
    "date-time": lambda r, s: _moment(r, "%Y-%m-%dT%H:%M:%SZ"),
    "date": lambda r, s: _moment(r, "%Y-%m-%d"),
    "time": lambda r, s: _moment(r, "%H:%M:%SZ"),
    "uuid": lambda r, s: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "ipv4": lambda r, s: str(ipaddress.IPv4Address(r.getrandbits(32))),
    "ipv6": lambda r, s: str(ipaddress.IPv6Address(r.getrandbits(128))),
    **{fmt: _faker_format(method) for fmt, method in _FAKER_FORMATS.items()},
}


def _in_context(draw: Callable[[random.Random, int], str]) -> Callable[[DrawContext], str]:
    return lambda c: draw(c.rng, c.seed)


FORMATS: dict[str, Callable[[DrawContext], str]] = {k: _in_context(f) for k, f in SEEDED_FORMATS.items()}

# What a string property's name suggests, most specific first; the whole name and then its words from
# the last one back are looked up, so `company_name` is a company and `user_email` an email.
STRING_NAMES = tuple(
    (kind, frozenset(keys.split()))
    for kind, keys in (
        ("email", "email mail emailaddress"),
        ("uri", "url uri link website homepage href site"),
        ("image_url", "avatar image photo picture thumbnail logo"),
        ("uuid", "uuid guid"),
        ("phone_number", "phone mobile tel telephone fax phonenumber"),
        ("user_name", "username login handle nickname"),
        ("first_name", "firstname given givenname"),
        ("last_name", "lastname surname familyname"),
        ("company", "company companyname organization organisation employer org business"),
        ("product", "product productname item"),
        ("city", "city town origin destination departure arrival"),
        ("country", "country nationality"),
        ("state", "state province region"),
        ("street_address", "street address addr"),
        ("postcode", "zip zipcode postcode postal postalcode"),
        ("date-time", "datetime timestamp at created updated modified time"),
        ("date", "date birthday birthdate dob day"),
        ("ipv4", "ip ipaddress"),
        ("hostname", "host hostname domain"),
        ("color_name", "color colour"),
        ("currency_code", "currency"),
        ("language_name", "language lang"),
        ("job", "job occupation profession"),
        ("title", "title headline subject heading topic caption"),
        (
            "sentence",
            "description summary bio about content body text message comment note reason explanation "
            "answer details feedback review reasoning abstract excerpt instructions response",
        ),
        ("slug", "slug"),
        ("code", "code sku"),
        ("id", "id key token ref reference identifier"),
        ("word", "category tag label status type kind genre keyword role mode level priority"),
        ("name", "name fullname author customer user owner person contact recipient sender assignee"),
    )
)
NUMBER_NAMES = tuple(
    (span, frozenset(keys.split()))
    for span, keys in (
        ((18, 90), "age"),
        ((1970, 2030), "year"),
        ((1, 500), "price cost amount fee salary total balance"),
        ((0, 100), "count quantity qty num number size length score percent percentage"),
        ((1, 5), "rating stars"),
        ((-90, 90), "lat latitude"),
        ((-180, 180), "lon lng longitude"),
    )
)


@functools.lru_cache(maxsize=4096)
def by_name(name: str, table: tuple[tuple[Any, frozenset[str]], ...]) -> Any:
    # cached: a schema's property names recur in every answer drawn from it, and splitting them is ~35 µs
    words = re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower())
    for word in ["".join(words), *reversed(words)]:
        for value, keys in table:
            if word in keys or (word.endswith("s") and word[:-1] in keys):
                return value
    return None


def text_for_name(ctx: DrawContext, name: str, max_len: int | None = None) -> str:
    return text_of_kind(string_kind(name), ctx.rng, ctx.seed, ctx.request, max_len)


def string_kind(name: str) -> str:
    """What a string property called `name` holds (`text_of_kind` draws it)."""
    kind: str = by_name(name, STRING_NAMES) or "words"
    return kind


def text_of_kind(kind: str, rng: random.Random, seed: int, request: ModelRequest, max_len: int | None) -> str:
    """A `kind` string (see `string_kind`) drawn from `rng` and `seed`, the draw's RNG and seed."""
    return kind_drawer(kind, max_len)(rng, seed, request)


TextDrawer = Callable[[random.Random, int, ModelRequest], str]


_RNG_KINDS = frozenset(("sentence", "slug", "word", "product", "words"))
"""The kinds `kind_drawer` draws from the value's RNG (with the formats that do), not its seed alone."""


@functools.lru_cache(maxsize=1024)
def seed_drawer(kind: str) -> Callable[[int], str] | None:
    """What draws a `kind` string from the value's seed alone (Faker's kinds and formats, ids and codes),
    or None for a kind drawn from its RNG: `kind_drawer(kind, …)(rng, seed, request)` is `seed_drawer(kind)
    (seed)` whatever the RNG, so a compiled schema makes none for such a value."""
    if kind in _FAKER_FORMATS:
        return _faker_drawer(_FAKER_FORMATS[kind])
    if kind in SEEDED_FORMATS or kind in _RNG_KINDS:
        return None
    if kind in ("id", "code"):
        alphabet = (
            "abcdefghijkmnpqrstuvwxyz0123456789" if kind == "id" else "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        )
        size = 12 if kind == "id" else 8
        return lambda seed: token_from_seed(seed, size, alphabet)
    return _faker_drawer(kind)


@functools.lru_cache(maxsize=1024)
def forked_drawer(kind: str) -> tuple[int, Callable[[int], str]] | None:
    """For a `kind` string drawn at a fork of the value's seed (Faker's kinds and formats), the fork's key
    and what draws it there: `seed_drawer(kind)(seed)` is `drawer(mix_seed(seed, key))`, so a compiled
    schema takes that fork along with the property's own seed (`MixedSeeds.with_outputs`). None for every
    other kind (ids and codes hash the seed itself; `seed_drawer` has them)."""
    method = _FAKER_FORMATS.get(kind)
    if method is None:
        if kind in SEEDED_FORMATS or kind in _RNG_KINDS or kind in ("id", "code"):
            return None
        method = kind
    key, at_fork, _ = _faker_drawers(method)
    return key, at_fork


@functools.lru_cache(maxsize=1024)
def kind_drawer(kind: str, max_len: int | None) -> TextDrawer:
    """What draws a `kind` string of at most about `max_len` characters (see `text_of_kind`), its branch
    chosen once per kind (a compiled schema keeps one per property)."""
    seeded = seed_drawer(kind)
    if seeded is not None:
        return lambda rng, seed, request: seeded(seed)
    fmt = SEEDED_FORMATS.get(kind)
    if fmt is not None:
        return lambda rng, seed, request: fmt(rng, seed)
    if kind == "sentence":  # a summary or a description reads like the answer, about what was asked
        return lambda rng, seed, request: sentence_about(rng, topic(request.last_user), max_len)
    if kind in ("slug", "word", "product", "words"):

        def words(rng: random.Random, seed: int, request: ModelRequest) -> str:
            # (the count for "words" is drawn whatever the kind: every kind's draws stay as they were)
            picked = rng.sample(WORDS, {"slug": 3, "word": 1, "product": 2, "words": rng.randint(2, 4)}[kind])
            return (
                "-".join(picked)
                if kind == "slug"
                else " ".join(w.title() if kind == "product" else w for w in picked)
            )

        return words
    raise AssertionError(f"no drawer for kind {kind!r}")  # `seed_drawer` has every other kind


def fit_text(text: str, lo: int, hi: int | None, rng: random.Random) -> str:
    """Free text cut back at a word boundary or padded with words until its length is within bounds."""
    if hi is not None and len(text) > hi:
        cut = text[:hi]
        text = cut.rsplit(" ", 1)[0].rstrip() if " " in cut else cut
    if len(text) < lo:  # joined once at the end: adding word by word copied the text every time
        parts = [text] if text else []
        size = len(text)
        while size < lo:
            word = rng.choice(WORDS)
            size += len(word) + (1 if parts else 0)
            parts.append(word)
        text = " ".join(parts)
    if hi is not None:
        text = text[:hi]
    return text[:-1] + "x" if text.endswith(" ") else text
