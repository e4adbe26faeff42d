"""Text generators: seeded words and sentences, words from the request, and hash-derived filler tokens.

The built-in default answer, `prose`, is in `prose.py`."""

from __future__ import annotations

import hashlib
import re

from .._validation import size_range, whole
from ..errors import RuleError
from .core import DrawContext, Generator
from .reading import READ_CHARS

__all__ = [
    "HashTokens",
    "LastUser",
    "Paragraph",
    "Sentence",
    "Summary",
    "Words",
    "article",
    "with_article",
]

WORDS = (
    "account action answer approach area aspect balance basis benefit budget case change choice claim "
    "client code context cost data decision design detail effect effort element energy event example "
    "factor feature field figure focus form function goal growth guide habit idea image impact issue "
    "item journey key layer level limit list market matter measure method model moment need network "
    "note number object option order outcome part path pattern period plan point policy practice "
    "process product project quality question range rate reason record region report request result "
    "review risk role rule sample scale scope section sense service set signal size skill source space "
    "stage standard state step story structure style system table task team term test theme time tool "
    "topic track trend type unit update value version view volume way window word work"
).split()
ADJECTIVES = (
    "clear simple useful careful direct practical steady broad quick common solid small large early late "
    "main local general specific reliable flexible modest strong light gradual"
).split()
VERBS = (
    "supports improves shapes explains covers frames guides reflects changes limits drives follows "
    "balances connects extends reduces defines tracks signals"
).split()
MAX_HASH_TOKENS = 1_000_000
"""The most tokens `hash_tokens` may draw (load tests want long answers; not ones that stall a server)."""
# `. ! ?` end a sentence before a space; the full stops of CJK (and Devanagari, Arabic) scripts end one
# right away, as those scripts put no space between sentences.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？｡．।؟۔])\s*(?=\S)")


# Spelling decides the article except where the sound does not follow it: a "yoo" or "w" sound takes
# "a" (a useful, a one-off), a silent h takes "an" (an hour).
_A_BEFORE_VOWEL = ("one", "once", "uni", "use", "usu", "uti", "ura", "ure", "uro", "eu", "ewe", "ubi")
_AN_BEFORE_H = ("hour", "honest", "honor", "honour", "heir")


def article(word: str) -> str:
    """`"a"` or `"an"`, whichever reads right before `word` (by its first letters; English only)."""
    w = word.lower()
    if w.startswith(_AN_BEFORE_H):
        return "an"
    if w[:1] in ("a", "e", "i", "o", "u") and not w.startswith(_A_BEFORE_VOWEL):
        return "an"
    return "a"


def with_article(word: str, *, capital: bool = False) -> str:
    """`word` with the article it takes: `"an early"`, `"a useful"`; `capital` for a sentence start."""
    art = article(word)
    return f"{art.capitalize() if capital else art} {word}"


class Words(Generator[str]):
    __slots__ = ("hi", "lo")

    def __init__(self, min_words: int = 3, max_words: int = 6) -> None:
        size_range("words", min_words, max_words)
        self.lo, self.hi = min_words, max_words

    def draw(self, ctx: DrawContext) -> str:
        rng = ctx.rng
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(self.lo, self.hi)))

    def __repr__(self) -> str:
        return f"words({self.lo}, {self.hi})"


def _sentence(rng_words: list[str]) -> str:
    s = " ".join(rng_words)
    return s[:1].upper() + s[1:] + "."


class Sentence(Generator[str]):
    __slots__ = ("hi", "lo")

    def __init__(self, min_words: int = 6, max_words: int = 12) -> None:
        size_range("sentence", min_words, max_words)
        if min_words < 1:
            raise RuleError("`sentence` needs at least one word")
        self.lo, self.hi = min_words, max_words

    def draw(self, ctx: DrawContext) -> str:
        rng = ctx.rng
        n = rng.randint(self.lo, self.hi)
        words = [rng.choice(ADJECTIVES if i % 3 == 1 else WORDS) for i in range(n)]
        if n >= 3:
            words[n // 2] = rng.choice(VERBS)
        return _sentence(words)

    def __repr__(self) -> str:
        return f"sentence({self.lo}, {self.hi})"


class Paragraph(Generator[str]):
    __slots__ = ("hi", "lo")

    def __init__(self, min_sentences: int = 3, max_sentences: int = 5) -> None:
        size_range("paragraph", min_sentences, max_sentences, "sentences")
        self.lo, self.hi = min_sentences, max_sentences

    def draw(self, ctx: DrawContext) -> str:
        n = ctx.rng.randint(self.lo, self.hi)
        return " ".join(Sentence().draw(ctx.fork(("sentence", i))) for i in range(n))

    def __repr__(self) -> str:
        return f"paragraph({self.lo}, {self.hi})"


class Summary(Generator[str]):
    """The first `count` sentences of the last user message, cut to `max_chars` code points."""

    __slots__ = ("count", "max_chars")

    def __init__(self, max_chars: int = 200, count: int = 1) -> None:
        if whole("`summary`: max_chars", max_chars) < 1 or whole("`summary`: count", count) < 1:
            raise RuleError(f"`summary` takes max_chars >= 1 and count >= 1, got {max_chars} and {count}")
        self.max_chars = max_chars
        self.count = count

    def draw(self, ctx: DrawContext) -> str:
        # The answer is at most `max_chars` long: splitting a long message whole (megabytes: a C call
        # holding the GIL for a quarter of a second) only to keep its first sentences reads far more than
        # the answer can hold. Four times `max_chars` and a margin leave room for the separators.
        head = ctx.request.last_user[: 4 * self.max_chars + READ_CHARS]
        sentences = _SENTENCE_END.split(head.strip(), maxsplit=self.count)[: self.count]
        text = "".join(f"{a} " if a[-1:] in ".!?" else a for a in sentences[:-1]) + sentences[-1]
        return text[: self.max_chars].rstrip()

    def __repr__(self) -> str:
        return f"summary(max_chars={self.max_chars}, count={self.count})"


class LastUser(Generator[str]):
    """The last user message, verbatim (`echo`)."""

    __slots__ = ()

    def draw(self, ctx: DrawContext) -> str:
        return ctx.request.last_user

    def __repr__(self) -> str:
        return "last_user()"


class HashTokens(Generator[str]):
    """Exactly `n` tokens of hash-derived filler (each ' ' + 4 hex digits is one token)."""

    __slots__ = ("n",)

    def __init__(self, n: int = 16) -> None:
        if whole("`hash_tokens`: n", n) < 0:
            raise RuleError(f"`hash_tokens` takes n >= 0, got {n}")
        if n > MAX_HASH_TOKENS:
            raise RuleError(f"`hash_tokens` takes n <= {MAX_HASH_TOKENS}, got {n}")
        self.n = n

    def draw(self, ctx: DrawContext) -> str:
        digest = b""
        counter = 0
        while len(digest) < 2 * self.n:
            digest += hashlib.blake2b(f"{ctx.seed}:{counter}".encode(), digest_size=64).digest()
            counter += 1
        hexes = digest.hex()
        return "".join(("" if i == 0 else " ") + hexes[4 * i : 4 * i + 4] for i in range(self.n))

    def __repr__(self) -> str:
        return f"hash_tokens({self.n})"
