"""MockGPT: rules + seed + clock + journal. The one engine behind the server, the transport and the plugin."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from .clock import Clock, FixedClock
from .errors import ContextWindowExceeded, DrawError, SynthGPTError
from .generators.core import DrawContext
from .generators.embedding import EmbeddingVectors
from .generators.reply import Answer, Reasoning, to_choice
from .journal import CallRecord, Journal
from .model import ApiKind, Choice, ModelOutput, ModelRequest, ReasoningPart, TextOut, ToolCallPart, Usage
from .rules.rule import Rule, RuleSet
from .seeding import canonical_json, derive_seed
from .tokens import count_message_tokens, count_tokens, cut_to_tokens

__all__ = ["MockGPT"]


class MockGPT:
    """A deterministic synthetic model.

    `generate(request)` picks the first matching rule, derives the answer's seed from
    (seed, rule name, request fingerprint), draws the rule's generator, applies the output-token limit and
    counts usage. The same seed and request give the same output in any process and any call order
    (rules with `times` aside, and a StepClock's `created`).
    """

    def __init__(
        self,
        rules: RuleSet | Iterable[Rule] | None = None,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        journal_size: int = 1000,
        context_window: int | None = None,
    ) -> None:
        if rules is None:
            from .rules.defaults import default_rules

            rules = default_rules()
        self.rules = rules if isinstance(rules, RuleSet) else RuleSet(rules)
        self.seed = int(seed)
        self.clock: Clock = clock or FixedClock()
        self.journal = Journal(journal_size)
        self.context_window = context_window

    # -- journal conveniences --
    @property
    def records(self) -> list[CallRecord]:
        return self.journal.list()

    def reset(self) -> None:
        """Forget every call: the journal and the rules' call counts (so `times` rules answer again)."""
        self.journal.clear()
        self.rules.reset()

    # -- generation --
    def generate(
        self, request: ModelRequest | Mapping[str, Any], *, api: ApiKind | None = None
    ) -> ModelOutput:
        started = time.perf_counter()  # timing for the journal only; never shapes an answer
        req = ModelRequest.from_dict(request)
        if api is not None and req.api != api:
            req = req.model_copy(update={"api": api})
        prompt_tokens = self.prompt_tokens(req)
        limit = req.max_output_tokens
        if self.context_window is not None:
            reserve = limit or 0
            # a prompt that fills the window leaves no room for even one output token
            if prompt_tokens + max(reserve, 1) > self.context_window:
                raise ContextWindowExceeded(prompt_tokens, reserve, self.context_window)
            if limit is None:
                limit = self.context_window - prompt_tokens  # the answer stops where the window ends
        resolved = self.rules.resolve(req)
        rule = resolved.rule
        seed = derive_seed(self.seed, rule.name, req.fingerprint())
        now = self.clock.now()
        out = self._draw(req, rule, seed, now, resolved.captures, resolved.call_index, prompt_tokens, limit)

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
            )
            rule._record(record)
            return record

        self.journal.add(build)
        return out

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
    ) -> ModelOutput:
        stream = rule.stream
        error = rule.error
        fixed_usage: dict[str, int] | None = None
        choices: list[Choice] = []
        embeddings: tuple[tuple[float, ...], ...] = ()
        for i in range(req.n):
            ctx = DrawContext(
                req, seed if i == 0 else derive_seed(seed, "choice", i),
                now=now, captures=captures, rule=rule.name, call_index=call_index, base_seed=self.seed,
            )
            try:
                value = rule.generator.draw(ctx)
            except DrawError as exc:  # name the rule: the generator alone rarely says where it came from
                raise DrawError(f"rule {rule.name!r}: {exc}") from exc
            except SynthGPTError:
                raise
            except Exception as exc:  # a user's callable inside map/bind/filter: say which rule it was
                raise DrawError(f"rule {rule.name!r}: {type(exc).__name__}: {exc}") from exc
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
            choice = to_choice(value, ctx)
            if finish is not None:
                choice = choice.model_copy(update={"finish_reason": finish})
            wants_reasoning = req.reasoning is not None and rule.reasoning is not False
            if wants_reasoning and not choice.reasoning and error is None:
                r = Reasoning().draw(ctx.fork("auto-reasoning"))
                choice = Choice(parts=(r, *choice.parts), finish_reason=choice.finish_reason)
            choices.append(_apply_limit(choice, limit, cut))
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
            created=int(now),
            rule=rule.name,
            embeddings=embeddings,
        )

    def __repr__(self) -> str:
        return f"MockGPT(rules={[r.name for r in self.rules]!r}, seed={self.seed}, clock={self.clock!r})"


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
        else:
            budget -= count_tokens(p.arguments) if isinstance(p, ToolCallPart) else 0
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
