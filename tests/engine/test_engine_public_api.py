"""The public API is what `__all__` lists: sorted, importable, and exactly what `import *` gives."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import synthgpt
import synthgpt.codec

# What users reach for; dropping any of these from the top level breaks their imports.
EXPECTED_TOP_LEVEL = {
    "Embeddings", "Limits", "LoadedRules", "MockGPT", "Rule", "RuleFileError", "RuleSet", "SQLiteJournal",
    "FixedClock", "StepClock", "SystemClock", "embed_text", "generators", "load_files", "load_text",
    "matchers", "parse_clock",
}  # fmt: skip
EXPECTED_CODECS = {"ChatCodec", "EmbeddingsCodec", "MessagesCodec", "ResponseStore", "ResponsesCodec"}


def _isort_key(name: str) -> tuple[bool, str]:
    # ruff's RUF022 order: SCREAMING_CASE constants first, then everything else by code point
    return (not name.isupper(), name)


def test_top_level_all_is_sorted_unique_and_complete() -> None:
    names = synthgpt.__all__
    assert names == sorted(names) == sorted(set(names), key=_isort_key)
    assert EXPECTED_TOP_LEVEL - set(names) == set()


def test_codec_all_is_sorted_unique_and_complete() -> None:
    names = synthgpt.codec.__all__
    assert names == sorted(set(names), key=_isort_key)
    assert EXPECTED_CODECS - set(names) == set()


@pytest.mark.parametrize("module", ["synthgpt", "synthgpt.codec"])
def test_every_exported_name_imports(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert missing == []


@pytest.mark.parametrize("module", ["synthgpt", "synthgpt.codec"])
def test_star_import_gives_exactly_all(module: str) -> None:
    # in a fresh interpreter: nothing imported by other tests can leak into the namespace
    code = (
        f"import {module} as mod\n"
        "ns = {}\n"
        f"exec('from {module} import *', ns)\n"
        "ns.pop('__builtins__')\n"
        "print(sorted(ns) == sorted(mod.__all__), sorted(set(ns) ^ set(mod.__all__)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True []"


def test_exports_are_the_real_objects() -> None:
    from synthgpt.clock import parse_clock
    from synthgpt.generators.embedding import Embeddings, embed_text
    from synthgpt.journal.sqlite import SQLiteJournal
    from synthgpt.rules.loader import LoadedRules, RuleFileError, load_files, load_text

    assert synthgpt.parse_clock is parse_clock and synthgpt.SQLiteJournal is SQLiteJournal
    assert synthgpt.Embeddings is Embeddings and synthgpt.embed_text is embed_text
    assert synthgpt.LoadedRules is LoadedRules and synthgpt.RuleFileError is RuleFileError
    assert synthgpt.load_files is load_files and synthgpt.load_text is load_text
    loaded = synthgpt.load_text("rules:\n  - name: hi\n    match: always\n    output: {text: hello}\n")
    out = synthgpt.MockGPT(loaded.ruleset).generate(
        {"model": "synth-1", "messages": [{"role": "user", "content": "x"}]}
    )
    assert out.text == "hello"
