"""`MockGPT.explain`: which rule answers a request, why each rule before it does not, and the answer.

One function behind `synthgpt explain` and `POST /_synthgpt/explain`. Explaining is read-only:

- no `times` call is used and nothing is journaled (the rules are traced, not resolved);
- the rule draws with the call index the next real call would get, so a `sequence` shows its next step;
- the clock is peeked, not read, where reading moves it (a StepClock);
- another `seed` draws as an engine with that seed would, and leaves this engine's seed alone.

So the answer shown is, byte for byte, the one the next call with this request gets (under that seed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._validation import check_engine_args
from .engine.drawing import draw_output
from .errors import DrawError, NoRuleMatched, SynthGPTError
from .model import ApiKind, ModelOutput, ModelRequest
from .rules.trace import RuleVerdict
from .seeding import derive_seed

if TYPE_CHECKING:
    from .engine import MockGPT

__all__ = ["Explanation", "explain", "with_seed"]


@dataclass(frozen=True, slots=True)
class Explanation:
    request: ModelRequest
    seed: int
    """The engine seed the answer was drawn under."""
    trace: tuple[RuleVerdict, ...]
    """Each rule tried, in order, up to the one that answers."""
    output: ModelOutput | None
    """The answer; None when the call fails (see `error`)."""
    error: SynthGPTError | None = None
    """What the real call would raise instead: no rule matched, the context window, a failing draw."""

    @property
    def rule(self) -> str | None:
        """The rule that answers, if one does."""
        last = self.trace[-1] if self.trace else None
        return last.rule if last is not None and last.matched else None

    @property
    def answer_seed(self) -> int | None:
        """The seed the answer was drawn from (derived from the engine seed, rule and request)."""
        return None if self.output is None else self.output.id_seed

    def trace_json(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for v in self.trace:
            item: dict[str, Any] = {"rule": v.rule, "source": v.source, "matched": v.matched}
            if v.matched:
                item["captures"] = dict(v.captures)
                item["call_index"] = v.call_index
            else:
                item.update(failed=v.failed, used_up=v.used_up, error=v.error, reason=v.reason)
            out.append(item)
        return out

    def trace_lines(self) -> list[str]:
        """The trace as a person reads it: one line per rule, the answering one marked."""
        lines: list[str] = []
        for v in self.trace:
            where = f"  ({v.source})" if v.source else ""
            if v.matched:
                caps = ", ".join(f"{k}={val!r}" for k, val in v.captures.items())
                lines.append(f"=> {v.rule}{where}: answers" + (f"; captures {caps}" if caps else ""))
            else:
                lines.append(f"   {v.rule}{where}: {v.reason}")
        if isinstance(self.error, NoRuleMatched):  # its message lists the rules again: the trace says it
            lines.append("   no rule answers")
        elif self.error is not None:
            lines.append(f"!! {self.error}")
        return lines


def explain(
    mock: MockGPT,
    request: ModelRequest | Mapping[str, Any],
    *,
    api: ApiKind | None = None,
    seed: int | None = None,
) -> Explanation:
    """See the module docstring. A malformed request raises RequestError, as the real call does."""
    req = ModelRequest.from_dict(request)
    if api is not None and req.api != api:
        req = req.model_copy(update={"api": api})
    engine_seed = mock.seed if seed is None else check_engine_args(seed, None, 0)
    trace = mock.rules.explain(req)
    winner = trace[-1] if trace and trace[-1].matched else None
    if winner is None:
        if trace and trace[-1].error is not None:
            failed = DrawError(f"rule {trace[-1].rule!r}: its matcher raised {trace[-1].error}")
            return Explanation(req, engine_seed, trace, None, failed)
        tried = [f"{r.name}: {r.matcher!r}" for r in mock.rules]
        return Explanation(req, engine_seed, trace, None, NoRuleMatched(req.summary(), tried))
    try:
        prompt_tokens, limit, thinks = mock.budget(req)
        rule = mock.rules[winner.rule]
        answer_seed = derive_seed(engine_seed, rule.name, req.fingerprint())
        clock = mock.clock
        peek = getattr(clock, "peek", None)
        now = float(peek() if callable(peek) else clock.now())
        drawn = draw_output(
            req, rule, answer_seed, now, dict(winner.captures), winner.call_index, prompt_tokens, limit,
            base_seed=engine_seed, limits=mock.limits, thinks=thinks,
        )
    except SynthGPTError as exc:
        return Explanation(req, engine_seed, trace, None, exc)
    return Explanation(req, engine_seed, trace, drawn)


def with_seed(mock: MockGPT, seed: int) -> MockGPT:
    """`mock`, or a shallow copy of it under another engine seed: it draws (generators read the seed as
    `base_seed`) and derives request ids as an engine with that seed would. It shares the rules, clock and
    journal, so it is for reading and drawing, never for answering calls."""
    if seed == mock.seed:
        return mock
    other = object.__new__(type(mock))
    other.__dict__.update(mock.__dict__)
    other.seed = seed
    return other
