"""`anthropic_spec`: validation against the JSON Schemas of the anthropic 2.16 SDK's types.

(`openai_spec` comes from tests/conftest.py.) The schemas are vendored in `tests/specs/` (see its
README.md for their source and licence), so a fresh clone runs these tests too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

ANTHROPIC_SCHEMAS = Path(__file__).resolve().parents[1] / "specs" / "anthropic-schemas.json"


@pytest.fixture(scope="session")
def anthropic_spec() -> Callable[[str, Any], None]:
    """`validate(type_name, value)`: Message, RawMessageStreamEvent, ErrorResponse or ModelInfo."""
    schemas = json.loads(ANTHROPIC_SCHEMAS.read_text())["schemas"]
    validators = {name: Draft202012Validator(schema) for name, schema in schemas.items()}

    def validate(name: str, value: Any) -> None:
        errors = sorted(validators[name].iter_errors(value), key=lambda e: len(list(e.absolute_path)))
        problems = "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])
        assert not problems, f"not a valid {name}:\n{problems}"

    return validate
