"""The only place an RNG is made: seeds derive from labels by hashing, never from global state."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import struct
from typing import Any

__all__ = ["canonical_json", "derive_seed", "make_rng", "token_from_seed"]

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HEX = "0123456789abcdef"
_LENGTH = struct.Struct("<I").pack
# what json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str) builds on
# every call
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts; stable across processes, platforms and Python versions.

    Each part is length-prefixed so ("ab", "c") and ("a", "bc") differ.
    """
    chunks: list[bytes] = []
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode()
        chunks.append(_LENGTH(len(data)))
        chunks.append(data)
    # one hash call over the joined bytes: the same digest as updating part by part, at half the cost
    return int.from_bytes(hashlib.blake2b(b"".join(chunks), digest_size=8).digest(), "little")


def make_rng(seed: int) -> random.Random:
    return random.Random(seed)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: the form fingerprints are taken from."""
    return _CANONICAL.encode(value)


def token_from_seed(seed: int, length: int, alphabet: str = _ALPHABET) -> str:
    """A string of `length` characters from `alphabet` derived from `seed` (for ids)."""
    out: list[str] = []
    state = seed
    n = len(alphabet)
    pairs = _pair_table(alphabet) if alphabet != _HEX and n <= 256 else None
    counter = 0
    done = 0
    while done < length:
        counter += 1
        digest = hashlib.blake2b(f"{state}:{counter}".encode(), digest_size=16).digest()
        block = int.from_bytes(digest, "little")
        take = min(16, length - done)
        done += take
        if alphabet == _HEX:
            # base-16 digits, least significant first: what repeated divmod by 16 yields, in one step
            out.extend(format(block, "032x")[::-1][:take])
            continue
        if pairs is not None:
            # two base-n digits per divmod by n*n (least significant first, as below): half the big-int work
            nn = n * n
            for _ in range(take >> 1):
                block, r = divmod(block, nn)
                out.append(pairs[r])
            if take & 1:
                out.append(alphabet[block % n])
            continue
        for _ in range(take):
            block, r = divmod(block, n)
            out.append(alphabet[r])
    return "".join(out)


@functools.lru_cache(maxsize=8)
def _pair_table(alphabet: str) -> tuple[str, ...]:
    """Entry r: the two digits divmod by n then by n would give for r (low digit first)."""
    n = len(alphabet)
    return tuple(alphabet[r % n] + alphabet[r // n] for r in range(n * n))
