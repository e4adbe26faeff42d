"""Structured output: a JSON document valid against the schema the request asked for."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import DrawError, RequestError
from ..jsonutil import canonical_bytes, canonical_json, fitted, plain_json, tiny_float_text
from ..limits import check_document_size
from ..model import ModelRequest
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


def _document_bytes(doc: Any) -> bytes:
    try:
        return orjson.dumps(doc)
    except TypeError:  # ints past 64 bits
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")


_MAX_SCHEMAS = 256
# a JSON null in a value position: also what orjson writes for NaN and the infinities
_VALUE_NULLS = (b":null", b"[null", b",null")


def _content_key(schema: Any) -> bytes:
    """The canonical JSON of `schema`, as UTF-8: what a schema's generator is cached by.

    A request's schema is looked up three times per answer (checked when decoded, weighed for the worker
    thread, drawn), so the text comes from `canonical_bytes` (orjson) where it is exact. orjson writes NaN
    and the infinities as `null`: a schema with a null value is written by the standard encoder instead.
    The key is taken from the content on every call, so a schema dict changed after its first use is never
    served the document generator of what it held before."""
    try:
        key = canonical_bytes(schema)
    except UnicodeEncodeError:  # a lone surrogate: still a key, never a schema anyone can send
        return canonical_json(schema).encode("utf-8", "surrogatepass")
    if b"null" in key and any(n in key for n in _VALUE_NULLS):
        return canonical_json(schema).encode()
    return key


@lru_cache(maxsize=_MAX_SCHEMAS)  # schemas built from data must not grow it without bound
def _compile(key: bytes) -> tuple[FromSchema, FillHints | None]:
    """The generator of the schema whose canonical JSON is `key` (its own copy of the schema), and the
    conversation fill's hints for it."""
    from .schema import FromSchema

    compiled = FromSchema(json.loads(key.decode("utf-8", "surrogatepass")))
    return compiled, fill_hints(compiled.schema)


# Written as orjson writes a value (key order kept): what a schema's text is looked up by first
_AS_SENT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_BY_TEXT: dict[bytes, tuple[FromSchema, FillHints | None]] = {}
"""`_compile`'s answer by the schema's text in its own key order: a request's schema is looked up three
times per answer, and sorting its keys and scanning the text (`_content_key`, ~8 µs for 1 KB) is most of
a look-up."""


def _compiled(schema: Any) -> tuple[FromSchema, FillHints | None]:
    """`_compile(_content_key(schema))`, found by the schema's orjson text where that is certain.

    Two schemas with the same orjson text hold the same keys and the same values written alike, so their
    sorted texts are alike too: the same content key, unless `_content_key` would not take orjson's text
    (a value null, which orjson also writes for NaN and the infinities, or a float `canonical_bytes`
    writes again): a text holding one is never kept, and its schema takes `_content_key` every time.
    Whatever orjson does not write (dataclasses, datetimes, lone surrogates, ints beyond 64 bits) takes
    it too."""
    try:
        text = orjson.dumps(schema, option=_AS_SENT)
    except TypeError:
        return _compile(_content_key(schema))
    found = _BY_TEXT.get(text)
    if found is None:
        found = _compile(_content_key(schema))
        if not (b"null" in text and any(n in text for n in _VALUE_NULLS)) and not tiny_float_text(text):
            if len(_BY_TEXT) >= _MAX_SCHEMAS:  # bounded as `_compile` is: schemas built from data
                _BY_TEXT.clear()
            _BY_TEXT[fitted(text)] = found  # kept: sized to fit
    return found


_TOOLS: dict[bytes, tuple[FromSchema, FillHints | None]] = {}
"""`tool_schema`'s generators by the schema's orjson text in its own key order."""


def tool_schema(schema: Any) -> tuple[FromSchema, FillHints | None]:
    """A FromSchema for a tool's `parameters`, and the conversation fill's hints for them, built once per
    distinct schema: an agent's requests declare the same tools call after call, and building one took
    ~60 µs of a ~380 µs tool-call answer (a copy of the schema, its checks, then its plan at the first
    draw). Unlike `compiled_schema`'s, the schema keeps its own key order: the arguments are drawn as its
    properties are declared. Kept by its orjson text only when it holds plain JSON values (`plain_json`:
    then no two schemas share a text; a tuple and a list, NaN and None, would), else built every time."""
    from .schema import FromSchema

    text = None
    if plain_json(schema, tuples=False):
        try:
            text = orjson.dumps(schema)
        except TypeError:  # ints beyond 64 bits, lone surrogates
            text = None
    found = None if text is None else _TOOLS.get(text)
    if found is None:
        built = FromSchema(schema)
        found = built, fill_hints(built.schema)
        if text is not None:
            if len(_TOOLS) >= _MAX_SCHEMAS:  # bounded as `_compile` is: schemas built from data
                _TOOLS.clear()
            _TOOLS[fitted(text)] = found  # kept: sized to fit
    return found


def compiled_schema(schema: dict[str, Any]) -> FromSchema:
    """A FromSchema for `schema`, built once per distinct schema (requests repeat theirs); raises
    SchemaError for a schema it cannot draw from."""
    return _compiled(schema)[0]


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
            compiled, hints = _compiled(rs.schema_)
            doc = compiled.draw(ctx)
        except DrawError as exc:
            raise undrawable_request_schema(ctx.request, exc) from None
        doc = fill_from_conversation(doc, rs.schema_, req, hints=hints)
        # a 400 when too large: the request's schema made it
        check_document_size(
            _document_bytes(doc), ctx.limits, "the response format", _SCHEMA_PARAMS.get(req.api)
        )
        return doc

    def _from_prompt(self, ctx: DrawContext) -> Any:
        found = prompt_schema(ctx.request)
        if found is None:
            return _GENERIC_OBJECT.draw(ctx)
        try:
            if self.overrides:
                from .schema import FromSchema

                doc = FromSchema(found.schema, self.overrides).draw(ctx)
            else:
                compiled, hints = _compiled(found.schema)
                drawn = compiled.draw(ctx)
                doc = fill_from_conversation(drawn, found.schema, ctx.request, hints=hints)
        except DrawError:  # a schema in prose is a hint, not a request field: no 400 for it
            return _GENERIC_OBJECT.draw(ctx)
        if found.fenced:
            return f"```json\n{json.dumps(doc, indent=2, ensure_ascii=False)}\n```"
        return doc

    def __repr__(self) -> str:
        return f"from_request_schema({self.overrides!r})" if self.overrides else "from_request_schema()"
