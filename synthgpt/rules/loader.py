"""Load rule files (YAML or JSON) into the RuleSet the Python DSL would build.

    loaded = load_files(["rules.yaml"])
    mock = loaded.mock()  # the files' seed (else 0) and clock

Included files are read first, depth-first, each once; their rules come before the including file's.
`include: builtin` keeps the built-in behaviour beside the file's rules: `builtin:triggers` places the
`!MOCK_…!` trigger rules where it is included (before the including file's rules), `builtin:defaults`
places the built-in answers (embeddings, structured output, tool calls, tool results, text) after every
rule of every file, as the fallback; `builtin` is both. Built-in rule names are then taken.
`seed` and `clock` come from the first file (in command-line order) that sets them, a file's own value
winning over its includes'; two command-line files setting different values is an error. `models` is
the union. All errors of all rules are collected; the first is raised, carrying the rest in `.errors`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import ValidationError

from ..clock import Clock, FixedClock, parse_clock
from ..errors import RuleError, suggest
from ..generators import answer
from ..generators.core import Generator, Just
from ..generators.embedding import EmbeddingVectors
from ..generators.registry import REGISTRY
from ..generators.reply import Reply
from ..model import ReasoningPart
from ..profiles import ModelProfile, as_profiles
from .build import Builder
from .defaults import BUILTIN_PARTS, TriggerAnswer, builtin_rules
from .locations import NodePath, RuleFileError, SourceMap, parse_source
from .rule import Rule, RuleSet
from .script import Script
from .spec import OutputSpec, RuleFileSpec, RuleSpec, StepSpec, validation_errors

if TYPE_CHECKING:
    from ..engine import MockGPT

    M = TypeVar("M", bound=MockGPT)

__all__ = [
    "LoadedRules", "RuleFileError", "RuleOrigin", "load_files", "load_report", "load_text", "mock_from_files",
]  # fmt: skip

_ANSWER_KEYS = ("output", "generate", "template", "schema", "script", "sequence")


@dataclass(frozen=True, slots=True)
class RuleOrigin:
    """Where a rule was written: the rule's own position and its `match`'s."""

    path: str
    line: int
    col: int
    match_line: int
    match_col: int
    times: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class LoadedRules:
    ruleset: RuleSet
    seed: int | None = None
    clock: Clock | None = None
    models: tuple[str, ...] = ()
    """Model names served (profiles' names included)."""
    profiles: tuple[ModelProfile, ...] = ()
    """The `models:` entries that are profiles (context window, maximum output, reasoning)."""
    files: tuple[Path, ...] = ()
    """Every file read, includes too (what `serve --watch` watches)."""
    origins: dict[str, RuleOrigin] = field(default_factory=dict)
    """Rule name -> where it was written (built-in rules have none)."""
    builtin: frozenset[str] = frozenset()
    """The parts of the built-in rules included (`triggers`, `defaults`)."""

    @overload
    def mock(self, seed: int | None = None, clock: Clock | None = None, *, cls: None = None,
             **kwargs: Any) -> MockGPT: ...
    @overload
    def mock(self, seed: int | None = None, clock: Clock | None = None, *, cls: type[M],
             **kwargs: Any) -> M: ...

    def mock(self, seed: int | None = None, clock: Clock | None = None, *, cls: type[MockGPT] | None = None,
             **kwargs: Any) -> MockGPT:
        """A MockGPT (or `cls`, a subclass) answering with these rules. A `seed` or `clock` given wins over
        the files' (then seed 0 and MockGPT's default clock); `kwargs` go to the constructor."""
        from ..engine import MockGPT  # local: the engine imports the rules package, not the other way round

        chosen = seed if seed is not None else (self.seed if self.seed is not None else 0)
        return (cls or MockGPT)(self.ruleset, seed=chosen, clock=clock if clock is not None else self.clock,
                                **kwargs)


@overload
def mock_from_files(paths: Iterable[str | os.PathLike[str]], *, seed: int | None = None,
                    clock: Clock | None = None, cls: None = None, **kwargs: Any) -> MockGPT: ...
@overload
def mock_from_files(paths: Iterable[str | os.PathLike[str]], *, seed: int | None = None,
                    clock: Clock | None = None, cls: type[M], **kwargs: Any) -> M: ...


def mock_from_files(paths: Iterable[str | os.PathLike[str]], *, seed: int | None = None,
                    clock: Clock | None = None, cls: type[MockGPT] | None = None, **kwargs: Any) -> MockGPT:
    """The one way a MockGPT is made from rule files (`serve`, `render`, the pytest marker's `rules_file`).

    The files' rules, `models`, seed and clock; a `seed` or `clock` given wins over the files'. No files:
    the built-in rules (seed 0 unless given). `cls` (a MockGPT subclass) and `kwargs` go to the engine.
    """
    files = list(paths)
    if files:
        return load_files(files).mock(seed, clock, cls=cls, **kwargs)
    from ..engine import MockGPT  # local: the engine imports the rules package, not the other way round

    return (cls or MockGPT)(None, seed=0 if seed is None else seed, clock=clock, **kwargs)


def load_files(paths: Iterable[str | os.PathLike[str]]) -> LoadedRules:
    """Load rule files (the paths as given are how errors name them)."""
    loader = _Loader()
    for p in paths:
        loader.top_file(str(p))
    return loader.finish()


def load_report(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[LoadedRules | None, list[RuleFileError]]:
    """(the rules, or None and every error): what `synthgpt check` reports."""
    loader = _Loader()
    for p in paths:
        loader.top_file(str(p))
    try:
        return loader.finish(), []
    except RuleFileError as exc:
        return None, list(exc.errors)


def load_text(text: str, path: str = "<string>", *, json_syntax: bool | None = None) -> LoadedRules:
    """Load one rule file from text; includes are relative to `path`'s directory."""
    loader = _Loader()
    loader.top_text(text, path, json_syntax=json_syntax)
    return loader.finish()


@dataclass
class _Setting:
    value: Any
    where: str
    top: int  # index of the command-line file it came from


class _Loader:
    def __init__(self) -> None:
        self.errors: list[RuleFileError] = []
        self.rules: list[Rule] = []
        self.origins: dict[str, RuleOrigin] = {}
        self.files: list[Path] = []
        self.seen: set[Path] = set()
        self.models: list[str | ModelProfile] = []
        self.settings: dict[str, _Setting] = {}
        self.top_index = -1
        self.builtin: set[str] = set()

    def finish(self) -> LoadedRules:
        if "defaults" in self.builtin:
            self.add_builtin("defaults")
        for i, rule in enumerate(self.rules):  # a trigger's content: what the rules after it would answer
            if isinstance(rule.generator, TriggerAnswer):
                rule.generator.content_rules = tuple(self.rules[i + 1 :])
        if self.errors:
            raise RuleFileError.collect(self.errors)
        names, profiles = as_profiles(self.models)
        seed = self.settings.get("seed")
        clock = self.settings.get("clock")
        return LoadedRules(
            ruleset=RuleSet(self.rules, models=self.models),
            seed=None if seed is None else int(seed.value),
            clock=None if clock is None else clock.value,
            models=names,
            profiles=profiles,
            files=tuple(self.files),
            origins=dict(self.origins),
            builtin=frozenset(self.builtin),
        )

    def include_builtin(self, name: str, smap: SourceMap, at: NodePath) -> None:
        part = name.partition(":")[2]
        if part and part not in BUILTIN_PARTS:
            hint = suggest(part, BUILTIN_PARTS)
            fix = f"did you mean `builtin:{hint}`?" if hint else "use `builtin`, `builtin:triggers` or " \
                                                                  "`builtin:defaults`"  # fmt: skip
            self.errors.append(smap.error(at, f"no built-in part {name!r}: {fix}"))
            return
        for each in (part,) if part else BUILTIN_PARTS:
            if each in self.builtin:
                continue  # included twice: once, where first included (as files are)
            self.builtin.add(each)
            if each == "triggers":
                self.add_builtin(each)
            # the defaults are the fallback: added in `finish`, after every rule of every file

    def add_builtin(self, part: str) -> None:
        for rule in builtin_rules(part):
            origin = self.origins.get(rule.name)
            if origin is not None:
                self.errors.append(RuleFileError(
                    origin.path, origin.line, origin.col,
                    f"rule name {rule.name!r} is taken by the built-in rules (`include: builtin:{part}`); "
                    "rename this rule",
                ))  # fmt: skip
            self.rules.append(rule)

    # -- files --
    def top_file(self, display: str) -> None:
        self.top_index += 1
        self.file(display, chain=(), included_at=None)

    def top_text(self, text: str, display: str, *, json_syntax: bool | None) -> None:
        self.top_index += 1
        self.text(text, display, Path(display).resolve(), chain=(), json_syntax=json_syntax)

    def file(
        self, display: str, chain: tuple[Path, ...], included_at: tuple[SourceMap, NodePath] | None
    ) -> None:
        path = Path(display)
        real = path.resolve()
        if real in chain:
            cycle = " -> ".join([*(p.name for p in chain[chain.index(real):]), real.name])
            assert included_at is not None
            smap, at = included_at
            self.errors.append(smap.error(at, f"include cycle: {cycle}"))
            return
        if real in self.seen:  # a diamond: the shared file's rules are loaded once, where first included
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            if included_at is None:
                self.errors.append(RuleFileError(display, 1, 1, f"cannot read the rule file: {reason}"))
            else:
                smap, at = included_at
                self.errors.append(smap.error(at, f"cannot read included file {display!r}: {reason}"))
            return
        self.files.append(path)
        self.text(text, display, real, chain=chain, json_syntax=None)

    def text(
        self, text: str, display: str, real: Path, *, chain: tuple[Path, ...], json_syntax: bool | None
    ) -> None:
        self.seen.add(real)
        try:
            data, smap = parse_source(text, display, json_syntax=json_syntax)
        except RuleFileError as exc:
            self.errors.append(exc)
            return
        if data is None:
            return
        if isinstance(data, list):  # a bare list of rules: its positions move under `rules`, where looked up
            data = {"rules": data}
            root = smap.values.get((), (1, 1))
            smap.values = {("rules", *k): v for k, v in smap.values.items()} | {(): root}
            smap.keys = {("rules", *k): v for k, v in smap.keys.items()}
        if not isinstance(data, dict):
            self.errors.append(smap.error((), "a rule file is a mapping with `rules:` (and `seed`, `clock`, "
                                                "`models`, `include`), or a list of rules"))
            return
        rules_raw = data.get("rules", [])
        # `$schema` points editors at the JSON Schema; `x-…` keys hold YAML anchors to reuse: both ignored
        ignored = ("rules", "$schema")
        settings = {k: v for k, v in data.items() if k not in ignored and not str(k).startswith("x-")}
        try:
            top = RuleFileSpec.model_validate(settings)
        except ValidationError as exc:
            self.errors.extend(validation_errors(exc, RuleFileSpec, smap, (), data))
            return
        try:
            self.settings_of(top, smap)
        except RuleFileError as exc:
            self.errors.append(exc)
        base = Path(display).parent
        for i, inc in enumerate(top.include):
            at: NodePath = ("include", i) if isinstance(data.get("include"), list) else ("include",)
            if inc == "builtin" or inc.startswith("builtin:"):
                self.include_builtin(inc, smap, at)
                continue
            self.file(str(base / inc), (*chain, real), (smap, at))
        if not isinstance(rules_raw, list):
            self.errors.append(smap.error(("rules",), "`rules` is a list of rules"))
            return
        for i, raw in enumerate(rules_raw):
            try:
                self.rule(raw, smap, ("rules", i))
            except RuleFileError as exc:
                self.errors.append(exc)

    def settings_of(self, top: RuleFileSpec, smap: SourceMap) -> None:
        for name, value in (("seed", top.seed), ("clock", top.clock)):
            if value is None:
                continue
            if name == "clock":
                value = _clock(value, smap)
            where = "{}:{}:{}".format(smap.path, *smap.pos((name,)))
            have = self.settings.get(name)
            if have is None:
                self.settings[name] = _Setting(value, where, self.top_index)
            elif have.top != self.top_index and repr(have.value) != repr(value):
                self.errors.append(smap.error((name,), f"`{name}` is set differently in {have.where}; "
                                                        "set it in one file only"))
            # else: the same command-line file, whose own value was read before its includes': it stays
        known = {m if isinstance(m, str) else m.name for m in self.models}
        for entry in top.models:  # the first file to name a model decides its profile
            if (entry if isinstance(entry, str) else entry.name) not in known:
                self.models.append(entry)
                known.add(entry if isinstance(entry, str) else entry.name)

    def builtin_names(self) -> set[str]:
        return {name for part in self.builtin for name in _builtin_names(part)}

    # -- rules --
    def rule(self, raw: Any, smap: SourceMap, at: NodePath) -> None:
        if not isinstance(raw, dict):
            raise smap.error(at, "a rule is a mapping with `name`, `match` and an answer")
        try:
            spec = RuleSpec.model_validate(raw)
        except ValidationError as exc:
            errs = validation_errors(exc, RuleSpec, smap, at, raw)
            self.errors.extend(errs[1:])
            raise errs[0] from None
        b = Builder(smap)
        matcher = b.matcher(raw["match"], (*at, "match"))
        answer_gen = self.answer(spec, raw, b, at, rule_name=spec.name, steps_allowed=True)
        b.check_templates()
        line, col = smap.pos(at)
        mline, mcol = smap.pos((*at, "match"))
        if spec.name in self.builtin_names():
            raise smap.error((*at, "name"), f"rule name {spec.name!r} is taken by the built-in rules "
                                            "(`include: builtin`); rename this rule")
        if spec.name in self.origins:
            first = self.origins[spec.name]
            raise smap.error((*at, "name"), f"two rules are named {spec.name!r} (the first at {first}); "
                                            "rule names must be unique")
        try:
            rule = Rule(
                spec.name, matcher, answer_gen, stream=spec.stream, error=spec.error, times=spec.times,
                reasoning=spec.reasoning, source=f"{smap.path}:{line}:{col}",
            )
        except Exception as exc:  # pragma: no cover - every argument was checked above
            raise smap.error(at, str(exc)) from None
        self.rules.append(rule)
        self.origins[spec.name] = RuleOrigin(smap.path, line, col, mline, mcol, spec.times)

    def answer(
        self, spec: RuleSpec | StepSpec, raw: dict[str, Any], b: Builder, at: NodePath, *, rule_name: str,
        steps_allowed: bool,
    ) -> Generator[Any] | None:
        given = [k for k in _ANSWER_KEYS if raw.get(k) is not None]
        what = "a rule" if steps_allowed else "a step"
        if len(given) > 1:
            raise b.fail((*at, given[1]), f"{what} has one answer: got both `{given[0]}` and `{given[1]}`",
                         key=True)
        if raw.get("overrides") is not None and raw.get("schema") is None:
            raise b.fail(
                (*at, "overrides"),
                "`overrides` goes with `schema`; for the request's own schema write "
                "`generate: {from_request_schema: {overrides: …}}`",
                key=True,
            )
        if not given:
            if spec.error is not None or (spec.stream is not None and spec.stream.deltas is not None):
                return None  # an error, or explicit deltas (they are the text), answer by themselves
            label = f"rule {rule_name!r}" if steps_allowed else what
            raise b.fail(at, f"{label} has no answer: give `output`, `generate`, `template`, `schema`"
                             + (", `script` or `sequence`" if steps_allowed else "") + ", or an `error`")
        kind = given[0]
        value: Generator[Any]
        if kind == "output":
            assert spec.output is not None
            value = _output(spec.output, b, (*at, "output"))
        elif kind == "generate":
            value = b.generator(raw["generate"], (*at, "generate"))
        elif kind == "template":
            value = b.named_generator("template", raw["template"], (*at, "template"), key=True)
        elif kind == "schema":
            raw_over = raw.get("overrides") or {}
            overrides = {k: b.value(v, (*at, "overrides", k)) for k, v in raw_over.items()}
            value = b.construct(
                "from_schema", REGISTRY["from_schema"], [raw["schema"]], {"overrides": overrides or None},
                (*at, "schema"), schema_at=(*at, "schema"),
            )
        else:
            assert isinstance(spec, RuleSpec)
            steps = spec.script if kind == "script" else spec.sequence
            assert steps is not None
            if not steps:
                raise b.fail((*at, kind), f"`{kind}` needs at least one step", key=True)
            built: list[Generator[Any]] = []
            for i, (step, step_raw) in enumerate(zip(steps, raw[kind], strict=True)):
                g = self.answer(step, step_raw, b, (*at, kind, i), rule_name=rule_name, steps_allowed=False)
                if step.stream is not None or step.error is not None:  # delivery details of this step only
                    g = answer(g, stream=step.stream, error=step.error)
                assert g is not None  # a step without an answer has an error (checked above)
                built.append(g)
            return Script(built, by="round" if kind == "script" else "call")
        return value


@functools.cache
def _builtin_names(part: str) -> tuple[str, ...]:
    return tuple(r.name for r in builtin_rules(part))


def _output(spec: OutputSpec, b: Builder, at: NodePath) -> Generator[Any]:
    calls: list[Any] = []
    for i, tc in enumerate(spec.tool_calls):
        if not isinstance(tc.arguments, dict | str):
            raise b.fail((*at, "tool_calls", i, "arguments"), "`arguments` is a JSON object or JSON text")
        call: dict[str, Any] = {"name": tc.name, "arguments": tc.arguments}
        if tc.id is not None:
            call["id"] = tc.id
        calls.append(call)
    if spec.embeddings is not None:  # recorded vectors (`synthgpt record`), as the embeddings generator draws
        vectors = EmbeddingVectors(tuple(tuple(v) for v in spec.embeddings))
        usage = None if spec.usage is None else spec.usage.model_dump(exclude_none=True)
        return Just(vectors) if usage is None else answer(vectors, usage=usage)
    reasoning: Any = spec.reasoning
    if reasoning is not None and spec.reasoning_signature is not None:
        reasoning = Just(ReasoningPart(text=reasoning, signature=spec.reasoning_signature))
    reply = Reply(
        text=spec.text,
        tool_calls=calls,
        reasoning=reasoning,
        finish_reason=spec.finish_reason,
    )
    if spec.usage is None:
        return reply
    usage = spec.usage.model_dump(exclude_none=True)
    return answer(reply, usage=usage)


def _clock(value: Any, smap: SourceMap) -> Clock:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return FixedClock(value)
        except RuleError as exc:  # YAML's `.inf` or `.nan`
            raise smap.error(("clock",), str(exc)) from None
    if isinstance(value, str):
        try:
            return parse_clock(value)
        except ValueError as exc:
            raise smap.error(("clock",), str(exc)) from None
    raise smap.error(("clock",), f"`clock` is a string like `fixed:1700000000` or a number, got {value!r}")
