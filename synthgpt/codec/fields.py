"""The field readers every API's decoder shares, each refusal worded the way that API words it.

A reader takes the body (a dict parsed by `codec.envelope`), a key and its bounds, and returns the value
checked once (or None when absent or null); anything else is a RequestError naming the field. What differs
between APIs is only the wording, so each API has a `Wording` and a `Fields` over it:

- `CHAT`: Chat Completions ("Invalid type for 'n': expected an integer, but got a string instead.",
  no error code, as its pinned error bodies have it; sampling ranges as "expected a value between 0 and 2");
- `OPENAI`: Responses and embeddings (the same sentences, with OpenAI's error codes: `invalid_type`,
  `integer_below_min_value`, `decimal_above_max_value`, …);
- `ANTHROPIC`: Messages (`temperature: Input should be less than or equal to 1`).

A decoder calls them for the common fields (model, stream, max tokens, temperature/top_p, n, stop, metadata,
user, …) instead of keeping its own copies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError
from .common import type_error

__all__ = ["ANTHROPIC", "CHAT", "OPENAI", "Fields", "Wording"]

_EXPECTED = {"string": "a string", "boolean": "a boolean", "integer": "an integer", "number": "a number",
             "decimal": "a decimal", "object": "an object", "list": "an array of strings"}  # fmt: skip
_ANTHROPIC_EXPECTED = {
    "string": "a valid string", "boolean": "a valid boolean", "integer": "a valid integer",
    "number": "a valid number", "decimal": "a valid number", "object": "a valid dictionary",
    "list": "a valid list",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Wording:
    """How one API words a refused field."""

    codes: bool
    """OpenAI's error codes (`invalid_type`, `integer_below_min_value`, …) go with the messages."""
    anthropic: bool = False
    """`param: Input should be …`, as Anthropic's validation errors read."""
    ranges_between: bool = False
    """A sampling value out of range reads "expected a value between lo and hi" (Chat)."""

    def wrong_type(self, param: str, kind: str, value: Any) -> RequestError:
        if self.anthropic:
            return RequestError(f"{param}: Input should be {_ANTHROPIC_EXPECTED[kind]}", param)
        return type_error(param, _EXPECTED[kind], value, code="invalid_type" if self.codes else None)

    def missing(self, param: str) -> RequestError:
        if self.anthropic:
            return RequestError(f"{param}: Field required", param)
        return RequestError(f"Missing required parameter: '{param}'.", param,
                            code="missing_required_parameter" if self.codes else None)  # fmt: skip

    def out_of_range(
        self, param: str, kind: str, value: int | float, lo: int | float | None, hi: int | float | None
    ) -> RequestError:
        # `int | float`, not `float`: compiled (synthgpt.native), a `float` parameter turns an int into a
        # float, and the message would quote -1 as -1.0
        above = lo is None or not value < lo
        if self.anthropic:
            bound = f"less than or equal to {hi:g}" if above else f"greater than or equal to {lo:g}"
            return RequestError(f"{param}: Input should be {bound}", param)
        if self.ranges_between and kind != "integer":
            return RequestError(
                f"Invalid '{param}': expected a value between {lo:g} and {hi:g}, but got {value} instead.",
                param,
            )
        side = "above maximum" if above else "below minimum"
        expect = f"<= {hi:g}" if above else f">= {lo:g}"
        code = f"{kind}_{'above_max' if above else 'below_min'}_value" if self.codes else None
        return RequestError(
            f"Invalid '{param}': {kind} {side} value. Expected a value {expect}, but got {value} instead.",
            param,
            code=code,
        )


class Fields:
    """The readers, worded by `wording`. Each returns the value, or None when it is absent or null."""

    __slots__ = ("wording",)

    def __init__(self, wording: Wording) -> None:
        self.wording = wording

    def string(self, body: Mapping[str, Any], key: str, param: str | None = None, *,
               required: bool = False) -> str | None:  # fmt: skip
        value = body.get(key)
        if value is None:
            if required:
                raise self.wording.missing(param or key)
            return None
        if not isinstance(value, str):
            raise self.wording.wrong_type(param or key, "string", value)
        return value

    def boolean(self, body: Mapping[str, Any], key: str) -> bool | None:
        value = body.get(key)
        if value is None or value is True or value is False:
            return value
        raise self.wording.wrong_type(key, "boolean", value)

    def integer(self, body: Mapping[str, Any], key: str, lo: int | None = None,
                hi: int | None = None) -> int | None:  # fmt: skip
        value = body.get(key)
        if value is None:
            return None
        if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.wording.wrong_type(key, "integer", value)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.wording.out_of_range(key, "integer", value, lo, hi)
        return value

    def sampling(self, body: Mapping[str, Any], key: str, lo: float, hi: float) -> float | None:
        """A finite number within [lo, hi] (temperature, top_p, penalties): the answer may echo it, and NaN
        or an infinity there would make the body not JSON."""
        value = body.get(key)
        if value is None:
            return None
        kind = "number" if self.wording.ranges_between else "decimal"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.wording.wrong_type(key, kind, value)
        if self.wording.anthropic and not math.isfinite(value):
            raise self.wording.wrong_type(key, kind, value)
        if not math.isfinite(value) or not lo <= value <= hi:
            raise self.wording.out_of_range(key, kind, value, lo, hi)
        return value

    def object(self, body: Mapping[str, Any], key: str) -> dict[str, Any] | None:
        value = body.get(key)
        if value is None or isinstance(value, dict):
            return value
        raise self.wording.wrong_type(key, "object", value)


CHAT = Fields(Wording(codes=False, ranges_between=True))
OPENAI = Fields(Wording(codes=True))
ANTHROPIC = Fields(Wording(codes=False, anthropic=True))
