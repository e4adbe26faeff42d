"""Rule regexes run on RE2 (`google-re2`): time linear in the text, whatever the pattern and the message.

Python's `re` backtracks: `(a+)+$` against 27 `a`s and a `!` took 45 s, during which the server answered
nobody (issue 11). RE2 never backtracks, so no message can stall a rule's matcher; the `regex` module's
timeout would also stop it, but a match that depends on how busy the machine is breaks determinism. See
bench/README.md ("Rule regex engines") for the figures.

What RE2 lacks is refused when the rule is built, with a message naming the construct and the fix:
backreferences (`\\1`, `(?P=name)`), lookarounds (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`), possessive
quantifiers and atomic groups, conditionals, `\\Z` (write `\\z`), and repeat counts over 1000. Python's
Unicode meaning of `\\w`, `\\d` and `\\s` is kept (they are rewritten to Unicode classes); `\\b` is RE2's,
a boundary between ASCII word characters and the rest.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from typing import Any

from .errors import RuleError

__all__ = ["RuleRegex", "compile_rule_regex"]

# Python's classes, as RE2 Unicode classes (RE2's own \w, \d, \s are ASCII only)
_CLASSES = {"w": r"\p{L}\p{N}_", "d": r"\p{Nd}", "s": r"\s\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}"
            r"\x{2029}\x{202f}\x{205f}\x{3000}\x{1c}-\x{1f}"}  # fmt: skip

# Python's parse tree names what RE2 lacks: (what it is, how to do without)
_UNSUPPORTED = {
    "GROUPREF": ("a backreference", "match the repeated part as its own group"),
    "GROUPREF_EXISTS": ("a conditional group", "use `|` between the alternatives"),
    "ASSERT": ("a lookahead or lookbehind", "match the context into a group instead"),
    "ASSERT_NOT": ("a negative lookahead or lookbehind", "match what is wanted, or use two rules"),
    "ATOMIC_GROUP": ("an atomic group", "use a plain group"),
    "POSSESSIVE_REPEAT": ("a possessive quantifier", "use a plain quantifier"),
}


_PARSER: Any = importlib.import_module("re._parser")
_CODES: Any = importlib.import_module("re._constants")
# the parse tree's opcodes themselves (comparing their names cost a third of a rule regex's compile)
_UNSUPPORTED_OPS = {getattr(_CODES, name): why for name, why in _UNSUPPORTED.items() if hasattr(_CODES, name)}


def _unsupported(parsed: Any) -> tuple[str, str] | None:
    sub_pattern = _PARSER.SubPattern
    at, end_of_string = _CODES.AT, _CODES.AT_END_STRING
    todo = [parsed]
    while todo:
        for op, arg in todo.pop().data:
            lacking = _UNSUPPORTED_OPS.get(op)
            if lacking is not None:
                return lacking
            if op is at and arg is end_of_string:
                return "\\Z", "write \\z (the very end of the text)"
            for a in arg if isinstance(arg, tuple | list) else (arg,):
                if isinstance(a, sub_pattern):
                    todo.append(a)
                elif isinstance(a, list):  # the branches of `|`
                    todo.extend(b for b in a if isinstance(b, sub_pattern))
    return None


def _translate(pattern: str) -> str:
    """Python's Unicode `\\w`, `\\d`, `\\s` (and their negations outside classes) for RE2."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            width = {"u": 4, "U": 8}.get(nxt)
            if width is not None:  # Python's \uXXXX and \UXXXXXXXX are RE2's \x{…}
                out.append(f"\\x{{{pattern[i + 2 : i + 2 + width]}}}")
                i += 2 + width
                continue
            if nxt == "N" and pattern[i + 2 : i + 3] == "{":  # \N{NAME}: the character itself, escaped
                end = pattern.index("}", i)
                out.append(f"\\x{{{ord(unicodedata.lookup(pattern[i + 3 : end])):x}}}")
                i = end + 1
                continue
            if nxt.lower() in _CLASSES:
                body = _CLASSES[nxt.lower()]
                if in_class:  # inside [...]: a negated class cannot nest, so \W \D \S stay RE2's
                    out.append(body if nxt.islower() else c + nxt)
                else:
                    out.append(f"[{body}]" if nxt.islower() else f"[^{body}]")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            # a `]` right after `[` or `[^` is a literal
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                out.append(r"\]")
                i += 1
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


class RuleRegex:
    """A compiled rule regex: `search(text)` gives the named groups that matched, or None."""

    __slots__ = ("_re", "groupindex", "literal", "pattern")

    def __init__(self, pattern: str, compiled: Any, literal: str = "") -> None:
        self.pattern = pattern
        self._re = compiled
        self.groupindex: dict[str, int] = {k.decode(): v for k, v in compiled.groupindex.items()}
        self.literal = literal
        """Text every match contains (case-sensitive patterns only): absent, RE2 is not asked (~10 us)."""

    @property
    def compiled_pattern(self) -> bytes:
        """The pattern as RE2 runs it (Python's classes rewritten; see `_translate`), UTF-8."""
        pattern: bytes = self._re.pattern
        return pattern

    def search(self, text: str) -> dict[str, str] | None:
        if self.literal and self.literal not in text:
            return None
        # bytes in, bytes out: the wrapper's str path maps every offset back to characters (3x slower)
        m = self._re.search(text.encode("utf-8", "surrogatepass"))
        if m is None:
            return None
        found = m.groupdict().items()
        return {k.decode(): v.decode("utf-8", "surrogatepass") for k, v in found if v is not None}


def _required_literal(parsed: Any) -> str:
    """The longest run of plain characters at the top level of the pattern: every match contains it."""
    best, run = "", ""
    if parsed.state.flags & re.IGNORECASE:  # an inline (?i)
        return ""
    for op, arg in parsed:
        if str(op) == "LITERAL":
            run += chr(arg)
            best = max(best, run, key=len)
        else:
            run = ""
    return best


def compile_rule_regex(pattern: str, *, ignore_case: bool, what: str = "regex") -> RuleRegex:
    """A RuleRegex, or a RuleError naming what RE2 cannot run and how to write it instead."""
    # Python's parser alone (not `re.compile`, which parses too and then compiles a program no one runs):
    # it reports the syntax errors, and its tree says what RE2 lacks and the literal every match holds.
    # Once per pattern, not three times: a file of 20,000 regex rules spent a third of its load here.
    try:
        parsed = _PARSER.parse(pattern)
    except re.error as exc:
        raise RuleError(f"{what}: bad regex {pattern!r}: {exc}") from None
    lacking = _unsupported(parsed)
    if lacking is not None:
        construct, fix = lacking
        raise RuleError(
                f"{what}: regex {pattern!r} uses {construct}, which rule regexes do not support (they run "
                f"on RE2, in time linear in the text, so no message can stall the server); {fix}"
            )
    import re2  # type: ignore[import-untyped]  # (no stubs published with the wheel)

    options = re2.Options()
    options.log_errors = False  # the RuleError says it
    options.case_sensitive = not ignore_case
    try:
        compiled = re2.compile(_translate(pattern).encode("utf-8", "surrogatepass"), options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise RuleError(
            f"{what}: regex {pattern!r} is not supported by RE2, the linear-time engine rule regexes run on "
            f"({detail}); rewrite that part (repeat counts stay within 1000)"
        ) from None
    return RuleRegex(pattern, compiled, "" if ignore_case else _required_literal(parsed))
