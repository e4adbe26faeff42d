"""The draw's RNG (`seeding.DrawRandom`) and fork keys: fixed values, every `random.Random` method, and
the same values in every process whatever its hash seed."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from synthgpt.generators.core import DrawContext, item_key
from synthgpt.model import ModelRequest
from synthgpt.seeding import DrawRandom, MixedSeeds, first_outputs, label_key, mix_seed

_CHAIN = """
from synthgpt.generators.core import DrawContext
from synthgpt.model import ModelRequest
ctx = DrawContext(ModelRequest(), 12345)
for label in ("text", ("field", "name"), ("item", 3), ("one_of", 1), ("field", "x\u00e9")):
    ctx = ctx.fork(label)
print(ctx.seed, ctx.rng.random(), ctx.rng.choice("abcdefghij"), ctx.rng.randint(1, 6))
"""


def test_values_are_pinned() -> None:
    # SplitMix64 from seed 0: its published first outputs
    rng = DrawRandom(0)
    assert [rng.getrandbits(64) for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]  # fmt: skip
    rng = DrawRandom(42)
    assert (rng.randint(1, 6), rng.choice("abcdef"), rng.random()) == (5, "a", 0.27860113025513866)


def test_same_seed_same_values_and_every_random_method_works() -> None:
    a, b = DrawRandom(7), DrawRandom(7)
    seq = list(range(20))
    for rng in (a, b):
        rng.shuffle(seq)
    draws = [
        (r.random(), r.uniform(1, 2), r.randrange(0, 100, 5), r.randint(-3, 3), r.choice("xyz"),
         r.choices("abc", weights=[1, 2, 3], k=4), r.sample(range(50), 5), r.gauss(0, 1),
         r.getrandbits(7), r.getrandbits(130), r.randbytes(5), r.randrange(10**30), r.triangular())
        for r in (a, b)
    ]  # fmt: skip
    assert draws[0] == draws[1]
    assert 0 <= draws[0][8] < 2**7 and 0 <= draws[0][9] < 2**130 and 0 <= draws[0][11] < 10**30


def test_state_round_trips_and_reseeding_restarts() -> None:
    rng = DrawRandom(99)
    state = rng.getstate()
    first = [rng.random() for _ in range(5)]
    rng.setstate(state)
    assert [rng.random() for _ in range(5)] == first
    rng.seed(99)
    assert [rng.random() for _ in range(5)] == first
    rng.seed("text")  # any hashable seed, as random.Random takes, without the process's str hash
    assert rng.random() == DrawRandom(label_key("text")).random() == 0.8305775165663504


def test_indices_cover_the_range_evenly() -> None:
    rng = DrawRandom(3)
    counts = [0] * 6
    for _ in range(60_000):
        counts[rng.randint(0, 5)] += 1
    assert all(9_400 < c < 10_600 for c in counts)
    assert {rng.choice("ab") for _ in range(100)} == {"a", "b"}
    with pytest.raises(IndexError):
        rng.choice([])
    with pytest.raises(ValueError):
        rng.randint(5, 1)


def test_labels_that_are_equal_keys_but_different_text_stay_apart() -> None:
    # ("item", 1) == ("item", True) as dict keys; which of them was seen first must not decide a seed
    assert label_key(("item", True)) != label_key(("item", 1))
    assert label_key(("item", 1)) == item_key(1)
    assert label_key("x") != label_key(("x",))


def test_fork_depends_on_the_parent_seed_and_the_label_only() -> None:
    ctx = DrawContext(ModelRequest(), 5, now=3.0, rule="r")
    child = ctx.fork(("field", "a"))
    assert child.seed == mix_seed(5, label_key(("field", "a")))
    assert (child.now, child.rule, child.request) == (3.0, "r", ctx.request)
    assert ctx.fork("x").rng.random() == DrawContext(ModelRequest(), 5).fork("x").rng.random()
    assert len({ctx.fork(("item", i)).seed for i in range(1000)}) == 1000
    assert isinstance(ctx.rng, random.Random)


@pytest.mark.parametrize("hash_seed", ["0", "1", "12345"])
def test_forks_draw_alike_in_every_process(hash_seed: str) -> None:
    here = subprocess.run(
        [sys.executable, "-c", _CHAIN], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "7", "PATH": ""},
    ).stdout  # fmt: skip
    there = subprocess.run(
        [sys.executable, "-c", _CHAIN], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
    ).stdout  # fmt: skip
    assert here == there and here.strip()


def test_sample_takes_the_draws_random_sample_takes() -> None:
    for seed in range(50):
        for n in (1, 5, 9, 21, 30):
            for k in (0, 1, n // 2, n):
                for population in (tuple(range(n)), list(range(n))):
                    mine, theirs = DrawRandom(seed), DrawRandom(seed)
                    assert mine.sample(population, k) == random.Random.sample(theirs, population, k)
                    assert mine.getstate() == theirs.getstate()  # as many draws taken
    with pytest.raises(ValueError):
        DrawRandom(1).sample((1, 2), 3)


def test_copies_and_pickles_continue_the_same_stream() -> None:
    import copy
    import pickle

    rng = DrawRandom(5)
    rng.random()
    copied, unpickled = copy.deepcopy(rng), pickle.loads(pickle.dumps(rng))
    assert rng.random() == copied.random() == unpickled.random()


def test_a_batch_of_outputs_is_the_outputs_one_by_one() -> None:
    seeds = [0, 1, 2**64 - 1, 123456789, *(random.Random(3).getrandbits(64) for _ in range(40))]
    for seed in seeds:
        for count in (0, 1, 2, 3, 4, 7, 10, 30, 63, 64, 65, 100):
            batched, one_by_one = DrawRandom(seed), DrawRandom(seed)
            assert batched.next64s(count) == [one_by_one.getrandbits(64) for _ in range(count)]
            assert batched.getstate() == one_by_one.getstate()


_ODD_SEEDS = [0, 1, -1, -(2**70) + 3, 2**64 - 1, 2**64, 2**200 + 5, 123456789]


def test_first_outputs_are_a_new_rngs_outputs() -> None:
    seeds = [*_ODD_SEEDS, *(random.Random(4).getrandbits(64) for _ in range(40))]
    for seed in seeds:
        for count in (0, 1, 2, 3, 4, 7, 10, 63, 64, 65, 100):
            assert first_outputs(seed, count) == DrawRandom(seed).next64s(count)


def test_mixed_seeds_are_mix_seed_of_each_key() -> None:
    """`MixedSeeds` (a template's fork seeds at once, in lanes) gives what `mix_seed` gives key by key, for
    every number of keys (the lanes from 3 to 64, one by one otherwise) and for seeds outside 64 bits."""
    rng = random.Random(5)
    for count in range(70):
        keys = tuple(rng.getrandbits(64) for _ in range(count))
        mixed = MixedSeeds(keys)
        for seed in [*_ODD_SEEDS, *(rng.getrandbits(64) for _ in range(20))]:
            assert mixed(seed) == tuple(mix_seed(seed, k) for k in keys)
    # the keys of a template's draws, as `PlainRender` uses them
    from synthgpt.generators.template import template_key

    keys = tuple(template_key(i) for i in range(9))
    assert MixedSeeds(keys)(77) == tuple(mix_seed(77, k) for k in keys)


def test_mixed_seeds_with_outputs_are_mixes_and_rng_outputs() -> None:
    """`MixedSeeds.with_outputs`: each key's `mix_seed`, then the output its (key, steps) pair asks for,
    against `mix_seed` and a `DrawRandom` stepped by hand, for every number of keys (lanes from 2 to 64,
    one by one otherwise) and for seeds outside 64 bits."""
    rng = random.Random(6)
    for count in range(70):
        keys = tuple(rng.getrandbits(64) for _ in range(count))
        then = tuple(
            (rng.choice([0, rng.getrandbits(64), 2**64 + 3]), rng.randint(0, 4)) for _ in range(count)
        )
        mixed = MixedSeeds(keys, then)
        for seed in [*_ODD_SEEDS, *(rng.getrandbits(64) for _ in range(10))]:
            seeds, outputs = mixed.with_outputs(seed)
            assert seeds == mixed(seed) == tuple(mix_seed(seed, k) for k in keys)
            for s, (x, steps), out in zip(seeds, then, outputs, strict=True):
                assert out == mix_seed((s ^ x) + (steps - 1) * 0x9E3779B97F4A7C15, 0)
                if steps == 1:
                    assert out == mix_seed(s, x)
                if x == 0 and steps >= 1:
                    stepped = DrawRandom(s)
                    for _ in range(steps - 1):
                        stepped.random()
                    assert out == stepped.next64()
    with pytest.raises(ValueError):
        MixedSeeds((1, 2)).with_outputs(3)
    with pytest.raises(ValueError):
        MixedSeeds((1, 2), ((0, 1),))
    assert MixedSeeds(()).with_outputs(5) == ((), ())
