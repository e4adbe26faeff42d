"""Regenerate the spec subsets vendored here from the full public specs, when those are at hand.

    python tests/specs/regenerate.py [SPECS_DIR]     (default: ../shared/specs beside the repository)

Writes `openai-schemas.json` (the OpenAI OpenAPI schemas the tests validate against, with every schema
they reference, unchanged) and `anthropic-schemas.json` (the anthropic SDK's generated JSON Schemas the
tests use). `tests/specs/README.md` names the sources and their licences; `test_vendored_specs.py` checks
the files are what this script makes from the full specs whenever those are present.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SPECS = HERE.parents[1] / ".." / "shared" / "specs"
OPENAI_FILE = "openai-openapi.yaml"
ANTHROPIC_FILE = "anthropic-sdk-python-2.16.0-schemas.json"
OPENAI_OUT = HERE / "openai-schemas.json"
ANTHROPIC_OUT = HERE / "anthropic-schemas.json"



OPENAI_NAMES = (
    "CreateChatCompletionResponse",
    "CreateChatCompletionStreamResponse",
    "CreateEmbeddingResponse",
    "ErrorResponse",
    "ListModelsResponse",
    "Model",
    "Response",
)
EVENTS = re.compile(r"Response\w+Event")
"""Every Responses stream event schema too: the codec tests validate each event they send."""
ANTHROPIC_NAMES = ("ErrorResponse", "Message", "ModelInfo", "RawMessageStreamEvent")
_PREFIX = "#/components/schemas/"


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            found.add(ref[len(_PREFIX) :])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def openai_subset(spec: dict[str, Any]) -> dict[str, Any]:
    """The named schemas and everything they reference, transitively."""
    schemas = spec["components"]["schemas"]
    keep: dict[str, Any] = {}
    todo = [*OPENAI_NAMES, *(name for name in schemas if EVENTS.fullmatch(name))]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = schemas[name]
        todo.extend(sorted(_refs(schemas[name]) - keep.keys()))
    return {
        "source": "openai/openai-openapi @ f85dbe223d40e1a31cba812ab2d755c7e98a92a3, openapi.yaml "
        f"(info.version {spec['info']['version']}), components.schemas subset; MIT licence",
        "schemas": dict(sorted(keep.items())),
    }


def anthropic_subset(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "source": "JSON Schemas generated with pydantic TypeAdapter(...).json_schema() from the types of the "
        "anthropic 2.16.0 Python SDK (PyPI wheel); MIT licence",
        "schemas": {name: data["schemas"][name] for name in ANTHROPIC_NAMES},
    }


def dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def build(specs: Path) -> dict[Path, str]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    spec = yaml.load((specs / OPENAI_FILE).read_text(encoding="utf-8"), Loader=loader)
    anthropic = json.loads((specs / ANTHROPIC_FILE).read_text(encoding="utf-8"))
    return {OPENAI_OUT: dump(openai_subset(spec)), ANTHROPIC_OUT: dump(anthropic_subset(anthropic))}


def main(argv: list[str]) -> int:
    specs = Path(argv[0]) if argv else DEFAULT_SPECS
    if not (specs / OPENAI_FILE).exists():
        print(f"no {OPENAI_FILE} in {specs}", file=sys.stderr)
        return 1
    for path, text in build(specs).items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(HERE.parents[1])} ({len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
