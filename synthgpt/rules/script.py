"""Ordered steps inside one rule: conversation scripts (by tool round) and sequences (by call count).

    Rule("trip", m.last_user(contains="trip"), script(
        g.tool_call("search_flights", {"to": "Paris"}),                  # before any tool call
        g.tool_call("book", {"id": g.template("{{ tool_result('search_flights').id }}")}),
        g.template("Booked: {{ tool_result('book').confirmation }}"),  # after the second round
    ))

A `script` picks its step from the request alone (how many rounds of tool calls the current turn holds),
so retries, parallel workers and any arrival order see the same step. A `sequence` picks its step from
how many calls the rule has answered: the one construct, with `times`, whose answers depend on call order
(and on the process: each server worker counts its own calls, unless `serve --state redis://…` shares the
counts between them, see `synthgpt.state`). Past the last step, the last one repeats.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import RuleError
from ..generators.core import DrawContext, Generator, lift
from .matchers import tool_rounds

__all__ = ["Script", "script", "sequence"]

StepBy = Literal["round", "call"]


class Script(Generator[Any]):
    __slots__ = ("by", "steps")

    def __init__(self, steps: Any, *, by: StepBy = "round") -> None:
        steps = tuple(steps)
        if not steps:
            raise RuleError(f"{'script' if by == 'round' else 'sequence'} needs at least one step")
        if by not in ("round", "call"):
            raise RuleError(f"steps go by 'round' or 'call', got {by!r}")
        self.steps = tuple(lift(s) for s in steps)
        self.by: StepBy = by

    def step_index(self, ctx: DrawContext) -> int:
        n = tool_rounds(ctx.request) if self.by == "round" else ctx.call_index
        return min(n, len(self.steps) - 1)

    def draw(self, ctx: DrawContext) -> Any:
        i = self.step_index(ctx)
        return self.steps[i].draw(ctx.fork(("step", i)))

    def __repr__(self) -> str:
        name = "script" if self.by == "round" else "sequence"
        return f"{name}({', '.join(map(repr, self.steps))})"


def script(*steps: Any) -> Script:
    """Step n answers the n-th tool round of the current turn (step 1: before any tool call)."""
    return Script(steps, by="round")


def sequence(*steps: Any) -> Script:
    """Step n answers the rule's n-th call, in arrival order."""
    return Script(steps, by="call")
