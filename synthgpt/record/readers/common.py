"""Lenient accessors for upstream JSON: a provider's answer is data to read, never to trust the shape of."""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["as_dict", "as_int", "as_list", "as_str"]

_D = TypeVar("_D", int, None)


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any, default: _D = 0) -> int | _D:  # type: ignore[assignment]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return default
