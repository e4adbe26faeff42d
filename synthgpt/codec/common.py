"""Small helpers the Responses, Messages and embeddings wire modules share."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import orjson

from ..errors import RequestError
from ..gil import LONG_TEXT, let_go
from ..jsonutil import dumps

if TYPE_CHECKING:
    from ..model import ModelRequest

__all__ = [
    "check_schema",
    "dumps",
    "in_schema_order",
    "json_type_name",
    "nones",
    "parse_json_body",
    "parse_json_stdlib",
    "type_error",
]

MAX_JSON_DEPTH = 128
"""How deeply a request body may nest arrays and objects. Far more than any real request needs, and far
enough under what the request model can serialize (pydantic stops near 255) and what the recursive
schema and template code can walk, that a deep body is refused up front instead of failing mid-answer."""


def json_type_name(value: Any) -> str:
    """How the OpenAI API names a JSON value's type in its error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def type_error(param: str, expected: str, value: Any, *, code: str | None = "invalid_type") -> RequestError:
    """OpenAI's error for a field of the wrong type, worded alike on Chat, Responses and embeddings.
    Responses and embeddings send code `invalid_type`; Chat's decoder passes `code=None`, as its pinned
    error bodies have it."""
    return RequestError(
        f"Invalid type for '{param}': expected {expected}, but got {json_type_name(value)} instead.",
        param,
        code=code,
    )


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_NOT_JSON = (
    "The API expects a JSON object; check that the body is valid JSON and sent with content-type "
    "application/json."
)


_DIGITS = bytes(48 if 48 <= b <= 57 else 101 if b in b"eE" else 43 if b == 43 else 32 for b in range(256))
"""Every digit byte to `0`, `e` and `E` to `e`, `+` kept, every other byte to a space: the shape of the
body's numbers, looked for with substring tests. Two C passes per piece, where a regex took 4-10x as
long (0.7 s on a 16 MB body, holding the GIL all along). UTF-8 puts no ASCII byte inside a character, so
the bytes are as good as the text."""
_SHAPES = bytes(91 if b in b"[{" else d for b, d in enumerate(_DIGITS))
"""`_DIGITS`, with both opening brackets to `[`: numbers' shapes and brackets, counted in one pass."""
_WIDE_INTEGER = b"0" * 19
"""19 digits in a row: maybe an integer orjson would read as a float (2**63 has 19 digits)."""
_MAYBE_HUGE = (b"0" * 100, b"e000", b"e+000")
"""What every number too large for a double holds: an exponent of three digits or more, or a run of 100
digits (with a two-digit exponent, more than 209 digits are needed to overflow). Many bodies with these
are fine (`1e-400`, a word like `tree123`): they only cost the stdlib parser's check of every decimal."""


_SCAN_PIECE: Final = LONG_TEXT
"""Bytes translated per C call: one call holds the GIL throughout (~1 ms a piece), so it is let go
between pieces (`gil.let_go`)."""


def _pieces(raw: bytes, table: bytes, overlap: int) -> Iterator[bytes]:
    """`raw.translate(table)` a piece at a time, each piece running `overlap` bytes into the next (so a run
    cut by a piece's end is seen whole there), the GIL let go between pieces."""
    for start in range(0, len(raw), _SCAN_PIECE):
        if start:
            let_go()
        yield raw[start : start + _SCAN_PIECE + overlap].translate(table)


def _scan(raw: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether the number shapes of `raw` hold any of `needles`."""
    if len(raw) <= _SCAN_PIECE:
        shapes = raw.translate(_DIGITS)
        return any(shapes.find(n) != -1 for n in needles)
    overlap = max(map(len, needles)) - 1
    return any(any(s.find(n) != -1 for n in needles) for s in _pieces(raw, _DIGITS, overlap))


def parse_json_body(raw: bytes) -> Any:
    """A request body parsed as JSON; RequestError (no param) when it is not JSON or not Unicode text.

    orjson parses it (~1 µs for a chat body; 35 ms for 16 MB, where the stdlib took 1.2 s holding the GIL).
    Every body orjson refuses is parsed again by the stdlib path (`parse_json_stdlib`), so that each refusal
    keeps its wording, and a BOM is still taken; so is a body with a 19-digit run, since orjson reads an
    integer wider than 64 bits as a float where the request's checks must see the integer.
    """
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json_stdlib(raw)
    if len(raw) <= _SCAN_PIECE:
        # every body but a huge one: its shape, brackets included, made in one C pass; `find` rather than
        # `in` (bytes' `in` first tries its operand as an int, and raises and clears a TypeError each time)
        shapes = raw.translate(_SHAPES)
        if shapes.find(_WIDE_INTEGER) != -1:
            return parse_json_stdlib(raw)
        # brackets bound the depth from above: only a body with many of them is looked into (`_too_deep`)
        brackets = shapes.count(b"[") if len(raw) > MAX_JSON_DEPTH else 0
    else:  # the same, a piece at a time; the brackets counted up to each piece's overlap
        brackets = 0
        for shapes in _pieces(raw, _SHAPES, len(_WIDE_INTEGER) - 1):
            if shapes.find(_WIDE_INTEGER) != -1:
                return parse_json_stdlib(raw)
            brackets += shapes.count(b"[", 0, _SCAN_PIECE)
    if _too_deep(raw, body, brackets):
        return parse_json_stdlib(raw)  # raises the depth refusal
    return body


def parse_json_stdlib(raw: bytes) -> Any:
    """`parse_json_body` by the stdlib parser alone: the reference for every refusal's wording.

    JSON on the wire is UTF-8 (RFC 8259). `json.loads(bytes)` would also take UTF-16 and UTF-32, and decode
    UTF-8-encoded surrogates, and the parser accepts an escaped lone surrogate (`"\\ud800"`): none of these
    is text a UTF-8 answer can hold, and each would fail later, when the request is hashed or echoed. The
    providers refuse such a body as invalid JSON (Anthropic: "no low surrogate in string"); so does this.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RequestError(
            f"We could not parse the JSON body of your request: byte {exc.start} is not valid UTF-8. "
            + _NOT_JSON
        ) from None
    long = len(raw) > _SCAN_PIECE  # then the GIL is let go between the passes below (`gil.let_go`)
    try:
        # a number that overflows a double is rare enough to pay for a hook on every decimal only then
        finite = _scan(raw, _MAYBE_HUGE)
        if long:
            let_go()
        body = (_FINITE if finite else _PLAIN)(text)
    except _NotFinite as exc:
        raise RequestError(_not_finite_message(text, exc.literal)) from None
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"We could not parse the JSON body of your request ({exc}). {_NOT_JSON}") from None
    if long:
        let_go()
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None:  # rare: only then is the check paid
        try:
            json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            found = _LONE_SURROGATE.search(text)
            where = ""
            if found is not None:
                line = text.count("\n", 0, found.start()) + 1
                column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
                where = f" at line {line} column {column}"
            raise RequestError(
                f"We could not parse the JSON body of your request: a lone surrogate escape{where} is not "
                "valid Unicode text. Escape both halves of a surrogate pair, or send the character as UTF-8."
            ) from None
    # brackets bound the depth from above: only a body with many of them is looked into (`_too_deep`)
    if long:
        brackets = sum(shapes.count(b"[") for shapes in _pieces(raw, _SHAPES, 0))
    else:
        brackets = text.count("[") + text.count("{")
    if _too_deep(raw, body, brackets):
        raise RequestError(
            f"The JSON body of your request nests arrays and objects more than {MAX_JSON_DEPTH} levels deep. "
            "Flatten the request: no API input needs that much nesting."
        )
    return body


class _NotFinite(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _refuse_constant(literal: str) -> Any:
    raise _NotFinite(literal)  # Python's parser takes NaN and ±Infinity; JSON (RFC 8259) has neither


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _NotFinite(literal)
    return value


_PLAIN = json.JSONDecoder(parse_constant=_refuse_constant).decode
_FINITE = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float).decode


def _not_finite_message(text: str, literal: str) -> str:
    where = ""
    at = _token_position(text, literal)
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        where = f" (line {line} column {at - (text.rfind(chr(10), 0, at) + 1) + 1})"
    if literal.lstrip("-") in ("NaN", "Infinity"):
        return (f"We could not parse the JSON body of your request: `{literal}` is not JSON{where}. Send a "
                "number, or null.")
    return (
        f"We could not parse the JSON body of your request: `{literal}` is not a JSON number a double can "
        f"hold{where}. Send a number between -1.7e308 and 1.7e308."
    )


def _token_position(text: str, literal: str) -> int:
    """Where `literal` first occurs outside a string in `text` (-1: nowhere). Error path only."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith(literal, i) and (i == 0 or text[i - 1] in " \t\r\n:,["):
            return i
    return -1


_CONTAINERS = frozenset((dict, list))
_WALK_PIECE: Final = 4096
"""Containers walked between two `let_go`s (~4 ms)."""


def _too_deep(raw: bytes, body: Any, brackets: int) -> bool:
    """Whether `body`, parsed from `raw` and holding `brackets` arrays and objects in all, nests deeper than
    `MAX_JSON_DEPTH`: told from the text where it can be (`depth_at_most`), else by walking the body."""
    if brackets <= MAX_JSON_DEPTH or not isinstance(body, dict | list):
        return False
    fits = depth_at_most(raw, MAX_JSON_DEPTH)
    return not fits if fits is not None else json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH


_TEXT_DEPTH_BYTES: Final = 64 * 1024
"""Larger bodies are walked: a pass over the brackets per level, up to 128, stays within ~3 ms here."""
_NESTING = bytes.maketrans(b"[{]}", b"(())")
_NOT_NESTING = bytes(b for b in range(256) if b not in b'"[]{}')


def depth_at_most(raw: bytes, limit: int) -> bool | None:
    """Whether the JSON text `raw` (valid JSON: it was parsed) nests arrays and objects at most `limit`
    levels deep, told from the text; None when that is not certain from it (a body over 64 KB, one holding
    an escaped quote or a string holding a bracket: `json_depth` then walks the parsed body).

    A body holding more than `limit` arrays and objects in all must be shown to nest no deeper. Agents'
    requests do (a long conversation, many tools), and walking the parsed body took ~80 µs for 20 tools.
    Here, in C passes: everything but quotes and brackets is dropped, then each string's two quotes
    (`""` once its text is gone; a quote left over means a string held a bracket), and the brackets left
    lose their innermost pairs once per level."""
    if len(raw) > _TEXT_DEPTH_BYTES or raw.find(b'\\"') != -1:
        return None
    nesting = raw.translate(_NESTING, _NOT_NESTING).replace(b'""', b"")
    if nesting.find(b'"') != -1:
        return None
    removed = 0  # levels
    while nesting:
        if removed == limit:  # a container is left after `limit` levels were removed
            return False
        nesting = nesting.replace(b"()", b"")
        removed += 1
    return True


def json_depth(value: Any, stop: int) -> int:
    """How many levels of arrays and objects `value` (parsed JSON: plain dicts and lists) nests (a
    scalar: 0), counting no further than `stop + 1`. Iterative, so any depth the parser accepted can be
    measured. A level of scalars only is passed over in one C pass (its values' types), not one Python
    step per value: 2 million numbers took 280 ms, now 40.

    Level by level, holding the containers themselves: a (container, depth) pair for each would be an
    allocation the cyclic collector counts, and 100,000 messages' pairs set off a full collection of the
    body (30-50 ms holding the GIL)."""
    depth = 0
    level: list[Any] = [value] if type(value) in _CONTAINERS else []
    walked = 0
    while level:
        depth += 1
        if depth > stop:
            return depth
        below: list[Any] = []
        for item in level:
            walked += 1
            if walked % _WALK_PIECE == 0:
                let_go()
            values = item.values() if type(item) is dict else item
            # a long one is first looked through in one C pass: most are scalars only (numbers, texts)
            if len(values) <= 16 or not _CONTAINERS.isdisjoint(map(type, values)):
                for child in values:  # (a loop: a generator per container cost ~0.1 µs each, compiled)
                    kind = type(child)
                    if kind is dict or kind is list:
                        below.append(child)
        level = below
    return depth


def check_schema(schema: Any, param: str, subject: str, *, tool: bool = False) -> None:
    """Refuse (RequestError naming `param`) a request's schema that synthgpt cannot draw documents from;
    `tool`: the schema is a function's parameters (OpenAI's code `invalid_function_parameters`).

    Checked when the request is decoded, whichever rule then answers: a request is accepted or refused
    for what it is, not for which rule happened to match. The check is cached per distinct schema.
    `schema` is whatever the body held (`Any`: compiled, synthgpt.native, a `dict` parameter would refuse
    an int with a TypeError before this check could name the field).
    """
    from ..errors import SchemaError
    from ..generators.structured import compiled_schema

    try:
        compiled_schema(schema)
    except SchemaError as exc:
        raise RequestError(
            f"Invalid schema for {subject}: {exc}. synthgpt draws documents from a subset of JSON Schema; "
            "remove or rewrite that part of the schema.",
            param,
            code="invalid_function_parameters" if tool else None,
        ) from None


def _keys_in_schema_order(value: Any, schema: Any) -> Any:
    """`value` with each object's keys in the order of its schema's `properties`, then the others."""
    if isinstance(value, dict) and isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        props: dict[str, Any] = schema["properties"]
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: _keys_in_schema_order(value[k], props.get(k)) for k in keys}
    if isinstance(value, list) and isinstance(schema, dict):
        return [_keys_in_schema_order(v, schema.get("items")) for v in value]
    return value


def in_schema_order(text: str, request: ModelRequest) -> str:
    """A structured answer's text with its objects' keys in the order of the request schema's properties,
    as Gemini (`propertyOrdering`) and Ollama write them; the drawn document has them in sorted order.
    Text that is not the whole compact document (cut by a limit or a stop sequence) is left alone."""
    schema = request.response_schema.schema_ if request.response_schema is not None else None
    if schema is None or not text.startswith("{"):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if dumps(value) != text:  # not in the compact form this would write back: keep it byte for byte
        return text
    return dumps(_keys_in_schema_order(value, schema))


def nones(body: dict[str, Any], *inner: str) -> int:
    """How many of `body`'s values are None, and of the values of its dict members named `inner`: at most
    the None values `body` holds, which is what a codec's `body_nulls` must say (`jsonutil.dumps_bytes`).
    Counted by identity, so no value's `__eq__` can make it say more (a loop: cheaper than mapping `type`
    over a handful of values and counting in a list)."""
    n = 0
    for value in body.values():
        if value is None:
            n += 1
    for name in inner:
        member = body.get(name)
        if type(member) is dict:
            for value in member.values():
                if value is None:
                    n += 1
    return n
