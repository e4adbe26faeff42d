"""SplitMix64 in machine integers, for the compiled build only (`synthgpt.native`).

`seeding` mixes seeds and makes outputs with Python's unbounded ints, masked to 64 bits after each step,
many lanes in one wide integer where it can. Every such step makes a new integer object: a nested schema's
document took ~130 k instructions of mixes. Compiled, the same steps on `i64` values are a few machine
instructions each: their sums and products wrap around at 2**64 by themselves (mypyc builds with
`-fwrapv`), and a right shift, which keeps the sign, is masked to the bits a logical shift keeps. The
numbers are the same, handed back as unsigned Python ints. Interpreted, an `i64` is an int that never
wraps, so `seeding` calls these only in the compiled build (`tests/test_splitmix.py` holds them to its own).

Keys, `then` values and steps come in as signed (`signed`), made once by their owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mypy_extensions import i64

__all__ = ["below", "mixed", "mixed_with_outputs", "next64", "outputs", "signed", "unit"]

_GAMMA: Final = -7046029254386353131  # 0x9E3779B97F4A7C15, SplitMix64's increment, as a signed 64-bit value
_MIX1: Final = -4658895280553007687  # 0xBF58476D1CE4E5B9
_MIX2: Final = -7723592293110705685  # 0x94D049BB133111EB
_LOW34: Final = 0x3FFFFFFFF  # what `>> 30` of a 64-bit value keeps
_LOW37: Final = 0x1FFFFFFFFF  # `>> 27`
_LOW33: Final = 0x1FFFFFFFF  # `>> 31`
_TWO63: Final = 1 << 63
_TWO64: Final = 1 << 64
_MASK: Final = (1 << 64) - 1


def signed(value: int) -> int:
    """The low 64 bits of `value` as a signed 64-bit value (what an `i64` parameter takes)."""
    low = value & _MASK
    return low - _TWO64 if low >= _TWO63 else low


def _unsigned(value: i64) -> int:
    wide: int = value
    return wide + _TWO64 if value < 0 else wide


def _mix(z: i64) -> i64:
    """SplitMix64's output function."""
    z = (z ^ ((z >> 30) & _LOW34)) * _MIX1
    z = (z ^ ((z >> 27) & _LOW37)) * _MIX2
    return z ^ ((z >> 31) & _LOW33)


def outputs(state: int, count: int) -> list[int]:
    """The `count` outputs after `state` (any int: its low 64 bits), as `seeding._outputs` makes them."""
    z: i64 = signed(state)
    out: list[int] = []
    for _ in range(count):
        z += _GAMMA
        out.append(_unsigned(_mix(z)))
    return out


def mixed(seed: int, keys: tuple[int, ...]) -> tuple[int, ...]:
    """`mix_seed(seed, key)` for each of `keys` (signed)."""
    s: i64 = signed(seed)
    out: list[int] = []
    for key in keys:
        k: i64 = key
        out.append(_unsigned(_mix((s ^ k) + _GAMMA)))
    return tuple(out)


def mixed_with_outputs(
    seeds: tuple[int, ...], keys: tuple[int, ...], xs: tuple[int, ...], steps: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For lane i: the seed `mix_seed(seeds[i], keys[i])` and SplitMix64's output over `(that seed ^ xs[i]) +
    steps[i]` (`seeding._mix_twice`); `seeds` is one for every lane, or one per lane, any ints (their low
    64 bits), the others signed."""
    one = len(seeds) == 1
    first: i64 = signed(seeds[0])
    mixes: list[int] = []
    outs: list[int] = []
    for i in range(len(keys)):
        seed: i64 = first if one else signed(seeds[i])
        key: i64 = keys[i]
        x: i64 = xs[i]
        step: i64 = steps[i]
        s = _mix((seed ^ key) + _GAMMA)
        mixes.append(_unsigned(s))
        outs.append(_unsigned(_mix((s ^ x) + step)))
    return tuple(mixes), tuple(outs)


# `DrawRandom`'s own draws, one output each: its state (below 2**64) in, the next state out with the draw.


def _state(state: int) -> i64:
    """A `DrawRandom` state as a signed 64-bit value: one below 2**64 without masking it first (`setstate`
    may have been given any int: its low 64 bits, as the interpreted steps take them)."""
    if state < 0 or state >= _TWO64:
        return signed(state)
    value: i64 = state - _TWO64 if state >= _TWO63 else state
    return value


def next64(state: int) -> tuple[int, int]:
    """(the next state, the next 64-bit output)."""
    s = _state(state) + _GAMMA
    return _unsigned(s), _unsigned(_mix(s))


def below(state: int, n: int) -> tuple[int, int]:
    """(the next state, the next output mapped below `n`, 0 < n <= 2**32, by multiply-shift: the high 64
    bits of output * n, from the halves of the output, as no 128-bit product is at hand)."""
    s = _state(state) + _GAMMA
    z = _mix(s)
    m: i64 = n
    high = ((z >> 32) & 0xFFFFFFFF) * m  # below 2**64, wrapped if at or past 2**63
    low = (((z & 0xFFFFFFFF) * m) >> 32) & 0xFFFFFFFF
    # their sum is still below 2**64: a logical shift of it by 32 is the product's high 64 bits
    return _unsigned(s), ((high + low) >> 32) & 0xFFFFFFFF


def unit(state: int) -> tuple[int, float]:
    """(the next state, the next output's top 53 bits as a float in [0, 1): `random.random`'s form)."""
    s = _state(state) + _GAMMA
    bits: i64 = (_mix(s) >> 11) & 0x1FFFFFFFFFFFFF
    return _unsigned(s), float(bits) * 1.1102230246251565e-16  # 2**-53
