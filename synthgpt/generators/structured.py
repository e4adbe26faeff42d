"""Structured output: a JSON document valid against the schema the request asked for."""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import DrawError, RequestError
from ..model import ModelRequest
from ..seeding import canonical_json
from .conversation_fill import FillHints, fill_from_conversation, fill_hints
from .core import DrawContext, Generator, Objects
from .prompt_schema import prompt_schema
from .text import Words

if TYPE_CHECKING:
    from .schema import FromSchema

__all__ = ["FromRequestSchema", "compiled_schema", "undrawable_request_schema"]

_SCHEMA_PARAMS = {
    "chat": "response_format.json_schema.schema",
    "responses": "text.format.schema",
    "messages": "output_config.format.schema",
}


def undrawable_request_schema(request: ModelRequest, exc: DrawError, tool: str | None = None) -> RequestError:
    """A schema the request sent that no document could be drawn from (e.g. `oneOf` branches that all
    accept the same values) is the request's fault: a 400 naming it, not a server error."""
    subject = f"function '{tool}'" if tool is not None else "the response format"
    param = None if tool is not None else _SCHEMA_PARAMS.get(request.api)
    detail = str(exc).removeprefix("from_schema: ")
    return RequestError(
        f"Invalid schema for {subject}: synthgpt could not draw a document from it: {detail}.", param
    )


@lru_cache(maxsize=256)
def _compile(schema_json: str) -> FromSchema:
    from .schema import FromSchema

    return FromSchema(json.loads(schema_json))


_BY_CONTENT: dict[bytes | str, FromSchema] = {}
_BY_CONTENT_MAX = 256
_by_content_lock = threading.Lock()
# a JSON null in a value position: also what orjson writes for NaN and the infinities
_VALUE_NULLS = (b":null", b"[null", b",null")


def _content_key(schema: Any) -> bytes | str:
    """A key that differs whenever the canonical JSON of `schema` differs, ~10x cheaper to take.

    A request's schema is looked up three times per answer (checked when decoded, weighed for the worker
    thread, drawn), and its canonical JSON cost ~20 µs each time. orjson's sorted-keys text is as exact
    for JSON values (ints and floats keep their types, floats round-trip), except that it writes NaN and
    the infinities as `null` and refuses what is not JSON (big ints, non-string keys, lone surrogates):
    those schemas, and any with a null value, are keyed by their canonical JSON (a `str`, so the two kinds
    of key never meet). The key is taken from the content on every call, so a schema dict changed after
    its first use is never served the document generator of what it held before."""
    try:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return canonical_json(schema)
    if b"null" in key and any(n in key for n in _VALUE_NULLS):
        return canonical_json(schema)
    return key


def compiled_schema(schema: dict[str, Any]) -> FromSchema:
    """A FromSchema for `schema`, built once per distinct schema (requests repeat theirs)."""
    key = _content_key(schema)
    hit = _BY_CONTENT.get(key)
    if hit is None:
        hit = _compile(canonical_json(schema))  # raises SchemaError for a schema it cannot draw from
        with _by_content_lock:
            if len(_BY_CONTENT) >= _BY_CONTENT_MAX:  # schemas built from data must not grow it without bound
                _BY_CONTENT.clear()
            _BY_CONTENT[key] = hit
    return hit


_HINTS: dict[int, tuple[FromSchema, FillHints | None]] = {}


def _hints(compiled: FromSchema) -> FillHints | None:
    """The `fill_hints` of a compiled schema, read once (its schema has the request's content, so the
    same hints). Keyed by the generator's identity, which the entry keeps alive."""
    hit = _HINTS.get(id(compiled))
    if hit is None or hit[0] is not compiled:
        with _by_content_lock:
            if len(_HINTS) >= _BY_CONTENT_MAX:
                _HINTS.clear()
            hit = _HINTS[id(compiled)] = (compiled, fill_hints(compiled.schema))
    return hit[1]


_GENERIC_OBJECT = Objects({"answer": Words(3, 8)})


class FromRequestSchema(Generator[Any]):
    """Draws a document for the request's `response_schema` (or the JSON Schema its prompt gives, fenced
    when it asks for a code block), its fields taking what the conversation says; a plain JSON object for
    json_object mode without a schema."""

    __slots__ = ("overrides",)

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})

    def draw(self, ctx: DrawContext) -> Any:
        req = ctx.request
        rs = req.response_schema
        if rs is None or rs.schema_ is None:
            return self._from_prompt(ctx)
        try:
            if self.overrides:
                from .schema import FromSchema

                return FromSchema(rs.schema_, self.overrides).draw(ctx)
            compiled = compiled_schema(rs.schema_)
            doc = compiled.draw(ctx)
        except DrawError as exc:
            raise undrawable_request_schema(ctx.request, exc) from None
        return fill_from_conversation(doc, rs.schema_, req, hints=_hints(compiled))

    def _from_prompt(self, ctx: DrawContext) -> Any:
        found = prompt_schema(ctx.request)
        if found is None:
            return _GENERIC_OBJECT.draw(ctx)
        try:
            if self.overrides:
                from .schema import FromSchema

                doc = FromSchema(found.schema, self.overrides).draw(ctx)
            else:
                compiled = compiled_schema(found.schema)
                drawn = compiled.draw(ctx)
                doc = fill_from_conversation(drawn, found.schema, ctx.request, hints=_hints(compiled))
        except DrawError:  # a schema in prose is a hint, not a request field: no 400 for it
            return _GENERIC_OBJECT.draw(ctx)
        if found.fenced:
            return f"```json\n{json.dumps(doc, indent=2, ensure_ascii=False)}\n```"
        return doc

    def __repr__(self) -> str:
        return f"from_request_schema({self.overrides!r})" if self.overrides else "from_request_schema()"
