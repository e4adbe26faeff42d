"""The values a message gives (`MessageValues.of`) and the numbers it states (`_stated_number`) skip each
regex pass whose pattern the text cannot match: the same values as running every pass, on texts made of
what each pattern looks for (and near misses), in every case and with non-ASCII look-alikes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.generators import conversation_fill as cf
from synthgpt.generators import message_values as mv
from synthgpt.generators.message_values import MessageValues

SETTINGS = settings(max_examples=3000, deadline=None, derandomize=True)

_PIECES = [
    "run", "Run", "RUN", "execute", "EXEC", "exec", "please", "the", "in", "to", "from", "at", "the tests",
    "`ls -la`", "`", "``", "https://x.test/r.pdf", "http://a.io", "://", "HTTPS://X.IO", "bob@example.com",
    "a@b", "@", '"Q3 plan"', '"', "“curly”", "“", "'single'", "'", "it's", "/tmp", "~/notes", "./src/app.py",
    "../data", "C:\\Users\\me", "\\", "src/app.py", "report.pdf", "notes.MD", "e.g.", "end.", ".", "x.py",
    "25 minutes", "5km", "3.5 kg", "10%", "1,5 L", "20 °C", "7 K", "9\u212a", "12 MB", "3 yrs", "42",
    "#17", "٣ kg", "r1", "age", "aged 30", "25 years old", "Age: 41", "quantity is 4", "total: 99.5",
    "unit price = 3", "line 2 is 5", "ſ", "İ", "\u212aelvin", "Ünïcode", "\n", "  ", ",", ";", "!", "?",
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=10).map(" ".join) | st.text(max_size=40) | st.lists(
    st.sampled_from(_PIECES) | st.text(st.sampled_from("ab1./\\@`'\"“:% -k\u212aſ°"), max_size=4), max_size=8
).map("".join)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def reference_of(text: str) -> MessageValues:
    """`MessageValues.of` as it was, every pass run."""
    ticked = list(mv._BACKTICK.finditer(text))
    commands = [f.group(1).strip() for f in ticked if f.group(1).strip()]
    taken: list[tuple[int, int]] = [f.span() for f in ticked]
    urls = []
    for found in mv._URL.finditer(_mask(text, taken)):
        url = found.group(0).rstrip(".,;:!?)]}")
        urls.append(url)
        taken.append((found.start(), found.start() + len(url)))
    rest = _mask(text, taken)
    emails = [f.group(0).rstrip(".") for f in mv._EMAIL.finditer(rest)]
    taken += [f.span() for f in mv._EMAIL.finditer(rest)]
    rest = _mask(text, taken)
    quoted_found = list(mv._QUOTED.finditer(rest))
    quoted = [next(g for g in f.groups() if g is not None).strip() for f in quoted_found]
    taken += [f.span() for f in quoted_found]
    rest = _mask(text, taken)
    if not commands:
        for f in mv._RUN.finditer(rest):
            command = f.group(1).strip()
            if command:
                commands.append(command)
                taken.append(f.span(1))
        rest = _mask(text, taken)
    paths = [f.group(1) for f in mv._PATH.finditer(rest)]
    quantities = [f"{f.group(1)} {f.group(2)}" if f.group(2) != "%" else f.group(1) + "%"
                  for f in mv._QUANTITY.finditer(rest)]  # fmt: skip
    return MessageValues(
        tuple(commands), tuple(paths), tuple(urls), tuple(emails), tuple(q for q in quoted if q),
        tuple(quantities),
    )  # fmt: skip


def reference_stated_number(text: str, field: str) -> int | float | None:
    """`_stated_number` as it was: both regexes asked."""
    if field == "age":
        found = cf._AGE.search(text)
        if found:
            return int(found.group(1) or found.group(2))
    words = r"[\s_-]*".join(re.escape(w) for w in re.findall(r"[a-z]+|\d+", field))
    if not words:
        return None
    found = re.compile(rf"\b{words}\s*(?:is|of|=|:|was)?\s*(-?\d+(?:\.\d+)?)\b", re.I).search(text)
    if not found:
        return None
    number = found.group(1)
    return float(number) if "." in number else int(number)


@SETTINGS
@given(texts)
def test_message_values_are_those_of_every_pass(text: str) -> None:
    assert MessageValues.of(text) == reference_of(text)


def test_the_examples_give_values_of_every_kind() -> None:
    """The texts above reach every pass (what the property compares is not all empty)."""
    found = MessageValues.of(" ".join(_PIECES))
    assert found == reference_of(" ".join(_PIECES))
    assert all((found.paths, found.urls, found.emails, found.quoted, found.quantities, found.commands))
    assert MessageValues.of("please run the build now, thanks") == MessageValues()
    assert MessageValues.of("please run make build") == MessageValues(commands=("make build",))
    assert MessageValues.of("set it to 20 °C") == MessageValues(quantities=("20 °C",))


_FIELDS = ["age", "quantity", "price", "unit_price", "total", "line2", "k", "s", "", "kelvin", "count"]


@SETTINGS
@given(texts, st.sampled_from(_FIELDS))
def test_a_stated_number_is_the_one_every_pattern_finds(text: str, field: str) -> None:
    assert cf._stated_number.__wrapped__(text, field) == reference_stated_number(text, field)
