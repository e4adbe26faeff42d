"""Small helpers the Responses, Messages and embeddings wire modules share."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "private_headers"]

_PRIVATE_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "cookie", "proxy-authorization"})


def dumps(value: Any) -> str:
    """JSON as it goes on the wire: compact, UTF-8, key order kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def private_headers(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Request headers worth recording in the journal: lower-cased, credentials left out."""
    return tuple((k.lower(), v) for k, v in headers.items() if k.lower() not in _PRIVATE_HEADERS)
