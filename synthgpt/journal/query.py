"""Filtering, paginating and exporting journal records: what `GET /_synthgpt/calls` answers with.

    GET /_synthgpt/calls?rule=weather&api=chat&model=gpt-4o*&offset=0&limit=50
    GET /_synthgpt/calls?format=jsonl          one complete record per line (loadable again)

`rule`, `api` and `model` are glob patterns (`*`, `?`, `[…]`, case-sensitive); without `limit` every
matching record is returned. The response carries `x-total-count` (records matching the filters) and,
when more remain, a `link: <…>; rel="next"` header with the next page's query.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlencode

from ..errors import QueryError
from .memory import CallRecord
from .records import record_to_dict

if TYPE_CHECKING:
    from . import CallJournal

__all__ = ["CallQuery", "QueryError", "records_jsonl"]

_MAX_LIMIT = 10_000
_MAX_OFFSET = 10**12  # far past any journal, and a bound a person can read in the error message


def _int(params: Mapping[str, str], name: str, default: int | None, low: int, high: int) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise QueryError(f"Invalid '{name}': expected an integer, got {raw!r}.", name) from None
    if not low <= value <= high:
        raise QueryError(f"Invalid '{name}': must be between {low} and {high}, got {value}.", name)
    return value


@dataclass(frozen=True, slots=True)
class CallQuery:
    rule: str | None = None
    api: str | None = None
    model: str | None = None
    offset: int = 0
    limit: int | None = None
    format: Literal["json", "jsonl"] = "json"

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> CallQuery:
        """Raises QueryError (naming the parameter) for a bad value."""
        fmt = params.get("format", "json") or "json"
        if fmt not in ("json", "jsonl"):
            raise QueryError(f"Invalid 'format': expected 'json' or 'jsonl', got {fmt!r}.", "format")
        offset = _int(params, "offset", 0, 0, _MAX_OFFSET)
        return cls(
            rule=params.get("rule") or None,
            api=params.get("api") or None,
            model=params.get("model") or None,
            offset=offset or 0,
            limit=_int(params, "limit", None, 1, _MAX_LIMIT),
            format="jsonl" if fmt == "jsonl" else "json",
        )

    def run(self, journal: CallJournal) -> tuple[list[CallRecord], int]:
        """The page of matching records (oldest first) and how many match in all (each journal filters
        in its own way: the SQLite one in SQL, as its file may hold millions)."""
        total = journal.count(rule=self.rule, api=self.api, model=self.model)
        page = journal.query(rule=self.rule, api=self.api, model=self.model, offset=self.offset,
                             limit=self.limit)  # fmt: skip
        return page, total

    def headers(self, total: int, path: str) -> dict[str, str]:
        headers = {"x-total-count": str(total)}
        if self.limit is not None and self.offset + self.limit < total:
            params = {k: v for k, v in (("rule", self.rule), ("api", self.api), ("model", self.model)) if v}
            params.update(offset=str(self.offset + self.limit), limit=str(self.limit))
            if self.format != "json":
                params["format"] = self.format
            headers["link"] = f'<{path}?{urlencode(params)}>; rel="next"'
        return headers


def records_jsonl(records: Iterable[CallRecord]) -> bytes:
    """One complete record per line (`synthgpt.journal.record_from_dict` reads it back)."""
    lines = (json.dumps(record_to_dict(r), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                        allow_nan=False)
             for r in records)  # fmt: skip
    return b"".join(line.encode() + b"\n" for line in lines)
