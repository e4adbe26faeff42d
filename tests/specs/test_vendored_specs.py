"""The vendored spec subsets are what `regenerate.py` makes from the full public specs (when present)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("regenerate", HERE / "regenerate.py")
assert _spec is not None and _spec.loader is not None
regenerate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regenerate)


def test_the_vendored_files_hold_what_the_tests_ask_for() -> None:
    openai = json.loads(regenerate.OPENAI_OUT.read_text(encoding="utf-8"))
    anthropic = json.loads(regenerate.ANTHROPIC_OUT.read_text(encoding="utf-8"))
    assert set(regenerate.OPENAI_NAMES) <= set(openai["schemas"])
    assert set(anthropic["schemas"]) == set(regenerate.ANTHROPIC_NAMES)
    # every reference resolves inside the subset
    for name, schema in openai["schemas"].items():
        assert regenerate._refs(schema) <= set(openai["schemas"]), name
    assert "MIT" in openai["source"] and "MIT" in anthropic["source"]


@pytest.mark.skipif(
    not (regenerate.DEFAULT_SPECS / regenerate.OPENAI_FILE).exists(),
    reason="the full specs (../shared/specs) are not beside this clone: nothing to compare the subsets with",
)
def test_the_vendored_files_are_regenerated_from_the_full_specs() -> None:
    for path, text in regenerate.build(regenerate.DEFAULT_SPECS).items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run regenerate.py"
