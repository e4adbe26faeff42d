"""`LaneMix`: each lane's seed and output are what `MixedSeeds.with_outputs` gives from its own parent's
seed, for any keys, `then` pairs and seeds (the compiled schema mixes sibling objects' lanes with it)."""

from __future__ import annotations

import random

import pytest

from synthgpt.seeding import LaneMix, MixedSeeds, mix_seed

_THENS = [(0, 0), (0, 1), (0, 2), (0, 5), (12345, 1), (2**64 - 1, 1), (2**63, 3)]
_SEEDS = [0, 1, 2**64 - 1, 2**63, 0x9E3779B97F4A7C15]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 17, 64])
def test_each_lane_is_its_parents_own_mix(count: int) -> None:
    rng = random.Random(count)
    for _ in range(200):
        keys = tuple(rng.choice([rng.getrandbits(64), 0, 2**64 - 1]) for _ in range(count))
        thens = tuple(rng.choice([*_THENS, (rng.getrandbits(64), rng.randint(0, 9))]) for _ in range(count))
        seeds = tuple(rng.choice([*_SEEDS, rng.getrandbits(64)]) for _ in range(count))
        got_seeds, got_outs = LaneMix(keys, thens)(seeds)
        for i in range(count):
            alone = MixedSeeds((keys[i],), (thens[i],)).with_outputs(seeds[i])
            assert (got_seeds[i], got_outs[i]) == (alone[0][0], alone[1][0])
            assert got_seeds[i] == mix_seed(seeds[i], keys[i])


def test_lanes_of_one_parent_are_its_wide_mix() -> None:
    rng = random.Random(7)
    for n in range(2, 12):
        keys = tuple(rng.getrandbits(64) for _ in range(n))
        thens = tuple(rng.choice(_THENS) for _ in range(n))
        seed = rng.getrandbits(64)
        assert LaneMix(keys, thens)((seed,) * n) == MixedSeeds(keys, thens).with_outputs(seed)


def test_keys_and_pairs_must_match() -> None:
    with pytest.raises(ValueError):
        LaneMix((1, 2), ((0, 1),))
    with pytest.raises(ValueError):
        LaneMix((), ())
