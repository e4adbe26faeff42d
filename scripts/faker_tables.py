#!/usr/bin/env python3
"""Write the Faker tables synthgpt ships: synthgpt/generators/faker_tables/<locale>/<provider>.json.

Each is a tabled provider's table without arguments (`synthgpt.generators.fake`), every slot drawn by the
installed Faker exactly as a server would fill it; FAKER_VERSION records which Faker drew them. Run it
with the Faker the tables should hold (`.venv/bin/python scripts/faker_tables.py`); the answers that use
these providers change with what it writes, so say so in the changelog.
"""

from __future__ import annotations

import json

import faker

from synthgpt.generators.fake import SHIPPED_TABLES, TABLE_SIZE, TABLED_PROVIDERS, draw_slot

LOCALES = ("en_US",)


def main() -> None:
    for locale in LOCALES:
        out = SHIPPED_TABLES / locale
        out.mkdir(parents=True, exist_ok=True)
        for provider in sorted(TABLED_PROVIDERS):
            try:
                values = [draw_slot(locale, provider, {}, "[]", slot) for slot in range(TABLE_SIZE)]
            except AttributeError:  # not a provider of this locale
                continue
            if all(isinstance(v, str) for v in values):  # only strings are kept in tables
                (out / f"{provider}.json").write_text(json.dumps(values, ensure_ascii=False, indent=0) + "\n")
    (SHIPPED_TABLES / "FAKER_VERSION").write_text(faker.VERSION + "\n")


if __name__ == "__main__":
    main()
