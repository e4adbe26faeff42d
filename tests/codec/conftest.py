"""Spec validators for the wire-format tests: OpenAI's OpenAPI document and the Anthropic SDK's schemas.

Both live in `<repo>/../shared/specs`; a fresh clone has no such directory, so the fixtures skip there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPECS = Path(__file__).resolve().parents[2] / ".." / "shared" / "specs"
OPENAI_SPEC = SPECS / "openai-openapi.yaml"
ANTHROPIC_SCHEMAS = SPECS / "anthropic-sdk-python-2.16.0-schemas.json"

Validate = Callable[[str, Any], None]


def _nullable_to_type(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` as JSON Schema (WIRE.md §8): the spec still uses it in places."""
    if isinstance(node, dict):
        out = {k: _nullable_to_type(v) for k, v in node.items() if k != "nullable"}
        if node.get("nullable") is True:
            if isinstance(out.get("type"), str):
                out["type"] = [out["type"], "null"]
            elif "type" not in out:
                out = {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(node, list):
        return [_nullable_to_type(v) for v in node]
    return node


@cache
def _openai_registry() -> Registry[Any]:
    spec = yaml.load(OPENAI_SPEC.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    doc = {"components": {"schemas": _nullable_to_type(spec["components"]["schemas"])}}
    return Registry().with_resource("openai", Resource.from_contents(doc, default_specification=DRAFT202012))


def _errors(validator: Draft202012Validator, value: Any) -> str:
    errors = sorted(validator.iter_errors(value), key=lambda e: len(list(e.absolute_path)))
    return "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])


@pytest.fixture(scope="session")
def openai_spec() -> Validate:
    """`validate(schema_name, value)` against `#/components/schemas/<schema_name>` of the OpenAI spec."""
    if not OPENAI_SPEC.exists():
        pytest.skip("../shared/specs not present (fresh clone): spec validation skipped")
    registry = _openai_registry()

    def validate(name: str, value: Any) -> None:
        validator = Draft202012Validator({"$ref": f"openai#/components/schemas/{name}"}, registry=registry)
        problems = _errors(validator, value)
        assert not problems, f"not a valid {name}:\n{problems}"

    return validate


@pytest.fixture(scope="session")
def anthropic_spec() -> Validate:
    """`validate(type_name, value)` against a type of the anthropic 2.16 SDK (Message, RawMessageStreamEvent,
    ErrorResponse, ModelInfo)."""
    if not ANTHROPIC_SCHEMAS.exists():
        pytest.skip("../shared/specs not present (fresh clone): spec validation skipped")
    schemas = json.loads(ANTHROPIC_SCHEMAS.read_text())["schemas"]

    def validate(name: str, value: Any) -> None:
        problems = _errors(Draft202012Validator(schemas[name]), value)
        assert not problems, f"not a valid {name}:\n{problems}"

    return validate
