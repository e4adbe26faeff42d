"""Simulated token log probabilities, provider-neutral: one entry per token of an answer's text.

`token_logprobs(text, seed, top_n)` cuts the text with the project's tokenizer (`tokens.token_pieces`,
so the entries join back to exactly the text and there are `count_tokens(text)` of them) and gives each
token a logprob and `top_n` alternatives, drawn from one RNG made from `seed`. The same (text, seed) gives
the same entries in every process; a wire module derives `seed` from the answer's `id_seed`, so a
stream and a non-stream body of one answer carry the same values.

What the numbers look like, and why:

- The chosen token is always the most likely one (the first alternative, with the same logprob): a
  client ranking alternatives must find the answer's token on top, as with greedy decoding.
- Most tokens are near-certain (logprob between -1e-7 and -1e-3), some are in mild doubt (down to -0.1),
  a few are real choices (down to about -2.3); a token continuing a word is more certain than one
  starting a word, as with real models.
- Alternatives share the probability left over (1 - p(chosen)), each strictly less likely than the one
  before and than the chosen token, so probabilities never sum past 1. For a near-certain token they are
  very unlikely (logprobs of -15 and lower), as real APIs show.
- Values are rounded to 8 significant digits (what a float32 prints as).
- Each token draws one 64-bit number from the RNG, whatever `top_n` is, and its alternatives come from
  that number alone: a token's logprob does not depend on `top_n`, and fewer alternatives are a prefix
  of more.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TypedDict

from .gil import let_go
from .seeding import make_rng
from .tokens import token_pieces

__all__ = [
    "MAX_TOP_LOGPROBS", "TokenLogprob", "TopLogprob", "alternatives_asked", "group_by_chars", "token_logprobs"
]  # fmt: skip

MAX_TOP_LOGPROBS = 20
"""The most alternatives the APIs give per token (`top_logprobs` is 0..20)."""
_TOKENS_PER_HOLD = 2048
"""Tokens given their entries between two `gil.let_go`s (compiled, ~2 ms with 20 alternatives each)."""


class TopLogprob(TypedDict):
    token: str
    logprob: float
    bytes: list[int]


class TokenLogprob(TypedDict):
    """A token's entry, in the key order both OpenAI APIs send (Chat `ChatCompletionTokenLogprob`,
    Responses `LogProb`)."""

    token: str
    logprob: float
    bytes: list[int]
    top_logprobs: list[TopLogprob]


_MASK = (1 << 64) - 1
_UNIT = 2.0**-53
# a 64-bit LCG (Knuth's MMIX constants): cheap arithmetic that turns a token's one draw into as many
# numbers as its alternatives need
_MUL = 6364136223846793005
_INC = 1442695040888963407
_MIX = 0x9E3779B97F4A7C15

# Common tokens alternatives are picked from, by the kind of token they stand in for.
_WORDS = (
    " the", " a", " and", " of", " to", " in", " is", " it", " that", " for", " on", " with", " as",
    " this", " be", " are", " or", " by", " an", " at", " from", " can", " will", " not", " you", " we",
    " they", " more", " one", " all", " also", " which", " their", " each",
)  # fmt: skip
_PIECES = ("s", "ing", "ed", "er", "ly", "e", "es", "al", "ion", "t", "re", "in", "an", "on", "en", "y")
_MARKS = (
    ",", ".", ":", ";", "!", "?", " -", "\n", "\n\n", ")", " (", "'", '"', " \"", "...", " *", "-", "/",
)  # fmt: skip
_DIGITS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", " 1", " 2", " 3", " 10", "00", ".")
_SPACES = (" ", "\n", "\n\n", "  ", "\t", "\n\n\n")
_ANY = _WORDS + _MARKS + _PIECES + _DIGITS


def alternatives_asked(value: object) -> int:
    """A request's `top_logprobs` as a count of alternatives: 0 when absent or not a whole number, else held
    to the APIs' 0..20 (the decoders refuse anything else; a request built in Python is clamped)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return 0
    return min(max(value, 0), MAX_TOP_LOGPROBS)


def _sig8(x: float) -> float:
    """`x` rounded to 8 significant digits."""
    return float(f"{x:.8g}")


def _chosen_magnitude(u: float) -> float:
    """-logprob of a chosen token, from a uniform `u`: log-uniform within bands weighted toward 0."""
    if u < 0.55:
        return math.pow(10.0, -7.0 + 4.0 * (u / 0.55))  # 1e-7 .. 1e-3: near-certain
    if u < 0.85:
        return math.pow(10.0, -3.0 + 2.0 * ((u - 0.55) / 0.30))  # 1e-3 .. 0.1
    if u < 0.97:
        return math.pow(10.0, -1.0 + (u - 0.85) / 0.12)  # 0.1 .. 1
    return 1.0 + 1.3 * ((u - 0.97) / 0.03)  # 1 .. 2.3: a real choice between tokens


def _variants(token: str) -> list[str]:
    """Tokens that differ from `token` the way a model's runner-up often does: case, leading space,
    a shorter piece of the same word."""
    core = token.lstrip()
    lead = token[: len(token) - len(core)]
    if not core:
        return list(_SPACES)
    out = [lead + core.lower(), lead + core.capitalize(), lead + core.upper()]
    out.append(core if lead else " " + core)
    if lead != "\n" and core[0].isalnum():
        out.append("\n" + core)
    if len(core) > 1:
        out.append(lead + core[:-1])
    if len(core) > 2:
        out.append(lead + core[:2])
    return out


def _pool(token: str) -> tuple[str, ...]:
    core = token.lstrip()
    if not core:
        return _SPACES
    first = core[0]
    if first.isdigit():
        return _DIGITS
    if first.isalpha() or first == "_":
        return _WORDS + _PIECES
    return _MARKS


@lru_cache(maxsize=4096)  # answers repeat their tokens: the lists are worked out once per token
def _candidates(token: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A token's possible alternatives, none equal to it or to another: its variants, common tokens of
    its kind, then any common token (so 19 can always be found)."""
    taken = {token}
    lists: list[tuple[str, ...]] = []
    for source in (_variants(token), _pool(token), _ANY):
        fresh = tuple(dict.fromkeys(c for c in source if c not in taken))
        taken.update(fresh)
        lists.append(fresh)
    return lists[0], lists[1], lists[2]


def _alternatives(token: str, logprob: float, state: int, k: int) -> list[TopLogprob]:
    """`k` entries: the token itself first, then `k - 1` distinct other tokens, each less likely than
    the one before. `state` is the token's 64-bit draw."""
    top: list[TopLogprob] = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
    if k == 1:
        return top
    variants, pool, rest = _candidates(token)
    state ^= _MIX
    left = -math.expm1(logprob)  # probability not taken by the chosen token
    previous = math.exp(logprob)
    vi = pi = ri = 0
    # where in the pool this token starts picking, so tokens of one kind do not all list the same words
    offset = state % len(pool) if pool else 0
    for _ in range(k - 1):
        state = (state * _MUL + _INC) & _MASK
        # about half the slots take the next variant, the rest the next common token of its kind
        if vi < len(variants) and ((state >> 10) & 1 or pi >= len(pool)):
            candidate = variants[vi]
            vi += 1
        elif pi < len(pool):
            candidate = pool[(offset + pi) % len(pool)]
            pi += 1
        else:
            candidate = rest[ri]
            ri += 1
        f = (state >> 11) * _UNIT
        # a share of what is left, and less than the previous token's: strictly decreasing
        p = min(left * (0.3 + 0.6 * f), previous * (0.15 + 0.75 * f))
        left -= p
        previous = p
        top.append({"token": candidate, "logprob": _sig8(math.log(p)), "bytes": list(candidate.encode())})
    return top


def token_logprobs(text: str, seed: int, top_n: int = 0) -> list[TokenLogprob]:
    """One entry per token of `text`, in order; each has `top_n` alternatives (0..20), the token first."""
    if not 0 <= top_n <= MAX_TOP_LOGPROBS:
        raise ValueError(f"top_n must be between 0 and {MAX_TOP_LOGPROBS}, got {top_n}")
    rng = make_rng(seed)
    draw = rng.getrandbits
    entries: list[TokenLogprob] = []
    previous = ""
    for n, token in enumerate(token_pieces(text)):
        if n and not n % _TOKENS_PER_HOLD:
            let_go()  # compiled (`synthgpt.native`), a long answer would be one GIL hold
        state = draw(64)
        u = (state >> 11) * _UNIT
        if previous and previous[-1].isalnum() and token[0].isalnum():
            u *= 0.6  # the rest of a word: rarely in doubt
        logprob = -_sig8(_chosen_magnitude(u))
        encoded = list(token.encode())
        top = _alternatives(token, logprob, state, top_n) if top_n else []
        entries.append({"token": token, "logprob": logprob, "bytes": encoded, "top_logprobs": top})
        previous = token
    return entries


def group_by_chars(entries: list[TokenLogprob], chars: int) -> list[tuple[str, list[TokenLogprob]]]:
    """Stream pieces on token boundaries: consecutive tokens gathered while the piece stays within `chars`
    code points (a longer token is a piece of its own), each piece with its entries. The pieces join to
    the text and their entries, in order, are `entries`."""
    groups: list[tuple[str, list[TokenLogprob]]] = []
    text = ""
    members: list[TokenLogprob] = []
    for entry in entries:
        token = entry["token"]
        if members and len(text) + len(token) > chars:
            groups.append((text, members))
            text, members = "", []
        text += token
        members.append(entry)
    if members:
        groups.append((text, members))
    return groups
