"""The faster paths of `seeding` give the values of the general ones: `seed_after` of an int without
`_framed`'s call, and `DrawRandom` keeping `gauss_next` as a class default until a `gauss` stores one.
Exact values are XXH3's, computed with the xxhash module's general hash."""

from __future__ import annotations

import copy
import pickle

import pytest

from synthgpt.seeding import DrawRandom, _framed, derive_seed, seed_after, seed_prefix


def _general_seed_after(prefix: bytes, part: object) -> int:
    import xxhash

    return xxhash.xxh3_64(prefix + _framed(part)).intdigest()


class _Int(int):
    def __str__(self) -> str:  # a subclass may write itself otherwise: it must take the general way
        return "other"


@pytest.mark.parametrize(
    "part",
    [0, 1, -1, -7, 12345, 2**63, 2**64 - 1, -(2**64), 10**254, 10**255, 10**256, 10**300, True, False,
     _Int(5), "12345", b"12345", 1.5],
)  # fmt: skip
@pytest.mark.parametrize("prefix", [b"", seed_prefix(1, "default"), seed_prefix(0, "x" * 300)])
def test_seed_after_is_the_general_hash(prefix: bytes, part: object) -> None:
    assert seed_after(prefix, part) == _general_seed_after(prefix, part)


def test_seed_after_pinned_values() -> None:
    assert seed_after(seed_prefix(1, "default"), 12345) == 10476954443277113177
    assert seed_after(seed_prefix(1, "default"), -7) == 3891371602188232286
    assert seed_after(b"", 10**300) == 10571026813310721560  # 301 digits: a 4-byte length of its own
    assert seed_after(b"", True) == 90329672144247615  # a bool is written "True", not "1"
    assert seed_after(seed_prefix(1, "default"), 99) == derive_seed(1, "default", 99)


def test_gauss_pairs_and_state_as_before() -> None:
    r = DrawRandom(5)
    assert r.getstate() == ("splitmix64", 5, None)
    assert [r.gauss(0, 1) for _ in range(3)] == [-1.2653822889609598, 1.0908428834740542, 0.04959953640915989]
    assert r.getstate() == ("splitmix64", 8709371129873690713, 0.4547455122900383)


def test_a_kept_gauss_value_survives_copy_pickle_and_reseeding() -> None:
    r = DrawRandom(5)
    r.gauss(0, 1)
    for other in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert other.gauss(0, 1) == 1.0908428834740542
        assert other.getstate() == ("splitmix64", 4354685564936845359, None)
    r.seed(7)  # reseeding forgets the kept value
    assert r.getstate() == ("splitmix64", 7, None)
    fresh = DrawRandom(0)
    fresh.setstate(("splitmix64", 5, 0.25))  # a kept value restored from a state
    assert fresh.gauss(0, 1) == 0.25
    assert DrawRandom(1).gauss_next is None  # other RNGs do not see it: it was kept on the instance
