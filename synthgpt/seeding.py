"""The only place an RNG is made: seeds derive from labels by hashing, never from global state."""

from __future__ import annotations

import functools
import random
import struct
from collections.abc import Callable
from typing import Any, Final

from xxhash import xxh3_64_intdigest, xxh3_128_digest

from . import native as _build
from . import splitmix as _machine
from .jsonutil import canonical_json

__all__ = [
    "HEX", "DrawRandom", "LaneMix", "MixedSeeds", "canonical_json", "derive_seed", "first_outputs",
    "label_key", "make_rng", "mix_seed", "seed_after", "seed_prefix", "token_from_seed",
]  # fmt: skip

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
HEX = "0123456789abcdef"
"""The alphabet of hexadecimal ids (`token_from_seed(seed, n, HEX)`)."""
_LENGTH = struct.Struct("<I").pack


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts; stable across processes, platforms and Python versions.

    Each part is length-prefixed so ("ab", "c") and ("a", "bc") differ.
    """
    # one hash call over the joined bytes: the same digest as updating part by part, at half the cost; a
    # comprehension, not `map`: compiled (synthgpt.native), `map` calls `_framed` through its Python
    # wrapper, and a seed of three parts cost ~25 % more
    return _seed_of(b"".join([_framed(p) for p in parts]))


def _framed(part: object) -> bytes:
    """One part as `derive_seed` hashes it: its length (4 bytes, little-endian), then its bytes."""
    # the exact types first (an answer derives ~5 seeds from ints and strs): a subclass may write itself
    # otherwise than its base (`str(True)`), so it takes the general way
    kind = type(part)
    data: bytes
    if kind is str:
        data = part.encode()  # type: ignore[attr-defined]  # a str, checked above
    elif kind is int:
        data = b"%d" % part  # type: ignore[str-format]  # an int: the digits `str` writes
    else:
        data = part if isinstance(part, bytes) else str(part).encode()
    size = len(data)
    return (_LENGTHS[size] if size < 256 else _LENGTH(size)) + data


_LENGTHS = tuple(_LENGTH(n) for n in range(256))
"""The length prefixes of short parts, made once."""


def _seed_of(data: bytes) -> int:
    """The 64-bit seed of `data`: its XXH3-64 hash (seed 0).

    XXH3's output is fixed by its specification (the same on every platform, in every process and
    version of the library since xxHash 0.8), so seeds are as stable as BLAKE2b's were. No seed needs a
    cryptographic hash: a seed's bits only have to be well mixed, and a seed is mixed again before any
    value is drawn from it (SplitMix64's output function, or Faker's and `random`'s own seeding); a
    collision gives two requests one seed, nothing worse. XXH3 takes ~40 ns where BLAKE2b's reference
    code took ~450 (a chat answer derives about ten seeds and two ids).
    """
    return xxh3_64_intdigest(data)


def seed_prefix(*parts: object) -> bytes:
    """The bytes `derive_seed` hashes for `parts`, for leading parts that recur (an engine's seed and a
    rule's name, or a label): `derive_seed(*first, last)` is `seed_after(seed_prefix(*first), last)`."""
    return b"".join(map(_framed, parts))


def seed_after(prefix: bytes, part: object) -> int:
    """`derive_seed` of the parts `prefix` (a `seed_prefix`; b"" for none) holds and then `part`."""
    return _seed_of(prefix + _framed(part))


_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment: the odd integer nearest 2**64 / golden ratio
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_UNIT = 2.0**-53
_BY_BITS: Any = random.Random._randbelow_with_getrandbits  # type: ignore[attr-defined]  # private, stable
_COMPILED: Final = _build.active()
"""This module runs compiled: its lanes of mixes are `splitmix`'s machine integers, not wide Python ints."""


def mix_seed(seed: int, key: int) -> int:
    """The seed of a sub-stream `key` of `seed`: SplitMix64's output function over their xor.

    A bijection of `seed ^ key`, so distinct keys under one seed never share a sub-stream; `key` is a
    `label_key`, itself a hash, so no structure of the labels shows through.
    """
    z = ((seed ^ key) + _GAMMA) & _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


_LABEL_KEYS: dict[str, int] = {}


def label_key(label: object) -> int:
    """A 64-bit key for a fork label, hashed once per process (XXH3 of its `str`, as `derive_seed` would).

    Keyed by the label's text, never by the object: `("item", 1)` and `("item", True)` are equal dict keys
    but different labels, and which of them came first must not decide a value.
    """
    text = label if type(label) is str else str(label)
    key = _LABEL_KEYS.get(text)
    if key is None:
        if len(_LABEL_KEYS) >= 65_536:  # labels built from data (item numbers, property names) stay bounded
            _LABEL_KEYS.clear()
        key = _LABEL_KEYS[text] = derive_seed(text)
    return key


_MAX_LANES = 64


@functools.lru_cache(maxsize=_MAX_LANES)
def _lanes(count: int) -> tuple[int, int, int, Callable[[bytes], tuple[int, ...]]]:
    """For `count` lanes of 128 bits (`DrawRandom.next64s`): a 1 in each lane, `i + 1` steps of the state in
    lane i, the 64-bit mask in each lane, and what reads the lanes' low halves back from their bytes."""
    ones = sum(1 << (128 * i) for i in range(count))
    steps = sum((((i + 1) * _GAMMA) & _MASK) << (128 * i) for i in range(count))
    return ones, steps, _MASK * ones, struct.Struct("<" + "Q8x" * count).unpack


_Lanes = tuple[int, int, int, int, Callable[[bytes], tuple[int, ...]]]
"""Lanes of 1s, the keys in lanes, the first step in lanes, the mask, what reads the lanes back."""


class MixedSeeds:
    """`mix_seed(seed, key)` for each of a fixed list of keys, all at once: the seeds of a render's forks.

    A template's n-th draw forks with the n-th key; a mix costs ~0.5 µs in Python, most of it making ints.
    Here every key has a 128-bit lane of one wide integer (as in `DrawRandom.next64s`) and each step of the
    mix is one operation over all lanes: nothing crosses between lanes, as each lane's value stays below
    2**64 before a product with a 64-bit constant, and the masks clear what a shift brings down.
    """

    __slots__ = ("_keys", "_lanes", "_machine", "_then")

    def __init__(self, keys: tuple[int, ...], then: tuple[tuple[int, int], ...] = ()) -> None:
        self._keys = keys
        self._then: _Then | None = _then_lanes(keys, then) if then or not keys else None
        if _COMPILED:  # the keys, `then` keys and steps as `splitmix` takes them
            pairs = self._then[0] if self._then is not None else ()
            self._machine = _signed_all(keys, pairs)
            self._lanes: _Lanes | None = None
            return
        count = len(keys)
        if 3 <= count <= _MAX_LANES:
            ones, _, mask, unpack = _lanes(count)
            packed = sum((k & _MASK) << (128 * i) for i, k in enumerate(keys))
            self._lanes = (ones, packed, _GAMMA * ones, mask, unpack)
        else:  # a mix or two (or more keys than lanes): one by one
            self._lanes = None

    def __call__(self, seed: int) -> tuple[int, ...]:
        if _COMPILED:
            return _machine.mixed(seed, self._machine[0])
        lanes = self._lanes
        if lanes is None:
            return tuple(mix_seed(seed, k) for k in self._keys)
        ones, packed, gammas, mask, unpack = lanes
        # only the low 64 bits of `seed ^ key` reach a mix (its first step masks the sum): `seed & _MASK`
        # has the same, for a negative or wider seed too
        z = ((((seed & _MASK) * ones) ^ packed) + gammas) & mask
        z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
        z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
        # no mask after the last step: what it brings down from the next lane lands in the high half of a
        # lane, which `unpack` skips
        return unpack((z ^ (z >> 31)).to_bytes(16 * len(self._keys), "little"))

    def with_outputs(self, seed: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """`self(seed)`, and for each of those seeds the one output its `then` pair (key, steps) asks for:
        SplitMix64's output function over `((seed_i ^ key) + steps * GAMMA) mod 2**64`.

        (k, 1) is `mix_seed(seed_i, k)`, (0, 1 + j) the output of `DrawRandom(seed_i)` after j draws, and
        (0, 0) an output nobody reads. A compiled schema takes an object's property seeds this way and, in
        the same pass, what each property draws from one output (a fork of its seed, a number, an enum's
        pick, whether an optional property is there): one wide mix for an object, not a call or two and an
        RNG per property. Needs `then` (one pair per key) at construction; the lanes are those of
        `__call__`, mixed twice, from two keys on (one wide mix of two lanes already beats two mixes).
        """
        pairs = self._then
        if pairs is None:
            raise ValueError("MixedSeeds.with_outputs needs the keys' `then` pairs")
        if _COMPILED:
            return _machine.mixed_with_outputs((seed,), *self._machine)
        lanes = pairs[1]
        if lanes is None:  # one key, none, or more than lanes hold: mix by mix
            seeds = tuple(mix_seed(seed, k) for k in self._keys)
            # mix_seed(v, 0) is the output function over v + GAMMA: v is the sum with one GAMMA fewer
            outputs = (
                mix_seed((s ^ x) + step - _GAMMA, 0) for s, (x, step) in zip(seeds, pairs[0], strict=True)
            )
            return seeds, tuple(outputs)
        ones, packed, gammas, mask, xs, steps, size, unpack = lanes
        return _mix_twice(((seed & _MASK) * ones) ^ packed, gammas, mask, xs, steps, size, unpack)


_ThenLanes = tuple[int, int, int, int, int, int, int, Callable[[bytes], tuple[int, ...]]]
"""`MixedSeeds.with_outputs` in lanes: lanes of 1s, the keys, the first step and the mask in lanes, the
`then` keys and steps·GAMMA in lanes, the lanes' size in bytes, what reads them back."""
_Then = tuple[tuple[tuple[int, int], ...], _ThenLanes | None]
"""The `then` pairs as (key, steps·GAMMA), each below 2**64, and their lanes (None: mixed one by one)."""

# `MixedSeeds.with_outputs` for many parents at once: a compiled schema's sibling objects (an order's
# customer and totals, an array's items) each mixed their property seeds from their own seed, one call each;
# `LaneMix` takes all their lanes in one call, each lane holding its own parent's seed (the same SplitMix64
# steps and masks, so every seed and output is the one the parent's own call gives: tests/generators/
# test_seed_lanes.py).

class LaneMix:
    """For lane i: the seed `mix_seed(seeds[i], keys[i])` and the output its `then` pair asks for, as
    `MixedSeeds((keys[i],), (then[i],)).with_outputs(seeds[i])` gives them, all lanes in one pass."""

    __slots__ = ("_gammas", "_keys", "_machine", "_mask", "_pack", "_size", "_steps", "_unpack", "_xs")

    def __init__(self, keys: tuple[int, ...], then: tuple[tuple[int, int], ...]) -> None:
        if len(then) != len(keys) or not keys:
            raise ValueError(f"LaneMix: {len(keys)} keys and {len(then)} `then` pairs")
        if _COMPILED:
            self._machine = _signed_all(keys, tuple((x, (step * _GAMMA) & _MASK) for x, step in then))
            return
        count = len(keys)
        ones = sum(1 << (128 * i) for i in range(count))
        self._keys = sum((k & _MASK) << (128 * i) for i, k in enumerate(keys))
        self._gammas = _GAMMA * ones
        self._mask = _MASK * ones
        self._xs = sum((x & _MASK) << (128 * i) for i, (x, _) in enumerate(then))
        self._steps = sum(((step * _GAMMA) & _MASK) << (128 * i) for i, (_, step) in enumerate(then))
        self._size = 16 * count
        layout = struct.Struct("<" + "Q8x" * count)
        self._pack, self._unpack = layout.pack, layout.unpack

    def __call__(self, seeds: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The lanes' seeds and outputs from their parents' `seeds` (one per lane, each below 2**64)."""
        if _COMPILED:
            return _machine.mixed_with_outputs(seeds, *self._machine)
        z = int.from_bytes(self._pack(*seeds), "little") ^ self._keys
        return _mix_twice(z, self._gammas, self._mask, self._xs, self._steps, self._size, self._unpack)


def _signed_all(
    keys: tuple[int, ...], pairs: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Keys and (key, steps·GAMMA) pairs as `splitmix` takes them: keys, `then` keys, steps, each signed."""
    signed = _machine.signed
    xs = tuple(signed(x) for x, _ in pairs)
    return tuple(map(signed, keys)), xs, tuple(signed(step) for _, step in pairs)


def _mix_twice(
    z: int, gammas: int, mask: int, xs: int, steps: int, size: int, unpack: Callable[[bytes], tuple[int, ...]]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """From lanes of `seed ^ key`: each lane's mixed seed, and SplitMix64's output over
    `(that seed ^ x) + step` (`MixedSeeds.with_outputs`, `LaneMix`), read back by `unpack`."""
    z = (z + gammas) & mask
    z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
    z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
    s = (z ^ (z >> 31)) & mask  # the seeds, each below 2**64 in its lane, as the second mix needs
    z = ((s ^ xs) + steps) & mask
    z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
    z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
    return unpack(s.to_bytes(size, "little")), unpack((z ^ (z >> 31)).to_bytes(size, "little"))


def _then_lanes(keys: tuple[int, ...], then: tuple[tuple[int, int], ...]) -> _Then:
    count = len(keys)
    if len(then) != count:
        raise ValueError(f"MixedSeeds: {count} keys but {len(then)} `then` pairs")
    pairs = tuple((x & _MASK, (step * _GAMMA) & _MASK) for x, step in then)
    if not 2 <= count <= _MAX_LANES:
        return pairs, None
    ones, _, mask, unpack = _lanes(count)
    packed = sum((k & _MASK) << (128 * i) for i, k in enumerate(keys))
    xs = sum(x << (128 * i) for i, (x, _) in enumerate(pairs))
    steps = sum(step << (128 * i) for i, (_, step) in enumerate(pairs))
    return pairs, (ones, packed, _GAMMA * ones, mask, xs, steps, 16 * count, unpack)


class DrawRandom(random.Random):
    """The RNG of one draw: a `random.Random` whose state is SplitMix64 (one 64-bit counter).

    Seeding one costs an attribute store where the Mersenne Twister fills 624 words (~5 µs); a draw makes
    dozens of forks, most of which draw a value or two. Every `random.Random` method works (they build on
    `random`, `getrandbits` and `_randbelow`); the common ones are written out here, one mix each.
    Indices come from the high bits of a 64-bit product (Lemire's multiply-shift): the bias for any
    sequence shorter than 2**32 is below 2**-32.
    """

    __slots__ = ("_s",)
    gauss_next: float | None = None
    """`random.Random.gauss`'s kept second value: None, here, until a `gauss` keeps one on the instance
    (a store per RNG made, most of which never call `gauss`, cost more than the look-up here)."""

    def __init__(self, seed: int = 0) -> None:  # no super().__init__: that would seed a Mersenne Twister
        self._s = seed & _MASK

    def seed(self, a: Any = None, version: int = 2) -> None:
        self._s = (a if isinstance(a, int) else derive_seed(a)) & _MASK
        self.gauss_next = None

    def getstate(self) -> tuple[Any, ...]:
        return ("splitmix64", self._s, self.gauss_next)

    def setstate(self, state: tuple[Any, ...]) -> None:
        _, self._s, self.gauss_next = state

    # as `random.Random`'s, written again: compiled (synthgpt.native), the class would get mypyc's own
    # pair, which copies and pickles the slots without the kept `gauss` value
    def __getstate__(self) -> tuple[Any, ...]:
        return self.getstate()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.setstate(state)

    def next64(self) -> int:
        """The next 64 random bits."""
        if _COMPILED:
            self._s, out = _machine.next64(self._s)
            return out
        self._s = z = (self._s + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def next64s(self, count: int) -> list[int]:
        """The next `count` outputs of `next64` (or of `getrandbits(64)`) at once: for a caller that knows
        how many draws it makes and maps them as `choice`, `sample` and `randint` would."""
        s = self._s
        self._s = (s + count * _GAMMA) & _MASK
        return _outputs(s, count)

    def random(self) -> float:
        if _COMPILED:
            self._s, value = _machine.unit(self._s)
            return value
        self._s = z = (self._s + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _UNIT

    def getrandbits(self, k: int) -> int:
        if k == 64:
            if _COMPILED:
                self._s, out = _machine.next64(self._s)
                return out
            self._s = z = (self._s + _GAMMA) & _MASK
            z = ((z ^ (z >> 30)) * _MIX1) & _MASK
            z = ((z ^ (z >> 27)) * _MIX2) & _MASK
            return z ^ (z >> 31)
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out = got = 0
        while got < k:
            out |= self.next64() << got
            got += 64
        return out & ((1 << k) - 1)

    def _randbelow(self, n: int) -> int:
        if n > 1 << 32:  # large ranges: exact, by rejection over whole words
            return int(_BY_BITS(self, n))
        if _COMPILED:
            self._s, j = _machine.below(self._s, n)
            return j
        self._s = z = (self._s + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return ((z ^ (z >> 31)) * n) >> 64

    def choice(self, seq: Any) -> Any:
        n = len(seq)
        if not n or n > 1 << 32:
            return super().choice(seq)
        if _COMPILED:
            self._s, j = _machine.below(self._s, n)
            return seq[j]
        self._s = z = (self._s + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return seq[((z ^ (z >> 31)) * n) >> 64]

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list[Any]:
        # a short list or tuple: `random.Random.sample`'s own small-population steps (the same draws), without
        # its abstract-base-class check and method look-ups
        n = len(population) if type(population) in (tuple, list) else -1
        if counts is not None or not 0 <= k <= n or n > 21:
            return super().sample(population, k, counts=counts)
        pool = list(population)
        result = []
        # pick i is `_randbelow(n - i)` of the i-th output
        if k < 3 and _COMPILED:
            for i in range(k):
                self._s, j = _machine.below(self._s, n - i)
                result.append(pool[j])
                pool[j] = pool[n - i - 1]
            return result
        if k < 3:  # a pick or two: their mixes written out (a batch's set-up costs more)
            s = self._s
            for i in range(k):
                s = (s + _GAMMA) & _MASK
                z = ((s ^ (s >> 30)) * _MIX1) & _MASK
                z = ((z ^ (z >> 27)) * _MIX2) & _MASK
                j = ((z ^ (z >> 31)) * (n - i)) >> 64
                result.append(pool[j])
                pool[j] = pool[n - i - 1]
            self._s = s
            return result
        for i, z in enumerate(self.next64s(k)):  # more: the outputs taken at once
            j = (z * (n - i)) >> 64
            result.append(pool[j])
            pool[j] = pool[n - i - 1]
        return result

    def randint(self, a: int, b: int) -> int:
        if type(a) is not int or type(b) is not int or not 0 <= b - a < 1 << 32:
            return super().randint(a, b)
        if _COMPILED:
            self._s, j = _machine.below(self._s, b - a + 1)
            return a + j
        self._s = z = (self._s + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return a + (((z ^ (z >> 31)) * (b - a + 1)) >> 64)


def first_outputs(seed: int, count: int) -> list[int]:
    """What `DrawRandom(seed).next64s(count)` gives, without making the RNG: a caller that only maps
    outputs skips `random.Random`'s constructor, which seeds a Mersenne Twister that is never used."""
    if count == 1:  # the first output is the mix of the state's first step: `mix_seed` with key 0
        return [mix_seed(seed, 0)]
    return _outputs(seed & _MASK, count)


def _outputs(s: int, count: int) -> list[int]:
    """The `count` outputs after state `s` (below 2**64)."""
    if _COMPILED:
        return _machine.outputs(s, count)
    if not 3 <= count <= _MAX_LANES:
        out = []
        for _ in range(count):
            s = (s + _GAMMA) & _MASK
            z = ((s ^ (s >> 30)) * _MIX1) & _MASK
            z = ((z ^ (z >> 27)) * _MIX2) & _MASK
            out.append(z ^ (z >> 31))
        return out
    # Every output in one wide integer, output i in bits 128i..128i+63 (a lane): a step is one operation
    # over all lanes, not a few per output (~0.45 µs an output: most of a Python mix is making ints).
    # Nothing crosses from lane to lane: a state or a masked value is below 2**64, so a product with a
    # 64-bit constant is below 2**128, and what a right shift brings down from the next lane lands
    # above bit 64, where the mask takes it off.
    ones, steps, mask, unpack = _lanes(count)
    z = (s * ones + steps) & mask  # lane i: the state after i + 1 steps
    z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
    z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
    z = (z ^ (z >> 31)) & mask
    return list(unpack(z.to_bytes(16 * count, "little")))


def make_rng(seed: int) -> random.Random:
    """A Mersenne Twister: for long runs of draws from one seed (a stream's logprobs), where its C-speed
    draws repay its seeding; a generator's draws use `DrawRandom` (`DrawContext.rng`)."""
    return random.Random(seed)


def token_from_seed(seed: int, length: int, alphabet: str = _ALPHABET) -> str:
    """A string of `length` characters from `alphabet` (ASCII, at most 256 characters) derived from `seed`
    (for ids).

    The seed's decimal digits are hashed with XXH3-128 under the hash seeds 0, 1, 2, … (16 bytes each) and
    each byte becomes one character, `alphabet[byte % len(alphabet)]`, by one `bytes.translate`: an id
    costs a hash or two, not a big-integer division per character. A shorter token from a seed is a
    prefix of a longer one. For alphabets whose size does not divide 256 the first `256 % n` characters
    come a little more often (5/256 against 4/256 for the 62 letters and digits), which no id needs to
    hide.
    """
    table = _byte_table(alphabet)
    # the seed's digits by an f-string: compiled (synthgpt.native), `b"%d" % seed` of an int parameter
    # above 2**62 leaks a reference to the int (mypyc; tests/packaging/test_native_build.py)
    digits = f"{seed}".encode()
    blocks = [xxh3_128_digest(digits, i) for i in range((length + 15) // 16)]
    return b"".join(blocks)[:length].translate(table).decode()


@functools.lru_cache(maxsize=8)
def _byte_table(alphabet: str) -> bytes:
    """The `bytes.translate` table taking byte b to `alphabet[b % n]`."""
    if not 0 < len(alphabet) <= 256 or not alphabet.isascii():
        raise ValueError(f"token alphabet must be 1 to 256 ASCII characters, got {alphabet!r}")
    return bytes(ord(alphabet[b % len(alphabet)]) for b in range(256))
