"""Per-request budgets: what one request may make synthgpt do, so that no request stalls the others.

One `Limits` value travels from the CLI flags (`synthgpt serve --max-answer-bytes …`) or `MockGPT(limits=…)`
into every draw (`DrawContext.limits`). Each limit is checked as early as what it bounds is known:
- before drawing, from the request alone (an embeddings batch, a response schema's smallest document):
  a 400 in the API's error shape naming the field, the keyword and the limit;
- while drawing (a template's operations and the strings it builds): the rule's draw fails
  (`DrawError` with code `draw_over_budget`);
- once a document for a schema the request sent is drawn, its JSON (`check_document_size`): a 400 naming
  the schema, code `answer_too_large`, for the request asked for that document;
- after drawing and encoding (the answer's bytes): a 500 naming the rule, code `answer_too_large`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from .errors import DrawError, RequestError, RuleError
from .logprobs import alternatives_asked
from .model import ToolCallPart

if TYPE_CHECKING:
    from .model import ModelOutput, ModelRequest

__all__ = ["DEFAULT_LIMITS", "Limits", "check_answer_size", "check_document_size"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The budgets of one request. Every field is a `synthgpt serve` flag (`--max-answer-bytes`, …)."""

    max_answer_bytes: int = 8 * 1024 * 1024
    """Bytes of the encoded answer (the JSON body, or the whole SSE stream). Also bounds the estimated size
    of a document drawn for a schema and of an embeddings answer, checked before drawing, and the length of
    any string or list a template builds."""
    max_schema_values: int = 10_000
    """Values (objects, arrays, strings, numbers, …) in one document drawn for a JSON schema, far more than
    structured outputs hold (drawing one takes ~0.1 ms): the smallest document a schema allows is checked
    against it before drawing, and the draw stops there (an optional property weighed counts as one)."""
    template_ops: int = 100_000
    """Loop iterations, `range` items and repeated `*`/`**` work one template render may do."""

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise RuleError(f"Limits: {f.name} must be a whole number >= 1, got {v!r}")


DEFAULT_LIMITS = Limits()


# What an answer's encoding adds, per choice and per token of logprobs (measured on Chat bodies: an entry
# is ~70 bytes, each of its `top_logprobs` alternatives ~60).
_CHOICE_BYTES = 200
_LOGPROB_BYTES = 70
_ALTERNATIVE_BYTES = 60


def _alternatives(req: ModelRequest) -> int | None:
    """How many logprob alternatives per token the request asks for; None when it asks for no logprobs."""
    include = req.extra.get("include")
    asked = req.extra.get("logprobs") is True or (
        isinstance(include, list) and "message.output_text.logprobs" in include
    )
    return alternatives_asked(req.extra.get("top_logprobs")) if asked else None


def check_answer_size(req: ModelRequest, output: ModelOutput, limits: Limits) -> None:
    """Refuse a drawn answer whose encoding would be over `max_answer_bytes`, before encoding it (which
    for 128 choices with logprobs is the long part). Many choices are the request's doing: a 400 naming
    `n`. A single answer too large is the rule's: a DrawError `answer_too_large` (a 500 naming the rule)."""
    top = _alternatives(req)
    per_token = 0 if top is None else _LOGPROB_BYTES + _ALTERNATIVE_BYTES * top
    size = 0
    for c in output.choices:
        size += _CHOICE_BYTES
        for p in c.parts:
            # a part has text or arguments: `getattr` with a default on a pydantic model is ~1 µs per miss
            size += len(p.arguments) if isinstance(p, ToolCallPart) else len(p.text)
    size += per_token * output.usage.completion_tokens
    if size <= limits.max_answer_bytes:
        return
    if req.n > 1:
        what = f"{req.n} choices" + ("" if top is None else f" with logprobs (top_logprobs={top})")
        raise RequestError(
            f"This request asks for {what}: about {size} bytes, over this server's answer limit of "
            f"{limits.max_answer_bytes} bytes (max_answer_bytes). Ask for fewer choices"
            + (" or fewer top_logprobs." if top is not None else "."),
            "n",
            code="answer_too_large",
        )
    raise DrawError(
        f"rule {output.rule!r}: the answer would be about {size} bytes, over the answer limit of "
        f"{limits.max_answer_bytes} bytes (max_answer_bytes)",
        rule=output.rule,
        code="answer_too_large",
    )


def check_document_size(text: bytes | str, limits: Limits, subject: str, param: str | None) -> None:
    """Refuse a document drawn for a schema the request sent (`text`, its JSON; `subject` names the schema,
    "the response format" or "function 'f'") that the answer could not carry: the schema asked for it, so
    a 400 naming the schema, not the rule's 500. Its size is taken as an answer carries it: a string in
    JSON, each quote and backslash escaped."""
    # the most its escaped UTF-8 can be: 2 bytes a byte (a quote or backslash escaped), 4 a character
    if len(text) * (4 if isinstance(text, str) else 2) + _CHOICE_BYTES <= limits.max_answer_bytes:
        return  # (most documents: nothing to count)
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    size = len(raw) + raw.count(b'"') + raw.count(b"\\")
    if size + _CHOICE_BYTES <= limits.max_answer_bytes:
        return
    raise RequestError(
        f"Invalid schema for {subject}: the document synthgpt drew from it is about {size} bytes, over "
        f"this server's answer limit of {limits.max_answer_bytes} bytes (max_answer_bytes). Lower its "
        "maxItems, maxLength or bounds, or serve with a larger --max-answer-bytes.",
        param,
        code="answer_too_large",
    )
