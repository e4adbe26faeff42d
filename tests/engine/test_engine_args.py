"""MockGPT's constructor arguments, checked by `check_engine_args` when a MockGPT is built."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt._validation import check_engine_args
from synthgpt.errors import RuleError


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("abc",), "MockGPT: seed must be a whole number, got 'abc'"),
        ((1.5,), "MockGPT: seed must be a whole number, got 1.5"),
        ((True,), "MockGPT: seed must be a whole number, got True"),
        ((None,), "MockGPT: seed must be a whole number, got None"),
        ((0, 0), "MockGPT: context_window must be >= 1, got 0"),
        ((0, 8.0), "MockGPT: context_window must be a whole number, got 8.0"),
        ((0, None, -1), "MockGPT: journal_size must be >= 0, got -1"),
        ((0, None, "10"), "MockGPT: journal_size must be a whole number, got '10'"),
    ],
)
def test_wrong_engine_arguments_are_rule_errors(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(RuleError) as info:
        check_engine_args(*args)
    assert str(info.value) == message


def test_good_engine_arguments_give_the_seed() -> None:
    assert check_engine_args(-7) == -7
    assert check_engine_args(2**70, 1, 0) == 2**70
    assert check_engine_args(3, None, 1000) == 3


def test_mockgpt_checks_its_arguments() -> None:
    from synthgpt import MockGPT

    with pytest.raises(RuleError, match=r"^MockGPT: seed must be a whole number, got 1\.5$"):
        MockGPT(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(RuleError, match=r"^MockGPT: context_window must be >= 1, got 0$"):
        MockGPT(context_window=0)
    assert MockGPT(seed=7).seed == 7
