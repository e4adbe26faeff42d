"""Parse YAML and JSON rule files into plain data plus the line and column of every key and value.

Every error about a rule file names `PATH:LINE:COL`, so the parsers here keep a position for each node,
addressed by its path from the document root: `("rules", 2, "generate", "integer")`. PyYAML's node API
(`yaml.compose`) gives YAML positions; JSON gets a small parser of its own because PyYAML reads JSON as
YAML 1.1 (tabs are rejected, `1e3` becomes a string).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RuleFileError

__all__ = ["NodePath", "RuleFileError", "SourceMap", "parse_source"]

NodePath = tuple[str | int, ...]
Pos = tuple[int, int]

MAX_DEPTH = 200
"""How deeply a rule file may nest lists and mappings."""
MAX_YAML_VALUES = 200_000
"""How many values a YAML file may expand to, aliases counted each time they are used."""


@dataclass
class SourceMap:
    """Positions (1-based line, column) of the keys and values of one parsed file."""

    path: str
    values: dict[NodePath, Pos] = field(default_factory=dict)
    keys: dict[NodePath, Pos] = field(default_factory=dict)

    def pos(self, at: Sequence[str | int], *, key: bool = False) -> Pos:
        """Where the node at path `at` starts (its key if `key`), else its nearest ancestor's."""
        p = tuple(at)
        if key and p in self.keys:
            return self.keys[p]
        while p:
            if p in self.values:
                return self.values[p]
            p = p[:-1]
        return self.values.get((), (1, 1))

    def error(self, at: Sequence[str | int], message: str, *, key: bool = False) -> RuleFileError:
        line, col = self.pos(at, key=key)
        return RuleFileError(self.path, line, col, message)


def parse_source(text: str, path: str, *, json_syntax: bool | None = None) -> tuple[Any, SourceMap]:
    """The data of a rule file and its positions. JSON if `json_syntax` (default: path ends in .json)."""
    if json_syntax is None:
        json_syntax = path.lower().endswith(".json")
    smap = SourceMap(path)
    if json_syntax:
        return _JsonParser(text, smap).document(), smap
    from .yaml_source import parse_yaml  # PyYAML (~1.5 MB) is loaded with the first YAML file

    return parse_yaml(text, smap), smap


# ------------------------------------------------------------------------------------------------ JSON

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WS = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}


class _JsonParser:
    """Strict JSON (RFC 8259) with a position for every key and value; duplicate keys are errors."""

    def __init__(self, text: str, smap: SourceMap) -> None:
        self.s = text[1:] if text.startswith("\ufeff") else text
        self.smap = smap
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.s)]
        self.depth = 0

    def lc(self, i: int) -> Pos:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= i:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, i - self.line_starts[lo] + 1

    def fail(self, i: int, message: str) -> RuleFileError:
        return RuleFileError(self.smap.path, *self.lc(i), f"invalid JSON: {message}")

    def ws(self, i: int) -> int:
        m = _WS.match(self.s, i)
        return m.end() if m else i

    def document(self) -> Any:
        i = self.ws(0)
        if i == len(self.s):
            return None
        value, i = self.value(i, ())
        i = self.ws(i)
        if i != len(self.s):
            raise self.fail(i, "extra data after the document")
        return value

    def value(self, i: int, path: NodePath) -> tuple[Any, int]:
        self.smap.values[path] = self.lc(i)
        c = self.s[i : i + 1]
        if c == "{":
            return self.nested(self.obj, i, path)
        if c == "[":
            return self.nested(self.arr, i, path)
        if c == '"':
            return self.string(i)
        m = _NUMBER.match(self.s, i)
        if m:
            text = m.group()
            try:
                return (float(text) if any(ch in text for ch in ".eE") else int(text)), m.end()
            except ValueError:  # an integer of more digits than Python converts
                raise self.fail(i, f"a number too long to read ({len(text)} digits)") from None
        for word, val in _LITERALS.items():
            if self.s.startswith(word, i):
                return val, i + len(word)
        raise self.fail(i, "expected a value" if c else "unexpected end of the document")

    def nested(self, parse: Any, i: int, path: NodePath) -> tuple[Any, int]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(i, f"nesting deeper than {MAX_DEPTH} levels")
        try:
            result: tuple[Any, int] = parse(i, path)
            return result
        finally:
            self.depth -= 1

    def string(self, i: int) -> tuple[str, int]:
        try:
            return json.decoder.scanstring(self.s, i + 1, True)  # type: ignore[attr-defined,no-any-return]
        except json.JSONDecodeError as exc:
            raise self.fail(exc.pos, exc.msg.lower()) from None

    def obj(self, i: int, path: NodePath) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        i = self.ws(i + 1)
        if self.s.startswith("}", i):
            return out, i + 1
        while True:
            if not self.s.startswith('"', i):
                raise self.fail(i, "expected a string key")
            kpos = self.lc(i)
            key, i = self.string(i)
            if key in out:
                raise RuleFileError(self.smap.path, *kpos, f"duplicate key {key!r}")
            self.smap.keys[(*path, key)] = kpos
            i = self.ws(i)
            if not self.s.startswith(":", i):
                raise self.fail(i, "expected ':' after a key")
            out[key], i = self.value(self.ws(i + 1), (*path, key))
            i = self.ws(i)
            if self.s.startswith(",", i):
                i = self.ws(i + 1)
                continue
            if self.s.startswith("}", i):
                return out, i + 1
            raise self.fail(i, "expected ',' or '}'")

    def arr(self, i: int, path: NodePath) -> tuple[list[Any], int]:
        out: list[Any] = []
        i = self.ws(i + 1)
        if self.s.startswith("]", i):
            return out, i + 1
        while True:
            v, i = self.value(i, (*path, len(out)))
            out.append(v)
            i = self.ws(i)
            if self.s.startswith(",", i):
                i = self.ws(i + 1)
                continue
            if self.s.startswith("]", i):
                return out, i + 1
            raise self.fail(i, "expected ',' or ']'")
