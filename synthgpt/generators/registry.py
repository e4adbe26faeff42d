"""Every generator by name: the rule-file loader, templates and docs read this one table.

`answer` and `error` are deliberately absent: they wrap a generator with delivery details rather than
draw a value, and rule files say the same thing with a rule's own `stream:`, `error:` and `output:` keys.
Registering them would also make any one-key mapping `{error: …}` in a rule file's data read as a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UnknownNameError
from .basic import Boolean, Choice, Id, Integer, Number, Uuid
from .core import Generator, Just, Lists, Objects, OneOf, Weighted
from .embedding import Embeddings
from .fake import Fake
from .prose import Prose
from .reply import Reasoning, Reply, ToolCallGen
from .template import Template
from .text import HashTokens, LastUser, Paragraph, Sentence, Summary, Words

__all__ = ["REGISTRY", "lookup"]


def _from_schema(schema: dict[str, Any], overrides: dict[str, Any] | None = None) -> Generator[Any]:
    from .schema import FromSchema

    return FromSchema(schema, overrides)


def _from_request_schema(overrides: dict[str, Any] | None = None) -> Generator[Any]:
    from .structured import FromRequestSchema

    return FromRequestSchema(overrides)


REGISTRY: dict[str, Callable[..., Generator[Any]]] = {
    "boolean": Boolean,
    "choice": Choice,
    "echo": LastUser,
    "embeddings": Embeddings,
    "fake": Fake,
    "from_request_schema": _from_request_schema,
    "from_schema": _from_schema,
    "hash_tokens": HashTokens,
    "id": Id,
    "integer": Integer,
    "json_object": Objects,
    "just": Just,
    "last_user": LastUser,
    "lists": Lists,
    "number": Number,
    "objects": Objects,
    "one_of": OneOf,
    "paragraph": Paragraph,
    "prose": Prose,
    "reasoning": Reasoning,
    "reply": Reply,
    "sentence": Sentence,
    "summary": Summary,
    "template": Template,
    "tool_call": ToolCallGen,
    "uuid": Uuid,
    "weighted": Weighted,
    "words": Words,
}


def lookup(name: str) -> Callable[..., Generator[Any]]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownNameError("generator", name, REGISTRY) from None
