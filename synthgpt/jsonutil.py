"""The one way synthgpt writes JSON text: on the wire, in answers, in tool arguments and in fingerprints.

Every API must turn the same value into the same text, or the same conversation sent through two APIs
would hash differently: compact separators, UTF-8 kept as is (`"Zürich"`, not `"Z\\u00fcrich"`), key
order kept.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


def dumps(value: Any, *, allow_nan: bool = False) -> str:
    """JSON text: compact, UTF-8, key order kept. NaN and infinities are refused (ValueError): they are not
    JSON, and no client could parse the text. `allow_nan=True` writes them as Python does, for text that
    is never sent (a sort key)."""
    return (_ENCODE if allow_nan else _ENCODE_FINITE)(value)


# what json.dumps builds on every call with these arguments; built once (encode keeps no state)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_ENCODE_FINITE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
