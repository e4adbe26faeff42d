"""What a recording keeps of one upstream answer, and the rule it becomes.

Each provider's reader (`record.readers`) turns an answer, a JSON body or a stream's events, into a
`Recorded`: the neutral output (text, reasoning, tool calls, finish reason, usage, embeddings) plus what a
stream plan can pin (the text's exact deltas, the response id, `created`) and the timing seen. `rule()`
writes it as a rule-file rule matched by the request's canonical digest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..model import FinishReason

__all__ = ["Recorded", "RecordedCall", "Timing", "arguments_text"]


@dataclass
class Timing:
    """When the answer's bytes arrived: milliseconds from the request to the first chunk, and the mean gap
    between chunks after it (whole milliseconds; what the transport delivered, frames may share a chunk)."""

    first_ms: float = 0.0
    interval_ms: float = 0.0


@dataclass
class RecordedCall:
    name: str
    arguments: str
    id: str | None = None


@dataclass
class Recorded:
    text: str = ""
    reasoning: str = ""
    signature: str = ""
    tool_calls: list[RecordedCall] = field(default_factory=list)
    finish_reason: FinishReason | None = None
    usage: dict[str, int] = field(default_factory=dict)
    embeddings: list[list[float]] | None = None
    deltas: list[str] | None = None
    """A stream's text deltas, in order, as the upstream sent them."""
    id: str | None = None
    created: int | None = None
    hidden_reasoning: bool = False
    """The answer reasoned without showing the text (a Responses reasoning item without a summary): the
    replay draws its own, which shows the same (nothing) where the request asks for reasoning."""

    def output(self) -> dict[str, Any]:
        """The rule's `output:` mapping."""
        if self.embeddings is not None:
            out: dict[str, Any] = {"embeddings": self.embeddings}
        else:
            # no text part at all beside tool calls: an empty one would be an empty message item on the
            # Responses API, where the upstream sent none
            out = {"text": self.text} if self.text or not self.tool_calls else {}
            if self.reasoning:
                out["reasoning"] = self.reasoning
                if self.signature:
                    out["reasoning_signature"] = self.signature
            if self.tool_calls:
                out["tool_calls"] = [
                    {"name": c.name, "arguments": c.arguments, **({"id": c.id} if c.id else {})}
                    for c in self.tool_calls
                ]
            if self.finish_reason is not None:
                out["finish_reason"] = self.finish_reason
        usage = {k: v for k, v in self.usage.items() if isinstance(v, int) and v >= 0}
        if usage:
            out["usage"] = usage
        return out

    def stream_plan(self, timing: Timing | None) -> dict[str, Any]:
        """The rule's `stream:` mapping: what is pinned, and for a stream its deltas and timing."""
        plan: dict[str, Any] = {}
        if timing is not None:
            if timing.first_ms >= 1:
                plan["first_delay_ms"] = round(timing.first_ms)
            if timing.interval_ms >= 1:
                plan["interval_ms"] = round(timing.interval_ms)
        if self.deltas and self.embeddings is None and "".join(self.deltas) == self.text:
            plan["deltas"] = list(self.deltas)
        if self.id:
            plan["id"] = self.id[:256]
        if self.created is not None and self.created >= 0:
            plan["created"] = self.created
        return plan


def arguments_text(value: Any) -> str:
    """Tool arguments as the JSON text a rule keeps (providers send an object or the text itself)."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False, separators=(",", ":"))
