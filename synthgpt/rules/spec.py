"""The rule-file format as pydantic models, and the JSON Schema editors autocomplete it from.

The models check the shape of a file (which keys exist, their types). The two open-ended trees, `match`
and `generate`, stay plain data here: synthgpt.rules.build turns them into the same matcher and
generator objects the Python DSL makes, so names are checked against the real tables.

Regenerate the shipped schema with `python -m synthgpt.rules.spec` (a test compares the two).
"""

from __future__ import annotations

import inspect
import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from ..errors import suggest
from ..model import ErrorSpec, FinishReason, StreamPlan
from ..profiles import ModelProfile
from .locations import NodePath, RuleFileError, SourceMap

__all__ = [
    "SCHEMA_PATH",
    "OutputSpec",
    "RuleFileSpec",
    "RuleSpec",
    "StepSpec",
    "ToolCallSpec",
    "UsageSpec",
    "json_schema",
    "validation_errors",
]

SCHEMA_PATH = Path(__file__).with_name("rulefile.schema.json")

# The two open trees get their schemas from the matcher and generator tables (see json_schema); pydantic
# would try to resolve a `$ref` it did not make, so they carry a marker that json_schema replaces.
_TREE = "x-synthgpt-tree"
MatchTree = Annotated[Any, WithJsonSchema({_TREE: "Matcher"})]
GeneratorTree = Annotated[Any, WithJsonSchema({_TREE: "Generator"})]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ToolCallSpec(_Spec):
    """One tool call of a fixed answer."""

    name: str = Field(min_length=1)
    arguments: Annotated[
        Any, WithJsonSchema({"anyOf": [{"type": "object"}, {"type": "string"}], "default": {}})
    ] = Field(default_factory=dict, description="A JSON object, or the JSON text itself.")
    id: str | None = Field(default=None, description="Default: a seeded `call_…` id.")


class UsageSpec(_Spec):
    """Token counts to report instead of the counted ones (only the fields given are replaced)."""

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    reasoning_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)


class OutputSpec(_Spec):
    """A fixed answer: text, tool calls, reasoning, finish reason, usage."""

    text: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    reasoning: str | None = Field(default=None, description="Reasoning/thinking text emitted first.")
    reasoning_signature: str | None = Field(
        default=None, description="The reasoning's signature, verbatim (default: a seeded one)."
    )
    finish_reason: FinishReason | None = Field(
        default=None, description="Default: `tool_calls` when there are tool calls, else `stop`."
    )
    usage: UsageSpec | None = None
    embeddings: list[list[float]] | None = Field(
        default=None, description="An embeddings answer: these vectors, one per input, verbatim."
    )


class _Answer(_Spec):
    output: OutputSpec | None = Field(default=None, description="A fixed answer.")
    generate: GeneratorTree | None = Field(
        default=None, description="A generator: `{name: arguments}`, e.g. `{integer: [1, 6]}`; nested freely."
    )
    template: str | None = Field(
        default=None, description="Jinja2 text; `request`, `last_user`, `captures`, `fake(...)`, … in scope."
    )
    schema_: dict[str, Any] | None = Field(
        default=None, alias="schema", description="Answer with a JSON document valid against this schema."
    )
    overrides: dict[str, GeneratorTree] | None = Field(
        default=None, description='With `schema`: dotted fields\' values, e.g. `{"user.name": {fake: name}}`.'
    )
    stream: StreamPlan | None = Field(default=None, description="Pacing and faults of the stream.")
    error: ErrorSpec | None = Field(default=None, description="Answer with an HTTP error instead.")


class StepSpec(_Answer):
    """One step of a `script` or `sequence`: an answer, with its own stream plan or error if wanted."""


class RuleSpec(_Answer):
    """One rule: when `match` matches, the rule answers."""

    name: str = Field(min_length=1, description="Unique; answers are seeded from it.")
    description: str | None = None
    match: MatchTree = Field(description="A matcher: `always`, `{last_user: {contains: hi}}`, `{any: […]}`")
    script: list[StepSpec] | None = Field(
        default=None,
        description="Steps by tool round of the current turn: step 1 before any tool call, step 2 after the "
        "first round of tool results, …; the last step repeats.",
    )
    sequence: list[StepSpec] | None = Field(
        default=None, description="Steps by call count of this rule (call order!); the last step repeats."
    )
    times: int | None = Field(default=None, ge=1, description="Answer this many calls, then stop matching.")
    reasoning: Literal["auto", True, False] = Field(
        default="auto",
        description="`auto`: add reasoning when the request asks for it; `true`: always; `false`: never.",
    )


def _model_entry_kind(value: Any) -> str:
    return "a model profile" if isinstance(value, dict | ModelProfile) else "a model name"


# A name or a profile, told apart by shape, so a wrong profile is reported as such (not also as "not a
# string"); the tags are not identifiers, so error locations skip them as they skip other union members.
_ModelEntry = Annotated[
    Annotated[str, Tag("a model name")] | Annotated[ModelProfile, Tag("a model profile")],
    Discriminator(_model_entry_kind),
]


class RuleFileSpec(_Spec):
    """A synthgpt rule file."""

    seed: int | None = Field(default=None, description="The engine seed (default 0).")
    clock: Annotated[
        Any,
        WithJsonSchema(
            {"anyOf": [{"type": "string", "pattern": r"^(fixed(:.+)?|step:.*|system)$"}, {"type": "number"}]}
        ),
    ] = Field(default=None, description="`fixed`, `fixed:<unix-seconds>`, `step:<start>[:<step>]`, `system`.")
    models: list[_ModelEntry] = Field(
        default_factory=list,
        description="Model names (or globs) served, each a name or a profile: {name, context_window, "
        "max_output_tokens, reasoning, overflow: refuse|clamp}; empty: any model.",
    )
    include: list[str] = Field(
        default_factory=list,
        description="Other rule files (relative to this one), whose rules come first; `builtin` for the "
        "built-in rules (`builtin:triggers` first, `builtin:defaults` after every rule), or one part.",
    )
    rules: list[RuleSpec] = Field(default_factory=list)

    @field_validator("include", mode="before")
    @classmethod
    def _one_include(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


# ------------------------------------------------------------------------------------ pydantic errors


def validation_errors(
    exc: ValidationError, model: type[BaseModel], smap: SourceMap, base: NodePath, data: Any
) -> list[RuleFileError]:
    """One RuleFileError per distinct offending node, worded for a person editing the file."""
    out: list[RuleFileError] = []
    seen: set[NodePath] = set()
    for err in exc.errors():
        loc = _real_loc(err["loc"], data)
        if loc in seen:
            continue
        seen.add(loc)
        where = (*base, *loc)
        field = _dotted(loc) or "value"
        kind = err["type"]
        if kind == "extra_forbidden":
            name = str(loc[-1])
            hint = suggest(name, _known_keys(model, loc[:-1]))
            tail = f" — did you mean {hint!r}?" if hint else ""
            out.append(smap.error(where, f"unknown key {name!r}{tail}", key=True))
        elif kind == "missing":
            parent = _dotted(loc[:-1])
            owner = f"`{parent}`" if parent else ("a rule" if model is RuleSpec else "this")
            out.append(smap.error(where[:-1], f"{owner} needs `{loc[-1]}`"))
        else:
            msg = err["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, ") :]
            msg = msg.replace("a valid tuple", "a list")  # what the file writes; tuples are the model's
            got = repr(err.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            out.append(smap.error(where, f"`{field}`: {msg[:1].lower()}{msg[1:]}, got {got}"))
    return out


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _real_loc(loc: tuple[int | str, ...], data: Any) -> NodePath:
    """The part of a pydantic `loc` that names nodes of the data (union member tags dropped)."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:  # noqa: SIM114 - two branches so mypy narrows `part`
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part.isidentifier():
            out.append(part)  # a missing key
            break
        else:
            continue
        out.append(part)
    return tuple(out)


def _known_keys(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """Field names (aliases) of the model found by following `loc` from `model`."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = current.model_fields if inspect.isclass(current) and issubclass(current, BaseModel) else {}
        info = fields.get(part) or next((f for f in fields.values() if f.alias == part), None)
        if info is None:
            return []
        current = _model_in(info.annotation)
    if not (inspect.isclass(current) and issubclass(current, BaseModel)):
        return []
    return [f.alias or n for n, f in current.model_fields.items()]


def _model_in(annotation: Any) -> Any:
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------------------- JSON Schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a rule file, matcher and generator names included."""
    from .build import MATCHERS, describe, generator_names

    schema: dict[str, Any] = _resolve_trees(RuleFileSpec.model_json_schema(by_alias=True))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://synthgpt.dev/rulefile.schema.json"
    schema["properties"]["$schema"] = {"type": "string", "description": "The JSON Schema, for editors."}
    schema["patternProperties"] = {"^x-": {"description": "Ignored: a place for YAML anchors to reuse."}}
    defs = schema.setdefault("$defs", {})
    matcher_props: dict[str, Any] = {
        name: {"description": describe(name, fn)} for name, fn in sorted(MATCHERS.items())
    }
    many = {"type": "array", "items": {"$ref": "#/$defs/Matcher"}}
    matcher_props["all"] = {**many, "description": "Every matcher of the list."}
    matcher_props["any"] = {**many, "description": "Any matcher of the list (the first supplies captures)."}
    matcher_props["not"] = {"$ref": "#/$defs/Matcher", "description": "Anything the matcher does not match."}
    defs["Matcher"] = {
        "description": "A matcher name, `{name: arguments}` (several keys: all of them), or a list (all).",
        "anyOf": [
            {"enum": sorted([*MATCHERS, "all", "any", "not"])},
            {"type": "object", "properties": matcher_props, "additionalProperties": False,
             "minProperties": 1},
            {"type": "array", "items": {"$ref": "#/$defs/Matcher"}},
        ],
    }
    gens = generator_names()
    defs["Generator"] = {
        "description": "A generator name, or `{name: arguments}`: a list (positional), a mapping (keywords) "
        "or one value; generators nest inside arguments.",
        "anyOf": [
            {"enum": sorted(gens)},
            {
                "type": "object",
                "properties": {name: {"description": doc} for name, doc in sorted(gens.items())},
                "additionalProperties": False,
                "minProperties": 1,
                "maxProperties": 1,
            },
        ],
    }
    return schema


def _resolve_trees(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _resolve_trees(v) for k, v in node.items() if k != _TREE}
        if _TREE in node:
            out["$ref"] = f"#/$defs/{node[_TREE]}"
        return out
    if isinstance(node, list):
        return [_resolve_trees(v) for v in node]
    return node


def render_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m synthgpt.rules.spec [--check]`: write the shipped JSON Schema, or check it is current."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m synthgpt.rules.spec",
        description=f"Write the JSON Schema of rule files to {SCHEMA_PATH.name}, generated from the code.",
    )
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the shipped file differs from what would be written")
    args = parser.parse_args(argv)
    text = render_schema()
    current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else None
    if args.check:
        if current == text:
            print(f"{SCHEMA_PATH} is up to date")
            return 0
        print(f"{SCHEMA_PATH} is stale: run `python -m synthgpt.rules.spec` to write it", file=sys.stderr)
        return 1
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a module in the tests
    raise SystemExit(main())
