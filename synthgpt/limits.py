"""Per-request budgets: what one request may make synthgpt do, so that no request stalls the others.

One `Limits` value travels from the CLI flags (`synthgpt serve --max-answer-bytes …`) or `MockGPT(limits=…)`
into every draw (`DrawContext.limits`). Each limit is checked as early as what it bounds is known:
- before drawing, from the request alone (an embeddings batch, a response schema's smallest document):
  a 400 in the API's error shape naming the field, the keyword and the limit;
- while drawing (a template's operations and the strings it builds): the rule's draw fails
  (`DrawError` with code `draw_over_budget`);
- after drawing and encoding (the answer's bytes): a 500 naming the rule, code `answer_too_large`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .errors import RuleError

__all__ = ["DEFAULT_LIMITS", "Limits"]


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
