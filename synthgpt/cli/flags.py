"""Argument types shared by the commands' flags (`serve`, `explain`, …).

They raise ArgumentTypeError, whose message argparse prints as is; a ValueError would print as
"invalid _positive value: 'x'", naming the function instead of what is wanted.
"""

from __future__ import annotations

import argparse

__all__ = ["clock", "hosts", "non_negative", "port", "positive", "seconds", "whole"]


def whole(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None


def positive(value: str) -> int:
    n = whole(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def non_negative(value: str) -> int:
    n = whole(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def port(value: str) -> int:
    n = whole(value)
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, got {n}")
    return n


def seconds(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {value!r}") from None
    if not 0 < n < 86400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {value}")
    return n


def hosts(value: str) -> tuple[str, ...]:
    from ..server.hosts import check_host_pattern

    try:
        return tuple(check_host_pattern(h.strip()) for h in value.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def clock(value: str) -> str:
    from ..clock import parse_clock

    try:
        parse_clock(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
