"""`MockGPT`: rules + seed + clock + journal. The one engine behind the server, the transport and the plugin.

The steps of an answer live beside it: `budget` (what a request leaves its answer), the rule search
(`rules/dispatch.py`, through `RuleSet.resolve`), `drawing` (the generators, then `shaping`: deltas, stop,
limit, usage) and `calls` (the journal record, a replay, a released claim).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from .._validation import check_engine_args
from ..clock import Clock
from ..errors import SynthGPTError
from ..frozen import field_setters
from ..generation import Generation
from ..journal import DEFAULT_JOURNAL_BYTES, CallJournal, CallRecord, Journal
from ..limits import DEFAULT_LIMITS, Limits, check_answer_size
from ..model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest
from ..rules.rule import Resolved, Rule, RuleSet
from ..seeding import seed_after, seed_prefix
from ..state.base import CallCounter
from .arguments import as_clock, as_ruleset
from .budget import Budget, budget_for, prompt_tokens
from .calls import RecordBuilder, release
from .drawing import draw_output
from .memo import DrawMemo

if TYPE_CHECKING:
    from ..explain import Explanation

__all__ = ["FinishError", "MockGPT", "OnFinish"]

FinishError: TypeAlias = "BaseException | ErrorSpec | Fault | None"
"""What went wrong in a call, as `on_finish` is told: the exception that refused it (no record then), the
HTTP error it answered with, the fault that ended its stream, or None."""
OnFinish: TypeAlias = "Callable[[CallRecord | None, FinishError, bool], None]"

_new = object.__new__
_output, _rule, _record, _replayable = field_setters(Generation, "output", "rule", "record", "replayable")


def _generation(output: ModelOutput, rule: Rule, record: CallRecord, replayable: bool) -> Generation:
    """`Generation(…)`, built through its slots (`frozen.field_setters`): one per call."""
    drawn: Generation = _new(Generation)
    _output(drawn, output)
    _rule(drawn, rule)
    _record(drawn, record)
    _replayable(drawn, replayable)
    return drawn


class MockGPT:
    """A deterministic synthetic model.

    `generate(request)` picks the first matching rule, derives the answer's seed from
    (seed, rule name, request fingerprint), draws the rule's generator, applies the output-token limit and
    counts usage. The same seed and request give the same output in any process and any call order
    (rules with `times` aside, and a StepClock's `created`).
    """

    def __init__(
        self,
        rules: RuleSet | Rule | Iterable[Rule] | None = None,
        *,
        seed: int = 0,
        clock: Clock | str | None = None,
        journal_size: int = 1000,
        context_window: int | None = None,
        limits: Limits | None = None,
        on_finish: OnFinish | None = None,
        journal_bytes: int = DEFAULT_JOURNAL_BYTES,
    ) -> None:
        self.rules = as_ruleset(rules)
        self.seed = check_engine_args(seed, context_window, journal_size)
        self.clock: Clock = as_clock(clock)
        self.journal = Journal(journal_size, journal_bytes)
        self.context_window = context_window
        self.counter: CallCounter | None = None
        """Counts the rules' calls when they are shared between processes (`synthgpt.state`); None: each
        rule counts its own."""
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"MockGPT limits must be a synthgpt.Limits, got {type(limits).__name__}")
        self.limits = limits or DEFAULT_LIMITS
        """The per-request budgets (`synthgpt.limits`)."""
        if on_finish is not None and not callable(on_finish):
            raise TypeError(f"MockGPT on_finish must be callable, got {type(on_finish).__name__}")
        self.on_finish = on_finish
        """Called once per call when it has ended: `on_finish(record, error, cancelled)` (see `finish`)."""
        self._finishing = threading.Lock()
        self._memo = DrawMemo()
        self._seed_prefixes: tuple[int, dict[str, bytes]] = (self.seed, {})

    @property
    def journal(self) -> CallJournal:
        return self._journal

    @journal.setter
    def journal(self, journal: CallJournal) -> None:
        self._journal = journal

    # -- journal conveniences --
    @property
    def records(self) -> list[CallRecord]:
        return self.journal.list()

    def reset(self) -> None:
        """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
        self.journal.clear()
        self._memo.clear()
        self.rules.reset()
        if self.counter is not None:
            self.counter.reset()

    # -- generation --
    def generate(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> ModelOutput:
        """The answer to `request`; the call is finished (`on_finish`) when it is returned or refused."""
        try:
            drawn = self.resolve(request, api=api)
        except SynthGPTError as exc:
            self.finish(None, exc)
            raise
        out, record = drawn.output, drawn.record
        # a streamed answer's planned fault ends its stream; a body has none
        self.finish(record, out.error or (out.stream.ending() if record.request.stream else None))
        return out

    def finish(
        self,
        record: CallRecord | None,
        error: FinishError = None,
        cancelled: bool = False,
        *,
        frames_sent: int | None = None,
    ) -> None:
        """End a call: record how its answer was delivered, then call `on_finish(record, error, cancelled)`.

        Once per call, whichever way it ended: `generate()` finishes its calls itself; the server finishes
        a JSON answer when it is built and a stream when its last frame went out, the client hung up
        (`cancelled`, with the frames sent so far) or a fault ended it (`error` is the Fault). A call
        refused before it had a record (a bad request, no rule matched, a failed draw) is finished with
        `record=None` and the exception. Finishing a record twice does nothing the second time.
        """
        if record is not None:
            delivery = record.delivery
            with self._finishing:
                if delivery.finished:
                    return
                delivery.finished = True
            delivery.outcome = (
                "cancelled" if cancelled
                else "error" if isinstance(error, ErrorSpec | BaseException)
                else "fault" if isinstance(error, Fault)
                else "done"
            )  # fmt: skip
            if frames_sent is not None:
                delivery.frames_sent = frames_sent
            self.journal.finished(record)
        hook = self.on_finish
        if hook is not None:
            hook(record, error, cancelled)

    def resolve(self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None) -> Generation:
        """Answer one call: claim the first matching rule, draw, journal; the one place that does.

        Every caller (the server, `render`, `generate`) comes through here, so a test double that patches
        `resolve` stands in for the engine everywhere. A failed draw releases the rule's `times` slot and
        journals nothing.

        `Generation.replayable` means the answer did not depend on call order: no rule with `times` at or
        before the one that answered, and no draw read the rule's call count (`sequence`, a template's
        `call_index`, …).
        Such an answer is a pure function of (seed, rules, request, clock reading), so a caller that keeps
        those fixed may answer the same request again with `replay(record)` instead of drawing it. The
        engine does so itself for a request given as a dict that comes a third time (`engine.memo`).
        """
        memo = self._memo
        key = None if isinstance(request, ModelRequest) else memo.key(self, request, api)
        keep = None  # on the request's second sighting: the generation to keep its answer under
        if key is not None:
            kept, keep = memo.sighting(self, key)
            if kept is not None:
                return _generation(kept.output, kept.rule, self.replay(kept.rule, kept.record), True)
        drawn = self._draw(request, api)
        if keep is not None and key is not None and drawn.replayable:
            memo.put(keep, key, drawn)
        return drawn

    def _draw(self, request: ModelRequest | Mapping[str, Any], api: ApiKind | None) -> Generation:
        started = time.perf_counter()  # timing for the journal only; never shapes an answer
        req = request if type(request) is ModelRequest else ModelRequest.from_dict(request)
        if api is not None and req.api != api:
            req = req.model_copy(update={"api": api})
        rules = self.rules
        prompt_tokens, limit, thinks = budget_for(req, rules.profiles, self.context_window)
        resolved = rules.resolve(req, self.counter)
        rule = resolved.rule
        seed = self._answer_seed(rule.name, req.fingerprint())
        now = float(self.clock.now())  # a clock may return an int: compiled, the draw would make it a float
        reads: list[int] = []  # the draw's reads of the call count, if any
        try:
            out = draw_output(
                req, rule, seed, now, resolved.captures, resolved.call_index, prompt_tokens, limit,
                base_seed=self.seed, limits=self.limits, order_reads=reads, thinks=thinks,
            )  # fmt: skip
            check_answer_size(req, out, self.limits)  # before any encoding: that is the long part
        except BaseException:
            self._release(resolved)  # a failed draw answered nothing: it must not use up a `times` slot
            raise
        if reads and resolved.unshared is not None:
            # the draw read a call count this process guessed while the shared one was away: no answer
            # rather than a step another replica may give too
            self._release(resolved)
            raise resolved.unshared
        record = self.journal.add(RecordBuilder(rule, req, out, seed, now, resolved.captures, started))
        return _generation(out, rule, record, not reads and resolved.order_free)

    def _answer_seed(self, rule: str, fingerprint: int) -> int:
        """`derive_seed(self.seed, rule, fingerprint)`, the seed of every answer: the engine's seed and the
        rule's name are encoded once per rule, not per answer."""
        seed, prefixes = self._seed_prefixes
        if seed is not self.seed:  # `seed` is public: an engine given another draws under that one
            seed, prefixes = self._seed_prefixes = (self.seed, {})
        prefix = prefixes.get(rule)
        if prefix is None:
            if len(prefixes) >= 4096:  # rule names come and go with rule lists: keep the map bounded
                prefixes.clear()
            prefix = prefixes[rule] = seed_prefix(seed, rule)
        return seed_after(prefix, fingerprint)

    def generate_traced(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> tuple[ModelOutput, CallRecord, bool]:
        """`resolve` as the (output, record, replayable) tuple of earlier versions; prefer `resolve`."""
        drawn = self.resolve(request, api=api)
        return drawn.output, drawn.record, drawn.replayable

    def budget(self, req: ModelRequest) -> Budget:
        """What `req` leaves its answer (see `Budget`); raises what refuses the call before any rule is tried
        (a request with nothing to answer, a context window or profile it does not fit)."""
        return budget_for(req, self.rules.profiles, self.context_window)

    def explain(
        self,
        request: ModelRequest | Mapping[str, Any],
        *,
        api: ApiKind | None = None,
        seed: int | None = None,
    ) -> Explanation:
        """Which rule answers `request` and why each rule before it does not, with the answer the call
        would get under `seed` (default: this engine's). Read-only: see `synthgpt.explain`."""
        from ..explain import explain

        return explain(self, request, api=api, seed=seed)

    def replay(self, rule: Rule, record: CallRecord) -> CallRecord:
        """Journal one more call answered exactly as `record` (a replayable one, see `resolve`).

        The call is counted and recorded as if drawn: the journal, `rule.calls` and `rule.call_count`
        see every call, whether its answer was drawn or replayed.
        """
        started = time.perf_counter()
        rule._claim()
        build = RecordBuilder(rule, record.request, record.output, record.seed, record.at, record.captures,
                              started, record.nbytes, repeats=True)  # fmt: skip
        return self.journal.add(build)

    def _release(self, resolved: Resolved) -> None:
        release(resolved, self.counter, lambda: self.rules.fingerprint)

    async def agenerate(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> ModelOutput:
        """Generation never waits on I/O, so the async form answers directly (pacing is the codec's job)."""
        return self.generate(request, api=api)

    def prompt_tokens(self, req: ModelRequest) -> int:
        """The prompt's tokens, as usage reports them (`engine.budget.prompt_tokens`)."""
        return prompt_tokens(req)

    def __repr__(self) -> str:
        return f"MockGPT(rules={[r.name for r in self.rules]!r}, seed={self.seed}, clock={self.clock!r})"
