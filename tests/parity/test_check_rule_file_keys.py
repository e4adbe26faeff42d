"""The rule-file keys for model profiles (`models:`) and stream plans (`deltas`, a pinned `id` and
`created`) under `synthgpt check`: every mistake reported at its place, and the editor schema knows them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from synthgpt.rules.check import main
from synthgpt.rules.spec import SCHEMA_PATH


def test_check_reports_every_mistake_in_profile_and_stream_keys_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("models.yaml").write_text(
        "models:\n  - {name: small, context_window: 0}\n  - {name: big, overflow: cut}\n", encoding="utf-8"
    )
    Path("rules.yaml").write_text(
        textwrap.dedent(
            """
            rules:
              - name: a
                match: always
                stream: {deltas: "not a list", created: -5}
            """
        ).lstrip("\n"),
        encoding="utf-8",
    )
    code = main(["--separately", "models.yaml", "rules.yaml"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out == [
        "models.yaml:2:35: `models[0].context_window`: input should be greater than or equal to 1, got 0",
        "models.yaml:3:27: `models[1].overflow`: input should be 'refuse' or 'clamp', got 'cut'",
        "rules.yaml:4:22: `stream.deltas`: input should be a list, got 'not a list'",
        "rules.yaml:4:45: `stream.created`: input should be greater than or equal to 0, got -5",
    ]


def test_a_clean_file_with_profile_and_stream_keys_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("rules.yaml").write_text(
        "models: [gpt-4o, {name: small, context_window: 4096, max_output_tokens: 512, reasoning: true, "
        "overflow: clamp}]\nrules:\n  - name: a\n    match: always\n    stream: {deltas: [a, b], id: mock-1, "
        "created: 1700000000}\n",
        encoding="utf-8",
    )
    assert main(["rules.yaml"]) == 0


def test_the_editor_schema_documents_profile_and_stream_keys() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    assert {"deltas", "id", "created"} <= defs["StreamPlan"]["properties"].keys()
    profile = defs["ModelProfile"]["properties"]
    assert set(profile) == {"name", "context_window", "max_output_tokens", "reasoning", "overflow"}
    assert profile["overflow"]["enum"] == ["refuse", "clamp"]
