"""Structured output: a JSON document valid against the schema the request asked for."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..seeding import canonical_json
from .core import DrawContext, Generator, Objects
from .text import Words

__all__ = ["FromRequestSchema", "compiled_schema"]


@lru_cache(maxsize=256)
def _compile(schema_json: str) -> Generator[Any]:
    import json

    from .schema import FromSchema

    return FromSchema(json.loads(schema_json))


def compiled_schema(schema: dict[str, Any]) -> Generator[Any]:
    """A FromSchema for `schema`, built once per distinct schema (requests repeat theirs)."""
    return _compile(canonical_json(schema))


_GENERIC_OBJECT = Objects({"answer": Words(3, 8)})


class FromRequestSchema(Generator[Any]):
    """Draws a document for the request's `response_schema`; a plain JSON object for json_object mode."""

    __slots__ = ("overrides",)

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})

    def draw(self, ctx: DrawContext) -> Any:
        rs = ctx.request.response_schema
        if rs is None or rs.schema_ is None:
            return _GENERIC_OBJECT.draw(ctx)
        if self.overrides:
            from .schema import FromSchema

            return FromSchema(rs.schema_, self.overrides).draw(ctx)
        return compiled_schema(rs.schema_).draw(ctx)

    def __repr__(self) -> str:
        return f"from_request_schema({self.overrides!r})" if self.overrides else "from_request_schema()"
