"""`MixedSeeds.with_outputs` for many parents at once: each lane mixes its own parent's seed.

A compiled schema mixes an object's property seeds in one wide operation (`seeding.MixedSeeds`), one call
per object. Sibling objects (an order's customer and totals, an array's items) each made that call from
their own seed; `LaneMix` takes all their lanes in one call, each lane holding the seed of the parent it
belongs to, for ~3 µs a call saved per sibling. It writes the same SplitMix64 steps as `MixedSeeds` (its
lanes of 128 bits, the same masks), so every seed and output is the one the parent's own call gives
(`tests/generators/test_seed_lanes.py` compares them).

This is a helper of `seeding`'s mixing kept beside its one user, the compiled schema.
"""

from __future__ import annotations

import struct

from ..seeding import _GAMMA, _MASK, _MIX1, _MIX2

__all__ = ["LaneMix"]


class LaneMix:
    """For lane i: the seed `mix_seed(seeds[i], keys[i])` and the output its `then` pair asks for, as
    `MixedSeeds((keys[i],), (then[i],)).with_outputs(seeds[i])` gives them, all lanes in one pass."""

    __slots__ = ("_gammas", "_keys", "_mask", "_pack", "_size", "_steps", "_unpack", "_xs")

    def __init__(self, keys: tuple[int, ...], then: tuple[tuple[int, int], ...]) -> None:
        if len(then) != len(keys) or not keys:
            raise ValueError(f"LaneMix: {len(keys)} keys and {len(then)} `then` pairs")
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
        mask = self._mask
        z = int.from_bytes(self._pack(*seeds), "little")
        z = ((z ^ self._keys) + self._gammas) & mask
        z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
        z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
        s = (z ^ (z >> 31)) & mask
        z = ((s ^ self._xs) + self._steps) & mask
        z = (((z ^ (z >> 30)) & mask) * _MIX1) & mask
        z = (((z ^ (z >> 27)) & mask) * _MIX2) & mask
        unpack, size = self._unpack, self._size
        return unpack(s.to_bytes(size, "little")), unpack((z ^ (z >> 31)).to_bytes(size, "little"))
