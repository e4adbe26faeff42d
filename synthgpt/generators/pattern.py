"""Strings matching simple regular expressions, for the `pattern` keyword of JSON schemas.

Only a small, predictable subset is handled: literals, escapes, character classes, `.`, groups with
alternation, the usual quantifiers and anchors at the very start or end. Anything else (lookarounds,
backreferences, word boundaries, anchors in the middle, …) raises PatternError when the Pattern is built,
so a schema that can't be honoured fails when the rule is written, not in the middle of a test run.
"""

from __future__ import annotations

import random
import re
import string
import warnings
from dataclasses import dataclass
from typing import NoReturn, TypeAlias

from ..errors import PatternError

__all__ = ["Pattern", "PatternError"]


_PRINTABLE = frozenset(chr(c) for c in range(32, 127))
_WORD = string.ascii_letters + string.digits + "_"
# `.` and `\s` could match far more; letters and a plain space are what realistic values contain.
_DOT = string.ascii_letters + string.digits
_CLASS_ESCAPES = {
    "d": string.digits,
    "w": _WORD,
    "s": " ",
    "D": "".join(sorted(_PRINTABLE - set(string.digits))),
    "W": "".join(sorted(_PRINTABLE - set(_WORD))),
    "S": "".join(sorted(_PRINTABLE - set(string.whitespace))),
}
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
_BRACES = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")


@dataclass(frozen=True)
class _Chars:
    chars: str  # one character drawn from these; a literal is a one-character set


@dataclass(frozen=True)
class _Seq:
    parts: tuple[_Node, ...]


@dataclass(frozen=True)
class _Alt:
    options: tuple[_Node, ...]


@dataclass(frozen=True)
class _Rep:
    node: _Node
    lo: int
    hi: int | None


_Node: TypeAlias = "_Chars | _Seq | _Alt | _Rep"


class _Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0

    def fail(self, what: str, at: int | None = None) -> NoReturn:
        where = self.i if at is None else at
        raise PatternError(f"is too complex for the simple-pattern generator: {what} at offset {where}")

    def peek(self) -> str:
        return self.src[self.i] if self.i < len(self.src) else ""

    def alt(self, depth: int) -> _Node:
        options = [self.seq(depth)]
        while self.peek() == "|":
            self.i += 1
            options.append(self.seq(depth))
        return options[0] if len(options) == 1 else _Alt(tuple(options))

    def seq(self, depth: int) -> _Node:
        parts: list[_Node] = []
        while (c := self.peek()) and c not in "|)":
            start = self.i
            if c in "^$":
                self.i += 1
                # Generated strings match the whole pattern, so an anchor is a no-op exactly where it can
                # only sit at the ends of the string; anywhere else it constrains what surrounds it.
                if depth or (parts if c == "^" else self.peek() not in ("", "|")):
                    self.fail(f"anchor {c!r} away from the start or end", start)
                continue
            parts.append(self.quantified(self.atom(depth), start))
        return parts[0] if len(parts) == 1 else _Seq(tuple(parts))

    def atom(self, depth: int) -> _Node:
        start = self.i
        c = self.src[self.i]
        self.i += 1
        if c == "(":
            if self.src.startswith("?:", self.i):
                self.i += 2
            elif self.peek() == "?":
                self.fail(f"group {self.src[start : start + 3]!r}", start)
            node = self.alt(depth + 1)
            if self.peek() != ")":
                self.fail("unclosed group", start)
            self.i += 1
            return node
        if c == "[":
            return self.char_class(start)
        if c == ".":
            return _Chars(_DOT)
        if c == "\\":
            return _Chars(self.escape())
        return _Chars(c)

    def quantified(self, atom: _Node, start: int) -> _Node:
        c = self.peek()
        hi: int | None
        if c and c in "*+?":
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{" and (m := _BRACES.match(self.src, self.i)):
            if not m[1]:
                self.fail(f"quantifier {m[0]!r}", self.i)
            self.i = m.end()
            lo = int(m[1])
            hi = lo if not m[2] else (int(m[3]) if m[3] else None)
        else:
            return atom
        if self.peek() == "?":  # lazy quantifiers match the same strings
            self.i += 1
        elif self.peek() == "+":
            self.fail("possessive quantifier")
        return _Rep(atom, lo, hi)

    def escape(self) -> str:
        c = self.peek()
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[c]
        if c in ("x", "u"):
            digits = self.src[self.i : self.i + (2 if c == "x" else 4)]
            self.i += len(digits)
            return chr(int(digits, 16))  # re.compile already checked the digits
        if c.isalnum():
            self.fail(f"escape '\\{c}'", self.i - 2)
        return c

    def char_class(self, start: int) -> _Node:
        negate = self.peek() == "^"
        self.i += negate
        chars: set[str] = set()
        first = True
        while (c := self.peek()) != "]" or first:
            first = False
            self.i += 1
            lo = self.escape() if c == "\\" else c
            if len(lo) == 1 and self.peek() == "-" and self.src[self.i + 1 : self.i + 2] not in ("]", ""):
                c2 = self.src[self.i + 1]
                self.i += 2
                hi = self.escape() if c2 == "\\" else c2
                chars.update(chr(x) for x in range(ord(lo), ord(hi) + 1))
            else:
                chars.update(lo)
        self.i += 1
        pool = _PRINTABLE - chars if negate else chars
        if not pool:
            self.fail("a negated class that excludes every printable character", start)
        return _Chars("".join(sorted(pool)))


def _length(node: _Node) -> tuple[int, int | None]:
    if isinstance(node, _Chars):
        return 1, 1
    if isinstance(node, _Rep):
        lo, hi = _length(node.node)
        if hi == 0:
            return 0, 0
        return node.lo * lo, None if node.hi is None or hi is None else node.hi * hi
    spans = [_length(n) for n in (node.parts if isinstance(node, _Seq) else node.options)]
    his = [h for _, h in spans]
    if isinstance(node, _Seq):
        return sum(lo for lo, _ in spans), None if None in his else sum(h for h in his if h is not None)
    return min(lo for lo, _ in spans), None if None in his else max(h for h in his if h is not None)


def _sample(node: _Node, rng: random.Random, low: int, high: int, out: list[str]) -> None:
    if isinstance(node, _Chars):
        out.append(rng.choice(node.chars))
    elif isinstance(node, _Seq):
        for part in node.parts:
            _sample(part, rng, low, high, out)
    elif isinstance(node, _Alt):
        _sample(rng.choice(node.options), rng, low, high, out)
    else:
        cap = node.hi if node.hi is not None else node.lo + high
        for _ in range(rng.randint(min(node.lo + low, cap), min(node.lo + high, cap))):
            _sample(node.node, rng, low, high, out)


class Pattern:
    """A parsed simple pattern; `sample` draws a string the whole pattern matches."""

    __slots__ = ("_root", "max_len", "min_len", "source")

    def __init__(self, source: str) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                re.compile(source)
        except (re.error, Warning) as e:
            raise PatternError(f"is not a valid regular expression: {e}") from None
        parser = _Parser(source)
        root = parser.alt(0)
        if parser.i < len(source):  # pragma: no cover - re.compile rejects a stray ')'
            parser.fail("unbalanced ')'")
        self.source = source
        self._root = root
        self.min_len, self.max_len = _length(root)

    def sample(self, rng: random.Random, low: int = 0, high: int = 8) -> str:
        """Each quantifier repeats between `low` and `high` times more than its minimum, as it allows."""
        out: list[str] = []
        _sample(self._root, rng, low, high, out)
        return "".join(out)

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"
