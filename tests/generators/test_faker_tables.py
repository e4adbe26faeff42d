"""Faker's common providers from per-process tables, and the character patterns drawn natively: the same
values in any fill order and any process, ids never from a table, arguments kept apart."""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import sys
from typing import Any

import pytest

from synthgpt import generators as g
from synthgpt.generators.core import DrawContext
from synthgpt.generators.fake import _TABLES, TABLE_SIZE, TABLED_PROVIDERS, Fake, fake_value
from synthgpt.model import ModelRequest

_DRAW = """
import json
from synthgpt import generators as g
print(json.dumps({{s: g.fake("name").example(s) for s in {seeds}}}))
"""


def _values(seeds: list[int]) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", _DRAW.format(seeds=seeds)], capture_output=True, text=True, check=True
    ).stdout
    return dict(json.loads(out))


def test_a_slot_holds_the_same_value_whichever_order_the_slots_fill() -> None:
    forward = [*range(40), *range(TABLE_SIZE, TABLE_SIZE + 40)]
    assert _values(forward) == _values(forward[::-1])


def test_table_values_are_drawn_once_and_shared() -> None:
    _TABLES.clear()
    a = fake_value(3, "en_US", "company", {})
    assert fake_value(3 + TABLE_SIZE, "en_US", "company", {}) == a  # the same slot
    assert len({fake_value(s, "en_US", "company", {}) for s in range(200)}) > 150
    # keyword arguments are part of the key
    assert fake_value(3, "en_US", "sentence", {"nb_words": 4}) != fake_value(3, "en_US", "sentence", {})


def test_ids_and_dates_are_not_tabled() -> None:
    assert "bothify" not in TABLED_PROVIDERS and "uuid4" not in TABLED_PROVIDERS
    assert "date" not in TABLED_PROVIDERS and "day_of_week" not in TABLED_PROVIDERS
    ids = {g.fake("uuid4").example(s) for s in range(3 * TABLE_SIZE)}
    assert len(ids) == 3 * TABLE_SIZE


def test_character_patterns_follow_fakers_rules() -> None:
    values = [g.fake("bothify", text="??-#####").example(s) for s in range(300)]
    assert all(re.fullmatch(r"[A-Za-z]{2}-\d{5}", v) for v in values)
    assert len(set(values)) == 300
    odd = [g.fake("numerify", text="%$!@").example(s) for s in range(300)]
    assert all(re.fullmatch(r"[1-9][2-9]\d?[1-9]?", v) for v in odd)
    assert {len(v) for v in odd} == {2, 3, 4}
    assert all(set(g.fake("lexify", text="????", letters="AB").example(s)) <= {"A", "B"} for s in range(50))
    assert g.fake("bothify", text="no pattern").example(0) == "no pattern"


def test_day_and_month_names() -> None:
    days = {g.fake("day_of_week").example(s) for s in range(200)}
    assert days == {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    assert len({g.fake("month_name").example(s) for s in range(400)}) == 12


# ------------------------------------------------------------------------------ the tables synthgpt ships

def _shipped_version() -> str:
    from synthgpt.generators.fake import SHIPPED_TABLES

    return (SHIPPED_TABLES / "FAKER_VERSION").read_text().strip()


def test_every_shipped_table_is_a_full_table_of_strings_of_a_tabled_provider() -> None:
    from synthgpt.generators.fake import SHIPPED_TABLES

    files = sorted((SHIPPED_TABLES / "en_US").glob("*.json"))
    assert {f.stem for f in files} <= TABLED_PROVIDERS and len(files) >= 40
    for f in files:
        values = json.loads(f.read_text("utf-8"))
        assert len(values) == TABLE_SIZE and all(isinstance(v, str) and v for v in values), f.name


def test_the_shipped_tables_hold_what_faker_draws_for_their_slots() -> None:
    """With the Faker that drew them, every shipped slot is the value a server filling the slot itself
    would draw (a sample of slots per provider). A newer Faker may draw other values: the shipped ones
    are kept, which is the point; rewrite them with scripts/faker_tables.py to take its values."""
    import faker
    import pytest

    from synthgpt.generators.fake import SHIPPED_TABLES, draw_slot

    drew, installed = _shipped_version(), faker.VERSION
    if installed != drew:
        pytest.skip(f"the tables were drawn with Faker {drew}; Faker {installed} is installed")
    for f in sorted((SHIPPED_TABLES / "en_US").glob("*.json")):
        values = json.loads(f.read_text("utf-8"))
        for slot in (0, 1, 511, 1023, *range(100, 1000, 97)):
            assert values[slot] == draw_slot("en_US", f.stem, {}, "[]", slot), (f.stem, slot)


_NO_FAKER = """
import sys
from synthgpt import MockGPT
req = {"model": "m", "messages": [{"role": "user", "content": "a customer"}], "response_schema": {"schema": {
    "type": "object", "required": ["name", "email", "city", "street_address", "postcode", "country", "phone"],
    "properties": {k: {"type": "string"} for k in
                   ("name", "email", "city", "street_address", "postcode", "country", "phone")}}}}
out = MockGPT(seed=1).generate(req)
print("faker" in sys.modules, out.text)
"""


def test_a_structured_output_of_common_fields_needs_no_faker() -> None:
    """Names, emails, addresses and phone numbers come from the shipped tables: Faker (~5 MB, 45 ms) is
    not imported, and the values are the same in every process."""
    command = [sys.executable, "-c", _NO_FAKER]
    runs = [subprocess.run(command, capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    imported, text = runs[0].split(" ", 1)
    assert imported == "False", text
    doc = json.loads(text)
    assert re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", doc["email"]) and doc["name"] and doc["city"]


@pytest.mark.parametrize(
    "provider, kwargs",
    [("name", {}), ("city", {}), ("bothify", {"text": "??-###"}), ("day_of_week", {}),
     ("pyint", {"min_value": 1, "max_value": 9}), ("date_of_birth", {})],
)
def test_a_value_at_a_seed_is_what_a_fork_of_that_seed_draws(provider: str, kwargs: dict[str, Any]) -> None:
    """`Fake.at(seed, now)`: the template's plain path draws a fork's value without making the fork."""
    fake = Fake(provider, **kwargs)
    parent = DrawContext(ModelRequest(), 77, now=1_767_225_600.0)
    for key in range(40):
        fork = parent.fork_key(key * 0x9E3779B97F4A7C15 % 2**64)
        assert fake.at(fork.seed, fork.now) == fake.draw(fork)


_PATTERN_TEXTS = ["??-#####", "## ??", "%$#?", "", "no pattern", "100% #", "%s ?#", "%(x)s #", "!@#", "a!b",
                  "????", "#" * 70, "?#?"]  # fmt: skip
_PATTERN_LETTERS = ["", "A", "AB", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "é%ü"]


def test_a_compiled_pattern_draws_what_the_pattern_rules_draw() -> None:
    """`_Pattern` (the text read once, its draws taken at once) gives `_pattern`'s value and leaves the RNG
    where `_pattern` leaves it; `at(seed)` is its value with a new `DrawRandom(seed)`."""
    from synthgpt.generators.fake import _Pattern, _pattern
    from synthgpt.seeding import DrawRandom

    seeds = [*range(60), -1, 2**64, 2**70 + 5, -(2**65)]
    for text in _PATTERN_TEXTS:
        for letters in _PATTERN_LETTERS:
            for digits in (True, False):
                for letters_too in (True, False):
                    pattern = _Pattern(text, letters, digits, letters_too)
                    for seed in seeds:
                        rng, reference = DrawRandom(seed), DrawRandom(seed)
                        rng.random()  # a context's RNG may have drawn before
                        reference.random()
                        expected = _pattern(reference, text, letters, digits, letters_too)
                        assert pattern(rng) == expected
                        assert rng.getstate() == reference.getstate()
                        fresh = _pattern(DrawRandom(seed), text, letters, digits, letters_too)
                        assert pattern.at(seed) == fresh
    # any other RNG draws one character at a time, as before
    mt = random.Random(3)
    assert _Pattern("??-##", "AB", True, True)(mt) == _pattern(random.Random(3), "??-##", "AB", True, True)


def test_a_day_or_month_at_a_seed_is_a_new_rngs_choice() -> None:
    from synthgpt.generators.fake import _DAYS, _MONTHS, _Choice
    from synthgpt.seeding import DrawRandom

    for items in (_DAYS, _MONTHS):
        choice = _Choice(items)
        for seed in [*range(500), -1, 2**64 + 9]:
            assert choice.at(seed) == DrawRandom(seed).choice(items)
            assert choice(DrawRandom(seed)) == DrawRandom(seed).choice(items)


# Digests of 500 `example(seed)` values and 500 `at(seed * 7919, 0)` values of each natively drawn provider,
# recorded before the patterns were compiled (`_pattern` one character at a time, a new `DrawRandom` each).
_NATIVE_DIGESTS = {
    ("bothify", ()): "a033bcf51f0c85bb",
    ("bothify", (("text", "??-#####"),)): "dadd67c546a3e1d9",
    ("bothify", (("letters", "AB"), ("text", "%$#?!@ 100%"))): "2de690ec5616e974",
    ("numerify", (("text", "#%$"),)): "365c766e4ddc53ac",
    ("lexify", (("letters", "é%"), ("text", "?#?"))): "651608d76981b3e3",
    ("lexify", (("letters", ""), ("text", "x#x"))): "7bcbb9f4e0b67d81",
    ("day_of_week", ()): "91c8c2ce68898f56",
    ("month_name", ()): "dee0cb447c026d66",
    ("bothify", (("text", "no pattern"),)): "e6ffc9af51284732",
}


@pytest.mark.parametrize("provider, kwargs", sorted(_NATIVE_DIGESTS))
def test_native_values_are_those_drawn_before(provider: str, kwargs: tuple[tuple[str, str], ...]) -> None:
    fake = Fake(provider, **dict(kwargs))
    values = [fake.example(s) for s in range(500)] + [fake.at(s * 7919, 0.0) for s in range(500)]
    digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]
    assert digest == _NATIVE_DIGESTS[(provider, kwargs)]
