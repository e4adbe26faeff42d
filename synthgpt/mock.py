"""MockGPT: rules + seed + clock + journal. The one engine behind the server, the transport and the plugin."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from ._validation import check_engine_args
from .clock import Clock, FixedClock, parse_clock
from .errors import DrawError, SynthGPTError
from .generation import Generation
from .generators.core import DrawContext
from .generators.embedding import EmbeddingVectors
from .generators.reply import Answer, Reasoning, to_choice
from .journal import DEFAULT_JOURNAL_BYTES, CallJournal, CallRecord, Delivery, Journal, PackedRecord
from .limits import DEFAULT_LIMITS, Limits, check_answer_size
from .model import (
    ApiKind,
    Choice,
    ErrorSpec,
    Fault,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
)
from .profiles import output_limit, profile_for
from .request_checks import check_answerable
from .rules.rule import Resolved, Rule, RuleSet
from .rules.triggers import without_triggers
from .seeding import canonical_json, derive_seed
from .state.base import CallCounter
from .tokens import count_message_tokens, count_tokens, cut_to_tokens

if TYPE_CHECKING:
    from .explain import Explanation

__all__ = ["Budget", "FinishError", "MockGPT", "OnFinish"]

FinishError: TypeAlias = "BaseException | ErrorSpec | Fault | None"
"""What went wrong in a call, as `on_finish` is told: the exception that refused it (no record then), the
HTTP error it answered with, the fault that ended its stream, or None."""
OnFinish: TypeAlias = "Callable[[CallRecord | None, FinishError, bool], None]"


class Budget(NamedTuple):
    """What a request leaves an answer: its prompt's tokens, the output-token limit, and whether the
    model's profile thinks unasked."""

    prompt_tokens: int
    limit: int | None
    thinks: bool


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
        self.rules = _as_ruleset(rules)
        self.seed = check_engine_args(seed, context_window, journal_size)
        if isinstance(clock, str):
            clock = parse_clock(clock)
        elif clock is not None and not isinstance(clock, Clock):
            raise TypeError(
                f"MockGPT clock must be a Clock (FixedClock, StepClock, SystemClock, or anything with "
                f"now() -> float) or a spec like 'fixed:1700000000', got {type(clock).__name__}"
            )
        self.clock: Clock = clock or FixedClock()
        self._by_name: tuple[tuple[int, int], dict[str, Rule]] = ((0, -1), {})
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

    @property
    def journal(self) -> CallJournal:
        return self._journal

    @journal.setter
    def journal(self, journal: CallJournal) -> None:
        self._journal = journal
        if isinstance(journal, Journal):
            # the rules' histories hold the same records: packed in both places, they are freed
            journal.on_pack = self._packed

    def _packed(self, record: CallRecord, packed: PackedRecord) -> None:
        rules = self.rules
        key = (id(rules), len(rules))
        if self._by_name[0] != key:  # the rules were replaced or added to since the index was made
            self._by_name = (key, {r.name: r for r in rules})
        rule = self._by_name[1].get(record.rule)
        if rule is not None:
            rule._packed(record, packed)

    # -- journal conveniences --
    @property
    def records(self) -> list[CallRecord]:
        return self.journal.list()

    def reset(self) -> None:
        """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
        self.journal.clear()
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

    def resolve(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> Generation:
        """Answer one call: claim the first matching rule, draw, journal; the one place that does.

        Every caller (the server, `render`, `generate`) comes through here, so a test double that patches
        `resolve` stands in for the engine everywhere. A failed draw releases the rule's `times` slot and
        journals nothing.

        `Generation.replayable` means the answer did not depend on call order: no rule with `times` at or
        before the one that answered, and no draw read the rule's call count (`sequence`, a template's
        `call_index`, …).
        Such an answer is a pure function of (seed, rules, request, clock reading), so a caller that keeps
        those fixed may answer the same request again with `replay(record)` instead of drawing it.
        """
        started = time.perf_counter()  # timing for the journal only; never shapes an answer
        req = ModelRequest.from_dict(request)
        if api is not None and req.api != api:
            req = req.model_copy(update={"api": api})
        prompt_tokens, limit, thinks = self.budget(req)
        resolved = self.rules.resolve(req, self.counter)
        rule = resolved.rule
        seed = derive_seed(self.seed, rule.name, req.fingerprint())
        now = self.clock.now()
        reads: list[int] = []  # the draw's reads of the call count, if any
        captures, call_index = resolved.captures, resolved.call_index
        try:
            out = self._draw(
                req, rule, seed, now, captures, call_index, prompt_tokens, limit, order_reads=reads,
                thinks=thinks,
            )
            check_answer_size(req, out, self.limits)  # before any encoding: that is the long part
        except BaseException:
            self._release(resolved)  # a failed draw answered nothing: it must not use up a `times` slot
            raise
        if reads and resolved.unshared is not None:
            # the draw read a call count this process guessed while the shared one was away: no answer
            # rather than a step another replica may give too
            self._release(resolved)
            raise resolved.unshared

        def build(index: int) -> CallRecord:
            record = CallRecord(
                index=index,
                request=req,
                rule=rule.name,
                seed=seed,
                output=out,
                at=now,
                duration_ms=(time.perf_counter() - started) * 1000.0,
                captures=dict(resolved.captures),
                delivery=_delivery(req, out),
            )
            rule._record(record)
            return record

        record = self.journal.add(build)
        return Generation(out, rule, record, not reads and not self._times_rule_before(rule))

    def generate_traced(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> tuple[ModelOutput, CallRecord, bool]:
        """`resolve` as the (output, record, replayable) tuple of earlier versions; prefer `resolve`."""
        drawn = self.resolve(request, api=api)
        return drawn.output, drawn.record, drawn.replayable

    def budget(self, req: ModelRequest) -> Budget:
        """What `req` leaves its answer (see `Budget`); raises what refuses the call before any rule is tried
        (a request with nothing to answer, a context window or profile it does not fit)."""
        check_answerable(req)  # the same refusals as over HTTP
        prompt_tokens = self.prompt_tokens(req)
        profile = profile_for(self.rules.profiles, req.model) if self.rules.profiles else None
        limit = output_limit(req, prompt_tokens, profile, self.context_window)
        return Budget(prompt_tokens, limit, profile is not None and profile.reasoning)

    def explain(
        self,
        request: ModelRequest | Mapping[str, Any],
        *,
        api: ApiKind | None = None,
        seed: int | None = None,
    ) -> Explanation:
        """Which rule answers `request` and why each rule before it does not, with the answer the call
        would get under `seed` (default: this engine's). Read-only: see `synthgpt.explain`."""
        from .explain import explain

        return explain(self, request, api=api, seed=seed)

    def replay(self, rule: Rule, record: CallRecord) -> CallRecord:
        """Journal one more call answered exactly as `record` (a replayable one, see `resolve`).

        The call is counted and recorded as if drawn: the journal, `rule.calls` and `rule.call_count`
        see every call, whether its answer was drawn or replayed.
        """
        started = time.perf_counter()
        rule._claim()

        def build(index: int) -> CallRecord:
            again = CallRecord(
                index=index,
                request=record.request,
                rule=record.rule,
                seed=record.seed,
                output=record.output,
                at=record.at,
                duration_ms=(time.perf_counter() - started) * 1000.0,
                captures=dict(record.captures),
                delivery=_delivery(record.request, record.output),
            )
            rule._record(again)
            return again

        return self.journal.add(build)

    def _release(self, resolved: Resolved) -> None:
        if self.counter is not None and resolved.unshared is None:
            self.counter.release(self.rules.fingerprint, resolved.rule)
        else:
            resolved.rule._release()

    def _times_rule_before(self, rule: Rule) -> bool:
        """A rule with `times` at or before `rule`: which rule answers then depends on the calls before."""
        for r in self.rules:
            if r.times is not None:
                return True
            if r is rule:
                return False
        return True

    async def agenerate(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> ModelOutput:
        """Generation never waits on I/O, so the async form answers directly (pacing is the codec's job)."""
        return self.generate(request, api=api)

    def prompt_tokens(self, req: ModelRequest) -> int:
        texts: list[str] = []
        for m in req.messages:
            texts.append(m.content)
            texts.extend(tc.name + tc.arguments for tc in m.tool_calls)
        texts.extend(req.inputs)
        n = count_message_tokens(texts) if req.messages else sum(count_tokens(t) for t in req.inputs)
        for t in req.tools:
            n += 8 + count_tokens(t.name + " " + t.description + " " + canonical_json(t.parameters))
        return n

    def _draw(
        self,
        req: ModelRequest,
        rule: Rule,
        seed: int,
        now: float,
        captures: dict[str, str],
        call_index: int,
        prompt_tokens: int,
        limit: int | None,
        *,
        order_reads: list[int] | None = None,
        thinks: bool = False,
    ) -> ModelOutput:
        stream = rule.stream
        error = rule.error
        fixed_usage: dict[str, int] | None = None
        choices: list[Choice] = []
        embeddings: tuple[tuple[float, ...], ...] = ()
        view = without_triggers(req)  # what the answer is drawn from: triggers steer, they are not asked
        for i in range(req.n):
            ctx = DrawContext(
                view,
                seed if i == 0 else derive_seed(seed, "choice", i),
                now=now,
                captures=captures,
                rule=rule.name,
                call_index=call_index,
                base_seed=self.seed,
                order_reads=order_reads,
                limits=self.limits,
                received=req,
            )
            try:
                value = rule.generator.draw(ctx)
            except DrawError as exc:  # name the rule: the generator alone rarely says where it came from
                raise DrawError(f"rule {rule.name!r}: {exc}", rule=rule.name, code=exc.code,
                                public=exc.public) from exc  # fmt: skip
            except SynthGPTError:
                raise
            except Exception as exc:  # a user's callable inside map/bind/filter: say which rule it was
                raise DrawError(f"rule {rule.name!r}: {type(exc).__name__}: {exc}", rule=rule.name) from exc
            cut: int | None = None
            finish = None
            if isinstance(value, Answer) and value.usage is not None:
                fixed_usage = value.usage
            if isinstance(value, Answer):
                stream = value.stream or stream
                error = value.error or error
                finish = value.finish_reason
                cut = value.cut_tokens
                value = value.value
            if isinstance(value, EmbeddingVectors):  # vectors, not text: nothing to cut, no output tokens
                embeddings, value = value.vectors, Choice()
            choice = _spelled_by_deltas(to_choice(value, ctx), stream, rule.name)
            if finish is not None:
                choice = choice.model_copy(update={"finish_reason": finish})
            # a model that thinks by default reasons as if asked (a rule's `reasoning=False` still wins)
            auto = rule.adds_reasoning(req) or (thinks and rule.reasoning == "auto")
            if auto and not choice.reasoning and error is None:
                r = Reasoning().draw(ctx.fork("auto-reasoning"))
                choice = Choice(parts=(r, *choice.parts), finish_reason=choice.finish_reason)
            choices.append(_apply_limit(_apply_stop(choice, req.stop_sequences), limit, cut))
        if req.api == "embeddings" and error is None and len(embeddings) != len(req.inputs):
            # said here, where the rule is known, rather than as a bare 500 when the body is encoded
            raise DrawError(
                f"rule {rule.name!r} answered an embeddings request without one vector per input "
                f"({len(embeddings)} for {len(req.inputs)}); use the `embeddings` generator",
                rule=rule.name, public=True,
            )  # fmt: skip
        usage = _usage(prompt_tokens, choices)
        if fixed_usage:  # a rule's fixed `usage` replaces the counted fields it names
            usage = usage.model_copy(update=fixed_usage)
        return ModelOutput(
            choices=tuple(choices),
            usage=usage,
            stream=stream or ModelOutput.model_fields["stream"].default,
            # a copy per answer: the rule's ErrorSpec holds dicts (headers, body) a caller could mutate
            error=None if error is None else error.model_copy(deep=True),
            model=req.model,
            id_seed=seed,
            created=int(now) if stream is None or stream.created is None else stream.created,
            rule=rule.name,
            embeddings=embeddings,
        )

    def __repr__(self) -> str:
        return f"MockGPT(rules={[r.name for r in self.rules]!r}, seed={self.seed}, clock={self.clock!r})"


def _apply_stop(choice: Choice, stops: tuple[str, ...]) -> Choice:
    """End the text before the first stop sequence completed in it, finishing with `stop`.

    The answer's text parts are searched as the one stream a model writes, so a sequence may begin in one
    part and end in the next. A model stops generating there, so nothing after it (more text, tool calls)
    exists. Reasoning is not searched: the stop applies to the answer. Applied before the token limit, so
    usage counts what is sent.
    """
    if not stops:
        return choice
    text = choice.text
    # the sequence whose end comes first is the one generation stops at; on a tie, the longer one
    hits = [(at + len(s), at, s) for s in stops if (at := text.find(s)) >= 0]
    if not hits:
        return choice
    _, at, seq = min(hits)
    kept: list[Any] = []
    start = 0  # where the current text part begins in the joined text
    for p in choice.parts:
        if isinstance(p, TextOut):
            end = start + len(p.text)
            if end > at:  # the sequence begins in this part: what precedes it is the last text sent
                if at > start:
                    kept.append(p.model_copy(update={"text": p.text[: at - start]}))
                break
            start = end
        kept.append(p)
    return Choice(parts=tuple(kept), finish_reason="stop", stop_sequence=seq)


def _delivery(req: ModelRequest, out: ModelOutput) -> Delivery:
    """How a new record starts: a stream is `streaming` until it is finished."""
    return Delivery("error" if out.error is not None else "streaming" if req.stream else "done")


def _spelled_by_deltas(choice: Choice, plan: StreamPlan | None, rule: str) -> Choice:
    """A choice whose text the stream plan's explicit deltas spell: an answer without text gets theirs; an
    answer with other text is the rule's mistake, said now rather than streamed as something else."""
    if plan is None or plan.deltas is None:
        return choice
    joined = "".join(plan.deltas)
    if not choice.text and not choice.tool_calls:
        return choice.model_copy(update={"parts": (*choice.parts, TextOut(text=joined))})
    if choice.text != joined:
        raise DrawError(
            f"rule {rule!r}: the stream's deltas spell {_short(joined)} but the answer's text is "
            f"{_short(choice.text)}; give the deltas alone (they are the text) or make them spell it"
        )
    return choice


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _as_ruleset(rules: object) -> RuleSet:
    """`MockGPT(rules=…)`: a RuleSet, one Rule, any iterable of Rules, or None for the built-in rules."""
    if rules is None:
        from .rules.defaults import default_rules

        return default_rules()
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, Rule):
        return RuleSet([rules])
    if isinstance(rules, str | bytes | Mapping) or not isinstance(rules, Iterable):
        raise TypeError(
            f"MockGPT rules must be a Rule, an iterable of Rules or a RuleSet, got {type(rules).__name__}"
        )
    items = list(rules)
    for i, r in enumerate(items):
        if not isinstance(r, Rule):
            raise TypeError(f"MockGPT rules[{i}] must be a Rule, got {type(r).__name__}")
    return RuleSet(items)


def _apply_limit(choice: Choice, limit: int | None, cut: int | None) -> Choice:
    """Cut reasoning, then text, to the output-token budget; a cut answer finishes with `length`."""
    budget = min(x for x in (limit, cut) if x is not None) if (limit or cut is not None) else None
    if budget is None:
        return choice
    parts: list[Any] = []
    was_cut = False
    for p in choice.parts:
        if isinstance(p, TextOut | ReasoningPart):
            text, used, did = cut_to_tokens(p.text, budget)
            budget -= used
            if did:
                was_cut = True
            if text or not did:
                parts.append(p.model_copy(update={"text": text}))
            if did:
                break
        elif isinstance(p, ToolCallPart):
            # a call costs what usage counts for it (name + arguments); one that does not fit is cut like
            # text, as the real APIs do: its arguments end mid-JSON and the answer finishes with `length`
            name_tokens = count_tokens(p.name)
            args, used, did = cut_to_tokens(p.arguments, max(0, budget - name_tokens))
            name_fits = budget >= name_tokens
            budget -= name_tokens + used
            if did:
                was_cut = True
                if name_fits:  # the call began: the part of its arguments written so far
                    parts.append(p.model_copy(update={"arguments": args}))
                break
            parts.append(p)
        else:
            parts.append(p)
    if cut is not None and not was_cut:
        was_cut = True  # the fault asks for `length` even when the text happened to fit
    if not was_cut:
        return choice
    return Choice(parts=tuple(parts), finish_reason="length")


def _usage(prompt_tokens: int, choices: list[Choice]) -> Usage:
    completion = reasoning = 0
    for c in choices:
        for p in c.parts:
            if isinstance(p, ReasoningPart):
                n = count_tokens(p.text)
                reasoning += n
                completion += n
            elif isinstance(p, TextOut):
                completion += count_tokens(p.text)
            else:
                completion += count_tokens(p.name) + count_tokens(p.arguments)
    return Usage(prompt_tokens=prompt_tokens, completion_tokens=completion, reasoning_tokens=reasoning)
