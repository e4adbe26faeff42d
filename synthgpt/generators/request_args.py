"""Tool-call arguments that echo the request: a model asked "weather in Lisbon?" calls with `city: "Lisbon"`.

Schema-driven arguments are valid but random; a real model fills the obvious fields from what the user
said. Only plain top-level string properties are filled (no enum, const, format or pattern to break), only
when the value fits their length bounds, and only from the last user message, so the result stays a pure
function of the request.
"""

from __future__ import annotations

import re
from typing import Any

from .prose import topic

__all__ = ["fill_from_request", "place_name"]

_PLACE_FIELDS = frozenset("city town location place country region area where addresscity".split())
# the two ends of a trip: "from Paris to Tokyo" fills `origin` with Paris and `destination` with Tokyo
_FROM_FIELDS = frozenset(
    "origin from source departure depart departurecity origincity fromcity start startlocation".split()
)
_TO_FIELDS = frozenset(
    "destination to dest arrival arrivalcity destinationcity tocity end endlocation".split()
)
_QUERY_FIELDS = frozenset(
    "query q search search_query search_term term terms keywords keyword topic subject question".split()
)
_NAME = r"[A-Z][\w'-]*[a-z][\w'-]*|[A-Z]{2,}"
# A place is a capitalised phrase after a locative word: "in Lisbon", "to New York", "from São Paulo".
_PLACE = re.compile(rf"\b(in|at|to|from|for|near|around)\s+((?:{_NAME})(?:\s+(?:{_NAME}))*)")


def place_name(text: str) -> str | None:
    """The first capitalised place phrase after "in", "at", "to", "from", "for", "near" or "around"."""
    found = _PLACE.search(text)
    return found.group(2) if found else None


def _places(text: str) -> tuple[str | None, dict[str, str]]:
    """The first place named, and the first after each locative word ("from" → "Paris", "to" → "Tokyo")."""
    out: dict[str, str] = {}
    for found in _PLACE.finditer(text):
        out.setdefault(found.group(1), found.group(2))
    return next(iter(out.values()), None), out


def _fits(value: str, prop: dict[str, Any]) -> bool:
    if prop.get("type") != "string" or {"enum", "const", "format", "pattern"} & prop.keys():
        return False
    lo, hi = prop.get("minLength", 0), prop.get("maxLength")
    return isinstance(lo, int) and len(value) >= lo and (not isinstance(hi, int) or len(value) <= hi)


def fill_from_request(args: Any, schema: dict[str, Any], last_user: str) -> Any:
    """`args` with its place- and query-like string fields taken from `last_user` where it names them."""
    props = schema.get("properties")
    if not isinstance(args, dict) or not isinstance(props, dict) or not last_user.strip():
        return args
    place, places = _places(last_user)  # one scan: `place` is what `place_name` gives
    about = topic(last_user)
    subject = None if about == "this" else re.sub(r"^(a|an|the|my|your) ", "", about)
    out = dict(args)
    for key in args:
        prop = props.get(key)
        if not isinstance(prop, dict):
            continue
        field = re.sub(r"[^a-z]", "", key.lower())  # origin_city, originCity and origincity alike
        if field in _FROM_FIELDS:
            value = places.get("from")
        elif field in _TO_FIELDS:  # "to Tokyo", "for Tokyo", else the one place named ("in Lisbon")
            value = places.get("to") or places.get("for") or (place if "from" not in places else None)
        elif field in _PLACE_FIELDS:
            value = place
        else:
            value = subject if field in _QUERY_FIELDS else None
        if value is not None and _fits(value, prop):
            out[key] = value
    return out
