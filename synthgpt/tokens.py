"""A deterministic tokenizer: a documented approximation of BPE token counts.

Rule: a token is a run of up to 4 letters/digits (a longer word costs one token per 4 characters, rounded
up), or one punctuation/symbol character; whitespace before a token belongs to it.

It is not calibrated against any real tokenizer and makes no accuracy claim: counts are of the right
order for English prose but can differ a lot from a given model's (long or non-English words, numbers and
code especially). What usage figures in fixtures need is what it guarantees: the same count for the
same text in every process and on every platform, and cut points that fall on token boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Final

from .gil import LONG_TEXT, let_go

__all__ = ["count_message_tokens", "count_tokens", "cut_to_tokens", "token_pieces", "token_spans"]

_TOKEN = re.compile(r"\s*(?:\w{1,4}|[^\w\s])|\s+", re.UNICODE)
_PER_MESSAGE = 4  # role and separators, as chat formats add
_LONG: Final = LONG_TEXT  # (Final: compiled, a C static rather than a look-up in the module's globals)
_MESSAGES_PIECE: Final = 4096
"""Messages counted between two `gil.let_go`s (~2 ms)."""
_PRIMING = 3  # the priming of the assistant's reply


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each token; the spans tile the text exactly."""
    return [m.span() for m in _TOKEN.finditer(text)]


def token_pieces(text: str) -> list[str]:
    """The tokens themselves, in order: they join back to `text`, and there are `count_tokens(text)` of
    them (the pattern has no group, so `findall` returns whole matches)."""
    return _TOKEN.findall(text)


# Each ASCII character's class under `_TOKEN`: `w` a word character, `p` punctuation or a symbol (a token
# of its own), ` ` whitespace. Taken from the pattern itself, so the two cannot disagree.
_ASCII_CLASS = {
    i: "w" if re.fullmatch(r"\w", chr(i)) else " " if re.fullmatch(r"\s", chr(i)) else "p" for i in range(128)
}
# the same classes as a table for `bytes.translate`: ASCII text encoded is classified ~2x faster than by
# `str.translate`, which looks each character up in the dict
_ASCII_TABLE = bytes(ord(_ASCII_CLASS[i]) for i in range(128)) + bytes(128)


def count_tokens(text: str) -> int:
    """How many tokens `text` is (`len(token_pieces(text))`, without building them)."""
    if len(text) > _LONG:
        return _count_in_pieces(text)
    return _count(text)


def _count(text: str) -> int:
    if not text.isascii():
        # one C call that builds no per-token strings (findall is ~15 % slower, a generator ~3x)
        return _TOKEN.subn("", text)[1]
    # ASCII (answers and most prompts): the same count from a few whole-string C passes, ~3x faster than
    # the regex's one match per token. A run of L word characters is ceil(L / 4) tokens: with three more
    # `w`s after each run, that is how many `wwww` it holds (three `w`s after every separator do it, and
    # add none where no run precedes: a one-character needle is replaced ~3x faster than "w ").
    # Whitespace belongs to the token after it; only whitespace at the very end is a token of its own.
    classes = text.encode().translate(_ASCII_TABLE)
    n = classes.count(b"p")
    n += (classes.replace(b"p", b" ") + b" ").replace(b" ", b"www ").count(b"wwww")
    return n + 1 if classes[-1:] == b" " else n


_CUT = re.compile(r"(?<=\S)\s")
"""Where whitespace follows anything else: a token boundary, since no token runs on from a word character
or a symbol into whitespace (whitespace belongs to the token after it)."""


def _count_in_pieces(text: str) -> int:
    """`count_tokens` of a long text a piece at a time, the GIL let go between pieces (`gil.let_go`: the
    passes over a 10 MB message held it for 83 ms). Pieces end at `_CUT`s, so their counts add up to the
    whole text's; a text with none after its first piece's length is counted in one piece."""
    total = start = 0
    while start < len(text):
        cut = _CUT.search(text, start + _LONG)
        end = len(text) if cut is None else cut.start()
        total += _count(text[start:end])
        start = end
        if start < len(text):
            let_go()
    return total


def cut_to_tokens(text: str, limit: int) -> tuple[str, int, bool]:
    """The longest prefix of `text` with at most `limit` tokens: (prefix, tokens, was_cut)."""
    if limit <= 0:
        return "", 0, bool(text)
    end = _ascii_end(text, limit) if text.isascii() else _end(text, limit)
    if end < 0:  # fewer tokens than the limit: the text is kept whole
        return text, count_tokens(text), False
    return text[:end], limit, end < len(text)


def _end(text: str, limit: int) -> int:
    """Where the `limit`-th token of `text` ends, or -1 when it has fewer."""
    # reached by `islice` in C (a Python loop over every token before it cost ~60 ns a token)
    last = next(islice(_TOKEN.finditer(text), limit - 1, None), None)
    return -1 if last is None else last.end()


def _ascii_end(text: str, limit: int) -> int:
    """`_end` of an ASCII text, from its characters' classes (`_ASCII_TABLE`): a pattern that matches
    `_CUT_RUN` tokens at a time, as atomic groups, reaches the limit with one match object per run instead
    of one per token (~3x faster on an answer cut at 40 tokens)."""
    classes = text.encode().translate(_ASCII_TABLE)
    at = 0
    while limit > 0:
        run = min(limit, _CUT_RUN)
        found = _run_pattern(run).match(classes, at)
        if found is None:
            return -1
        at = found.end()
        limit -= run
    return at


_CUT_RUN: Final = 64
_RUN_PATTERNS: list[re.Pattern[bytes] | None] = [None] * (_CUT_RUN + 1)


def _run_pattern(run: int) -> re.Pattern[bytes]:
    """`run` tokens of `_TOKEN`, written over classes: `\\s` is ` `, `\\w` is `w`, any other character `p`.
    Each token is an atomic group, so it is the one `finditer` would match there, and a text with fewer
    tokens fails in one pass rather than by trying every other split of its words."""
    pattern = _RUN_PATTERNS[run]
    if pattern is None:
        pattern = re.compile(rb"(?> *(?:w{1,4}|p)| +){%d}" % run)
        _RUN_PATTERNS[run] = pattern  # one per run length: at most `_CUT_RUN`, made when first needed
    return pattern


def count_message_tokens(texts: Iterable[str], count: Callable[[str], int] | None = None) -> int:
    """Prompt tokens for a conversation: each message's text plus a fixed per-message overhead. `count`:
    what counts a text's tokens, if not `count_tokens` itself (one that remembers texts it has seen)."""
    total = _PRIMING
    for counted, t in enumerate(texts, 1):
        total += _PER_MESSAGE + (count_tokens(t) if count is None else count(t))
        if counted % _MESSAGES_PIECE == 0:
            let_go()  # 100,000 messages took 49 ms in one hold
    return total
