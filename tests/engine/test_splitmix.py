"""SplitMix64 as `seeding` makes it, compiled (`splitmix`'s machine integers) or not (wide Python ints): every
mix and output is the reference's, written here with unbounded ints masked to 64 bits after each step."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import native, splitmix
from synthgpt.seeding import DrawRandom, LaneMix, MixedSeeds, first_outputs, mix_seed

_M = 2**64 - 1
_GAMMA = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return z ^ (z >> 31)


def _mix_seed(seed: int, key: int) -> int:
    return _mix(((seed ^ key) + _GAMMA) & _M)


def _outputs(state: int, count: int) -> list[int]:
    out = []
    for _ in range(count):
        state = (state + _GAMMA) & _M
        out.append(_mix(state))
    return out


def _with_outputs(seed: int, key: int, x: int, step: int) -> tuple[int, int]:
    s = _mix_seed(seed, key)
    return s, _mix(((s ^ x) + step * _GAMMA) & _M)


# the edges of a 64-bit value, signed and unsigned, and values no 64 bits hold
_EDGES = [0, 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -1, -(2**63), 2**100 + 5, _GAMMA]
words = st.one_of(st.sampled_from(_EDGES), st.integers(0, _M), st.integers(-(2**70), 2**70))
keys = st.one_of(st.sampled_from(_EDGES[:6]), st.integers(0, _M))
thens = st.tuples(keys, st.integers(0, 9))
Pair = tuple[int, tuple[int, int]]
counts = st.one_of(st.sampled_from([0, 1, 2, 3, 64, 65]), st.integers(0, 70))


@settings(max_examples=300, deadline=None)
@given(seed=words, count=counts)
def test_outputs_are_the_references(seed: int, count: int) -> None:
    assert first_outputs(seed, count) == _outputs(seed & _M, count)
    rng = DrawRandom(seed)
    assert rng.next64s(count) == _outputs(seed & _M, count)
    assert rng.next64() == _outputs(seed & _M, count + 1)[-1]  # the state moved on by `count` draws


@settings(max_examples=300, deadline=None)
@given(seed=words, pairs=st.lists(st.tuples(keys, thens), max_size=70))
def test_mixes_and_their_outputs_are_the_references(seed: int, pairs: list[Pair]) -> None:
    ks = tuple(k for k, _ in pairs)
    ts = tuple(t for _, t in pairs)
    assert MixedSeeds(ks)(seed) == tuple(_mix_seed(seed, k) for k in ks)
    want = [_with_outputs(seed, k, x, step) for k, (x, step) in pairs]
    got = MixedSeeds(ks, ts).with_outputs(seed)
    assert got == (tuple(s for s, _ in want), tuple(o for _, o in want))
    assert all(mix_seed(seed, k) == s for k, (s, _) in zip(ks, want, strict=True))


@settings(max_examples=200, deadline=None)
@given(lanes=st.lists(st.tuples(st.integers(0, _M), keys, thens), min_size=1, max_size=70))
def test_lanes_of_many_parents_are_the_references(lanes: list[tuple[int, int, tuple[int, int]]]) -> None:
    seeds = tuple(s for s, _, _ in lanes)
    mix = LaneMix(tuple(k for _, k, _ in lanes), tuple(t for _, _, t in lanes))
    want = [_with_outputs(s, k, x, step) for s, k, (x, step) in lanes]
    assert mix(seeds) == (tuple(s for s, _ in want), tuple(o for _, o in want))


_SIZES = [1, 2, 3, 7, 21, 22, 1000, 2**31, 2**32 - 1, 2**32]


@settings(max_examples=300, deadline=None)
@given(seed=words, n=st.one_of(st.sampled_from(_SIZES), st.integers(1, 2**32)), a=st.integers(-(2**40), 2**9))
def test_each_kind_of_draw_is_the_references(seed: int, n: int, a: int) -> None:
    """`DrawRandom`'s own draws, one output each: in a row from one state, each the reference's mapping of
    the next output (multiply-shift for an index, the top 53 bits for a float)."""
    rng, want = DrawRandom(seed), iter(_outputs(seed & _M, 9))
    assert rng.next64() == next(want)
    assert rng.getrandbits(64) == next(want)
    assert rng.random() == (next(want) >> 11) * 2.0**-53
    assert rng.randint(a, a + n - 1) == a + ((next(want) * n) >> 64)
    assert rng._randbelow(n) == (next(want) * n) >> 64
    seq = range(n)
    assert rng.choice(seq) == (next(want) * n) >> 64
    pool = list(range(min(n, 21)))
    first = (next(want) * len(pool)) >> 64
    second_pool = [*pool]
    second_pool[first] = second_pool[-1]
    second = second_pool[(next(want) * (len(pool) - 1)) >> 64] if len(pool) > 1 else None
    picked = rng.sample(pool, 2 if len(pool) > 1 else 1)
    assert picked == ([pool[first], second] if len(pool) > 1 else [pool[first]])
    assert rng.getstate()[1] == ((seed & _M) + (6 + len(picked)) * _GAMMA) & _M  # one step per output


def test_a_state_set_out_of_range_draws_from_its_low_64_bits() -> None:
    for state in (-1, 2**64, 2**64 + 5, -(2**70)):
        rng = DrawRandom()
        rng.setstate(("splitmix64", state, None))
        assert rng.next64() == _outputs(state & _M, 1)[0]
        rng.setstate(("splitmix64", state, None))
        assert rng.randint(1, 6) == 1 + ((_outputs(state & _M, 1)[0] * 6) >> 64)


@pytest.mark.skipif(not native.active(), reason="splitmix wraps at 64 bits only compiled (synthgpt.native)")
def test_the_machine_functions_are_what_seeding_runs_compiled() -> None:
    from synthgpt import seeding

    assert seeding._COMPILED
    assert splitmix.signed(2**64 - 1) == -1 and splitmix.signed(-1) == -1
    assert splitmix.signed(2**63) == -(2**63) and splitmix.signed(2**63 - 1) == 2**63 - 1
    assert splitmix.outputs(2**64 - 1, 3) == _outputs(2**64 - 1, 3)
    assert splitmix.mixed(5, (splitmix.signed(_M),)) == (_mix_seed(5, _M),)
