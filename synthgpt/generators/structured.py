"""Structured output: a JSON document valid against the schema the request asked for."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import DrawError, RequestError
from ..model import ModelRequest
from ..seeding import canonical_json
from .conversation_fill import fill_from_conversation
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


def compiled_schema(schema: dict[str, Any]) -> FromSchema:
    """A FromSchema for `schema`, built once per distinct schema (requests repeat theirs)."""
    return _compile(canonical_json(schema))


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
            doc = compiled_schema(rs.schema_).draw(ctx)
        except DrawError as exc:
            raise undrawable_request_schema(ctx.request, exc) from None
        return fill_from_conversation(doc, rs.schema_, req)

    def _from_prompt(self, ctx: DrawContext) -> Any:
        found = prompt_schema(ctx.request)
        if found is None:
            return _GENERIC_OBJECT.draw(ctx)
        try:
            if self.overrides:
                from .schema import FromSchema

                doc = FromSchema(found.schema, self.overrides).draw(ctx)
            else:
                drawn = compiled_schema(found.schema).draw(ctx)
                doc = fill_from_conversation(drawn, found.schema, ctx.request)
        except DrawError:  # a schema in prose is a hint, not a request field: no 400 for it
            return _GENERIC_OBJECT.draw(ctx)
        if found.fenced:
            return f"```json\n{json.dumps(doc, indent=2, ensure_ascii=False)}\n```"
        return doc

    def __repr__(self) -> str:
        return f"from_request_schema({self.overrides!r})" if self.overrides else "from_request_schema()"
