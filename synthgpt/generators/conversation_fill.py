"""Documents that take what the conversation says: "weather in Lisbon" gives `city: "Lisbon"`, a tool's
`{"temperature_c": 21}` gives `temperature_c: 21`, "Jason is 25 years old" gives `name: "Jason", age: 25`.

A schema-driven document is valid but random; a model answering from a conversation copies its facts.
The drawn document is kept and only scalar fields are replaced, each by a value checked against that
field's own schema (type, enum, const, bounds, length, pattern), so the document stays valid. Facts come,
in increasing precedence, from the last user message (places and queries through `request_args`, names and
numbers stated next to the field's name) and from the current turn's tool calls and tool results (later
ones win). Everything read is part of the request, so the result stays a pure function of it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..model import ModelRequest
from ..text_json import loads_text
from .reading import read_window
from .request_args import (
    fill_from_request,
    message_fills_only_queries,
    message_gives_nothing,
    place_name,
    query_only,
)

__all__ = ["FillHints", "conversation_facts", "fill_from_conversation", "fill_hints"]

Schema = dict[str, Any]
_MAX_DEPTH = 8
_MAX_SCALAR_RESULT = 200
_TOOL_VERBS = frozenset(
    "get set fetch find lookup look up search query read load list check compute calc "
    "calculate the a of for by to from".split()
)


@functools.lru_cache(maxsize=4096)
def _key(name: str) -> str:
    """A field name compared loosely: `temperature_c`, `temperatureC` and `TemperatureC` alike."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _flatten(value: Any, out: dict[str, Any], depth: int = 0) -> None:
    if depth > _MAX_DEPTH or not isinstance(value, dict):
        return
    for k, v in value.items():
        if isinstance(v, dict):
            _flatten(v, out, depth + 1)
        elif isinstance(k, str):
            out[_key(k)] = v


def conversation_facts(request: ModelRequest) -> dict[str, Any]:
    """Field name (loosely compared) → value, from the current turn's tool-call arguments and tool results
    that are JSON objects, later ones overriding earlier ones."""
    facts: dict[str, Any] = {}
    for m in request.current_turn:
        if m.role == "assistant":
            for tc in m.tool_calls:
                _flatten(tc.parsed_arguments(), facts)
        elif m.role == "tool":
            _result_facts(m.content.strip(), request.tool_result_name(m), facts)
    return facts


def _result_facts(content: str, tool: str | None, facts: dict[str, Any]) -> None:
    try:
        value: Any = loads_text(content)
    except ValueError:
        value = content
    if isinstance(value, dict):
        _flatten(value, facts)
    elif tool and not isinstance(value, list) and len(str(value)) <= _MAX_SCALAR_RESULT:
        # a bare value answers what the tool is named for: `lookup_age` → 41 is an age, `home_city` → a city
        for word in re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", tool).lower()):
            if word not in _TOOL_VERBS:
                facts[word] = value


# -- facts stated in the user's words --------------------------------------------------------------------

_NAME_FIELDS = frozenset(
    "name fullname personname firstname username author customer customername person contact contactname "
    "recipient sender assignee owner".split()
)
_AGE = re.compile(r"\b(\d{1,3})[- ](?:years?|yrs?)[- ]old\b|\baged? (?:of |is |= ?|: ?)?(\d{1,3})\b", re.I)
# Capitalised words that open a request rather than name someone.
_NOT_NAMES = frozenset(
    "a an the i i'm it this that these those what who whom whose which when where why how is are was were "
    "do does did can could would should will please tell give get find show list make create write "
    "extract parse return describe generate summarize summarise explain compare my our your his her their "
    "hello hi hey dear thanks thank yes no ok okay json here there today tomorrow yesterday monday tuesday "
    "wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december user assistant system answer respond output".split()
)
# (`\b[A-Z]…` written as `[A-Z](?<!\w[A-Z])…`, the same matches: led by a class, the regex engine skips in C
# to each capital, where led by `\b` it tries every position, ~2x slower)
_CAPITALISED = re.compile(r"[A-Z](?<!\w[A-Z])[a-z]+(?:[ -][A-Z][a-z]+){0,2}\b")


@functools.lru_cache(maxsize=16)  # every nested object of a document asks about the same message
def _person_name(text: str) -> str | None:
    """The first capitalised phrase that is neither a sentence opener nor the place the text names."""
    place: str | None = None
    read = False  # the place is read at the first phrase: most prompts' capitals only open a sentence
    for found in _CAPITALISED.finditer(text):
        words = found.group(0).split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        if not words:
            continue
        phrase = " ".join(words)
        if not read:
            place, read = place_name(text), True
        if phrase != place and (place is None or phrase not in place):
            return phrase
    return None


@functools.lru_cache(maxsize=256)
def _stated_number(text: str, field: str) -> int | float | None:
    """A number the text gives for `field`: "25 years old" for an age, "<field> is 25" / "<field>: 25"."""
    # ASCII text (nearly all): a pattern matches only where its words are, lower-cased, so a text without
    # them skips its regex pass (a schema asks this for each of its number fields, per request)
    low = text.lower() if text.isascii() else None
    if field == "age" and (low is None or "age" in low or "old" in low):
        found = _AGE.search(text)
        if found:
            return int(found.group(1) or found.group(2))
    pattern, words = _number_after(field)
    if low is not None and not all(w in low for w in words):
        return None
    found = pattern.search(text) if pattern is not None else None
    if not found:
        return None
    number = found.group(1)
    return float(number) if "." in number else int(number)


@functools.lru_cache(maxsize=1024)
def _number_after(field: str) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """The pattern of "<field> is 25" for `field`, compiled once per field (the text changes per request),
    and the words it looks for."""
    found = tuple(re.findall(r"[a-z]+|\d+", field))
    words = r"[\s_-]*".join(re.escape(w) for w in found)
    if not words:
        return None, found
    return re.compile(rf"\b{words}\s*(?:is|of|=|:|was)?\s*(-?\d+(?:\.\d+)?)\b", re.I), found


# -- checking one value against one field's schema -------------------------------------------------------


def _resolve(prop: Any, root: Schema) -> Any:
    for _ in range(_MAX_DEPTH):
        if not isinstance(prop, dict) or "$ref" not in prop:
            return prop
        ref = prop["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return None
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        prop = node
    return None


def _branches(prop: Schema, root: Schema) -> Iterator[Schema]:
    """The field's schema, or each branch of an `anyOf`/`oneOf` (pydantic's Optional[X] is one)."""
    alts = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(alts, list):
        for alt in alts:
            resolved = _resolve(alt, root)
            if isinstance(resolved, dict):
                yield resolved
    else:
        yield prop


def _scalar_fits(value: Any, prop: Schema) -> bool:
    if "const" in prop:
        return bool(prop["const"] == value and type(prop["const"]) is type(value))
    if "enum" in prop:
        return any(e == value and type(e) is type(value) for e in prop["enum"])
    kind = prop.get("type")
    if isinstance(value, bool) or value is None:
        return kind == ("boolean" if isinstance(value, bool) else "null")
    if isinstance(value, str):
        if kind != "string" or "format" in prop:
            return False
        lo, hi = prop.get("minLength", 0), prop.get("maxLength")
        if len(value) < lo or (isinstance(hi, int) and len(value) > hi):
            return False
        pattern = prop.get("pattern")
        return not isinstance(pattern, str) or re.search(pattern, value) is not None
    if isinstance(value, int | float):
        if kind == "integer" and not (isinstance(value, int) or float(value).is_integer()):
            return False
        if kind not in ("integer", "number"):
            return False
        lo, hi = prop.get("minimum"), prop.get("maximum")
        xlo, xhi = prop.get("exclusiveMinimum"), prop.get("exclusiveMaximum")
        step = prop.get("multipleOf")
        return (
            (not isinstance(lo, int | float) or value >= lo)
            and (not isinstance(hi, int | float) or value <= hi)
            and (not isinstance(xlo, int | float) or isinstance(xlo, bool) or value > xlo)
            and (not isinstance(xhi, int | float) or isinstance(xhi, bool) or value < xhi)
            and (not isinstance(step, int | float) or step <= 0 or (value / step).is_integer())
        )
    return False


def _fitting(value: Any, prop: Schema, root: Schema) -> Any:
    """`value` as the field takes it (an integer field takes 21.0 as 21), or None when it does not fit."""
    for branch in _branches(prop, root):
        cand = int(value) if branch.get("type") == "integer" and isinstance(value, float) else value
        if _scalar_fits(cand, branch):
            return cand
    return None


# -- the walk ---------------------------------------------------------------------------------------------


def _fill(
    doc: Any, schema: Any, root: Schema, facts: dict[str, Any], text: str, depth: int, places: bool = True
) -> Any:
    schema = _resolve(schema, root)
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return doc
    if isinstance(doc, list):
        items = _resolve(schema.get("items"), root)
        return (
            [_fill(v, items, root, facts, text, depth + 1) for v in doc] if isinstance(items, dict) else doc
        )
    if not isinstance(doc, dict):
        return doc
    props = schema.get("properties")
    if not isinstance(props, dict):
        return doc
    out = fill_from_request(doc, schema, text) if text and places else dict(doc)
    for key, value in doc.items():
        prop = props.get(key)
        if type(prop) is not dict or "$ref" in prop:  # (a plain field's schema needs no resolving)
            prop = _resolve(prop, root)
            if not isinstance(prop, dict):
                continue
        if isinstance(value, dict | list):
            out[key] = _fill(value, prop, root, facts, text, depth + 1)
            continue
        field = _key(key)
        found: Any = facts.get(field)
        if found is None and text:
            if field in _NAME_FIELDS:
                found = _person_name(text)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                found = _stated_number(text, key.lower())
        if found is not None and not isinstance(found, dict | list):
            fitted = _fitting(found, prop, root)
            if fitted is not None:
                out[key] = fitted
    return out


def fill_from_conversation(
    doc: Any, schema: Schema, request: ModelRequest, *, places: bool = True, hints: FillHints | None = None
) -> Any:
    """`doc` (drawn from `schema`) with its scalar fields taken from the conversation where it states
    them; fields it says nothing about keep their drawn values. `places=False` leaves the top level's
    place and query fields alone (tool arguments had `fill_from_request` already). `hints`, the
    schema's `fill_hints` when the caller keeps them, let a conversation that fills nothing skip the walk.
    """
    if not isinstance(schema, dict):
        return doc
    facts, text = conversation_facts(request), _user_words(request)
    if hints is not None and not facts and _fills_nothing(hints, text):
        return doc  # what the walk would give: a copy of every object and list, each value as drawn
    return _fill(doc, schema, schema, facts, text, 0, places)


@dataclass(frozen=True, slots=True)
class FillHints:
    """What in a schema the conversation could fill, read once per schema (`fill_hints`)."""

    names: bool
    """A property is named for a person (`_NAME_FIELDS`)."""
    numbers: tuple[str, ...]
    """The lower-cased names of the properties that may hold a number."""
    queries: bool
    """A property is named for a query alone (`request_args.query_only`)."""


def fill_hints(schema: Any) -> FillHints | None:
    """The `FillHints` of `schema` (its `properties` and `items` at any depth, as `_fill` walks them), or
    None for a schema with `$ref`, `anyOf`, `oneOf` or `allOf`, whose walk is left to `_fill` itself."""
    names = queries = False
    numbers: dict[str, None] = {}
    todo = [schema]
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        if not _PLAIN_NODE.isdisjoint(node):
            return None
        props = node.get("properties")
        if isinstance(props, dict):
            for key, prop in props.items():
                if not isinstance(key, str):
                    return None
                names = names or _key(key) in _NAME_FIELDS
                queries = queries or query_only(key)
                if _may_be_number(prop):
                    numbers.setdefault(key.lower())
                todo.append(prop)
        todo.append(node.get("items"))
    return FillHints(names, tuple(numbers), queries)


_PLAIN_NODE = frozenset({"$ref", "anyOf", "oneOf", "allOf"})


def _may_be_number(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return True
    kind = prop.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    return kinds is None or "integer" in kinds or "number" in kinds or "enum" in prop or "const" in prop


def _fills_nothing(hints: FillHints, text: str) -> bool:
    """Whether `_fill` would keep every drawn value of a document of a schema with `hints`, given the user's
    `text` and no facts from tool calls (each test below is one way a value could be taken)."""
    if not text:
        return True
    if hints.names and _person_name(text) is not None:
        return False
    if hints.numbers and _states_a_number(text, hints.numbers):
        return False
    if not hints.queries:  # no field the subject would fill: the message's topic need not be read
        return message_gives_nothing(text)
    only_queries, subject = message_fills_only_queries(text)
    return only_queries and subject is None


def _states_a_number(text: str, fields: tuple[str, ...]) -> bool:
    """Whether `_stated_number(text, field)` gives a number for any of `fields`: an ASCII text without
    the words of a field gives none for it (`_stated_number`'s own first test, its lower case taken once
    here rather than per field)."""
    low = text.lower() if text.isascii() else None
    for field in fields:
        if low is not None and field != "age":
            for word in _number_after(field)[1]:  # (a loop, not `all` over a generator: ~3x less work)
                if word not in low:
                    break
            else:
                if _stated_number(text, field) is not None:
                    return True
            continue
        if _stated_number(text, field) is not None:
            return True
    return False


def _user_words(request: ModelRequest) -> str:
    """The user messages since the assistant last spoke: a prompt may put the text in one message and
    the instructions (instructor's `Mode.MD_JSON`) in the next."""
    said: list[str] = []
    for m in reversed(request.messages):
        if m.role == "assistant":
            break
        if m.role == "user":
            said.append(m.content)
    return read_window("\n".join(reversed(said)) if said else request.last_user)
