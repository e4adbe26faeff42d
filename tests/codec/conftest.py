"""`anthropic_spec`: validation against the JSON Schemas of the anthropic 2.16 SDK's types.

(`openai_spec` comes from tests/conftest.py.) The schemas live in `<repo>/../shared/specs`; a fresh clone
has no such directory, so the fixture skips there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

SPECS = Path(__file__).resolve().parents[2] / ".." / "shared" / "specs"
ANTHROPIC_SCHEMAS = SPECS / "anthropic-sdk-python-2.16.0-schemas.json"


@pytest.fixture(scope="session")
def anthropic_spec() -> Callable[[str, Any], None]:
    """`validate(type_name, value)`: Message, RawMessageStreamEvent, ErrorResponse or ModelInfo."""
    if not ANTHROPIC_SCHEMAS.exists():
        pytest.skip("../shared/specs not present (fresh clone): spec validation skipped")
    schemas = json.loads(ANTHROPIC_SCHEMAS.read_text())["schemas"]
    validators = {name: Draft202012Validator(schema) for name, schema in schemas.items()}

    def validate(name: str, value: Any) -> None:
        errors = sorted(validators[name].iter_errors(value), key=lambda e: len(list(e.absolute_path)))
        problems = "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])
        assert not problems, f"not a valid {name}:\n{problems}"

    return validate
