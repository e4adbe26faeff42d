"""Values a user's message clearly gives, for the tool arguments a model would fill from it.

"run `ls -la` in /tmp" gives a command (`ls -la`) and a path (`/tmp`); "email bob@example.com the report
at https://x.test/r.pdf" an email address and a URL; "set the timer to 25 minutes" a quantity with its
unit; "rename it to "Q3 plan"" a quoted string. `MessageValues.of(text)` finds them all in one pass,
each kind in message order; `request_args` gives them to the string fields named for them.

Spans already taken by one kind are masked for the kinds after it (backticks first, then URLs, emails,
quotes, a command after "run", paths, quantities): a backticked command's URL or arguments are not values
of their own, a URL's path is not also a path, an email's domain is not a file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MessageValues"]

_BACKTICK = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)")
# "run ls -la in /tmp": what follows run/execute, up to a place it runs in, a clause end or the end
_RUN = re.compile(
    r"\b(?:run|execute|exec)\s+(?!(?:the|a|an|this|that|my|your|it|some|all)\b)"
    r"(.+?)(?=\s+(?:in|inside|under|within|from|on)\s+(?:[~./]|[A-Za-z]:\\)|[,;]|[.!?](?:\s|$)|$)",
    re.IGNORECASE,
)
_EXTENSIONS = (
    "py js ts tsx jsx json yaml yml toml ini cfg conf txt md rst csv tsv pdf log sh bash zsh html htm css "
    "go rs java kt c h cpp hpp cs rb php sql xml png jpg jpeg gif svg zip tar gz docx xlsx pptx env lock"
).split()
_PATH = re.compile(
    r"(?<![\w/:.@~-])("
    r"~?/[\w.\-/]*[\w\-/]"  # /tmp, ~/notes, /var/log/
    r"|\.{1,2}/[\w.\-/]*[\w\-]"  # ./src/app.py, ../data
    r"|[A-Za-z]:\\[\w\\.\-]+"  # C:\Users\me
    r"|[\w\-]+(?:/[\w.\-]+)+"  # src/app.py
    rf"|[\w\-]+\.(?:{'|'.join(_EXTENSIONS)})"  # report.pdf
    r")(?![\w/])"
)
_UNITS = (
    "% ms s sec secs second seconds min mins minute minutes h hr hrs hour hours d day days week weeks "
    "month months year years mm cm m km mi mile miles ft feet in inch inches yd kg g mg lb lbs oz t "
    "ml l gal b kb mb gb tb kib mib gib tib px pt em rem °c °f c f k usd eur gbp jpy dollars euros "
    "mph kph km/h rpm hz khz mhz ghz w kw kwh v mah"
).split()
_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?(" + "|".join(map(re.escape, sorted(_UNITS, key=len,
                                                                                         reverse=True)))
                       + r")(?![\w/])", re.IGNORECASE)  # fmt: skip


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


# What a match of `_QUANTITY` must hold, found in one cheap pass: a number's last digit, then at most one
# space, then the first character of a unit (under the same flags)
_QUANTITY_HINT = re.compile(
    r"\d\s?[" + "".join(sorted({re.escape(u[0]) for u in _UNITS})) + "]", re.IGNORECASE
).search
# What a match of `_PATH` must hold: a "/" or "\\", or a "." before an extension's first letter
_EXTENSION_DOT = re.compile(r"\.[" + "".join(sorted({e[0] for e in _EXTENSIONS})) + "]").search


@dataclass(frozen=True, slots=True)
class MessageValues:
    """What one message gives, by kind, in message order."""

    commands: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    quoted: tuple[str, ...] = ()
    quantities: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str) -> MessageValues:
        # Most messages give none of these: each kind's pass runs only when the text holds what every match
        # of its pattern must (a backtick, "://", "@", a quote mark, "run"/"exec", a path's "/", "\\" or
        # extension, a number before a unit). Eight regex passes over a plain question cost ~40 µs.
        low = text.lower() if text.isascii() else None  # ASCII: case-insensitive words found by `in`
        ticked = list(_BACKTICK.finditer(text)) if "`" in text else []  # first: a command holds its text
        commands = [f.group(1).strip() for f in ticked if f.group(1).strip()]
        taken: list[tuple[int, int]] = [f.span() for f in ticked]
        rest = _mask(text, taken)
        urls = []
        if "://" in rest:
            for found in _URL.finditer(rest):
                url = found.group(0).rstrip(".,;:!?)]}")
                urls.append(url)
                taken.append((found.start(), found.start() + len(url)))
            rest = _mask(text, taken)
        emails_found = list(_EMAIL.finditer(rest)) if "@" in rest else []
        emails = [f.group(0).rstrip(".") for f in emails_found]
        if emails_found:
            taken += [f.span() for f in emails_found]
            rest = _mask(text, taken)
        quoted_found = (
            list(_QUOTED.finditer(rest)) if '"' in rest or "'" in rest or "“" in rest else []
        )  # (three `in` tests find a quote mark sooner than a set of the text's characters)
        quoted = [next(g for g in f.groups() if g is not None).strip() for f in quoted_found]
        if quoted_found:
            taken += [f.span() for f in quoted_found]
            rest = _mask(text, taken)
        if not commands and (low is None or "run" in low or "exec" in low):  # "run ls -la in /tmp"
            for f in _RUN.finditer(rest):
                command = f.group(1).strip()
                if command:
                    commands.append(command)
                    taken.append(f.span(1))
            rest = _mask(text, taken)
        may_path = "/" in rest or "\\" in rest or ("." in rest and _EXTENSION_DOT(rest) is not None)
        paths = [f.group(1) for f in _PATH.finditer(rest)] if may_path else []
        quantities = (
            [f"{f.group(1)} {f.group(2)}" if f.group(2) != "%" else f.group(1) + "%"
             for f in _QUANTITY.finditer(rest)]
            if _QUANTITY_HINT(rest) is not None else []
        )  # fmt: skip
        quoted = [q for q in quoted if q]
        if not (commands or paths or urls or emails or quoted or quantities) and cls is MessageValues:
            return _NONE  # what most messages give: the one empty instance, equal to a new one
        return cls(
            tuple(commands), tuple(paths), tuple(urls), tuple(emails), tuple(quoted), tuple(quantities),
        )  # fmt: skip


_NONE = MessageValues()
