"""One way from rule files to a MockGPT: `serve`, `render` and the pytest marker build the same engine."""

from __future__ import annotations

import json
from pathlib import Path

from synthgpt import MockGPT
from synthgpt.render import render_files
from synthgpt.rules.loader import mock_from_files
from synthgpt.server import ServeConfig, build_mock
from synthgpt.testing.assertions import SynthGPTFixture
from synthgpt.testing.plugin import build_mock as fixture_mock

RULES = """\
seed: 5
clock: fixed:1700000000
models: [gpt-4o*]
rules:
  - name: hello
    match: always
    output: {text: Hello.}
"""


def _engines(rules: Path) -> list[MockGPT]:
    return [
        mock_from_files([rules]),
        build_mock(ServeConfig(rule_files=(str(rules),))),
        fixture_mock({"rules_file": str(rules)}),
    ]


def test_serve_render_and_the_marker_build_the_same_engine(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    engines = _engines(rules)
    assert isinstance(engines[2], SynthGPTFixture)
    for mock in engines:
        assert (mock.seed, mock.clock.now(), mock.rules.models, [r.name for r in mock.rules]) == (
            5, 1_700_000_000, ("gpt-4o*",), ["hello"],
        )  # fmt: skip
    # render serves the files' models as the server does: another model is the server's 404
    requests = tmp_path / "r.jsonl"
    asks = [{"model": m, "messages": [{"role": "user", "content": "hi"}]} for m in ("gpt-4o", "o3")]
    requests.write_text("".join(json.dumps(a) + "\n" for a in asks))
    rendered = render_files([rules], requests, "chat", tmp_path / "out")
    assert [(r.status, r.rule) for r in rendered] == [(200, "hello"), (404, None)]


def test_flags_win_over_the_files_and_no_files_means_the_built_in_rules(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    assert mock_from_files([rules], seed=9).seed == 9
    assert build_mock(ServeConfig(rule_files=(str(rules),), seed=9, clock="fixed:1")).clock.now() == 1
    assert fixture_mock({"rules_file": str(rules), "seed": 9}).seed == 9
    built_in = mock_from_files([])
    assert built_in.seed == 0 and "triggers" in [r.name for r in built_in.rules]
    assert [r.name for r in build_mock(ServeConfig()).rules] == [r.name for r in built_in.rules]
