"""Every example under examples/ runs and does what it says.

The examples are loaded and run in this process (their `main`) rather than as subprocesses: the SDKs
take seconds to import, and the point is the example's behaviour, which is the same either way. The
pytest example suite runs in an inner pytest session with its own `pytest.ini`, as in an app's repo.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from synthgpt import MockGPT
from synthgpt.cli import main as synthgpt_cli
from synthgpt.testing import LiveServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytest_plugins = ["pytester"]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_pytest_app_suite_passes(pytester: pytest.Pytester) -> None:
    for item in (EXAMPLES / "pytest_app").iterdir():
        if item.name != "__pycache__":
            (shutil.copytree if item.is_dir() else shutil.copy)(item, pytester.path / item.name)
    # synthgpt is already imported in this process, so the inner session cannot assert-rewrite it; its
    # `filterwarnings = error` would turn that notice into a failure that a real run never sees.
    quiet = "ignore::pytest.PytestAssertRewriteWarning"
    result = pytester.runpytest("-p", "no:hypothesispytest", "-W", quiet)
    result.assert_outcomes(passed=7)


def test_anthropic_stream_fixtures_are_reproducible_and_sdk_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = _load("anthropic_stream_fixtures")
    assert example.main([str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.splitlines()[3] == "overloaded   raised  overloaded_error"
    example.generate(tmp_path / "b")
    a = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    b = {p.name: p.read_bytes() for p in (tmp_path / "b").iterdir()}
    assert a == b
    index = json.loads(a["index.json"])
    outcome = {name: (e["sdk"], e.get("stop_reason") or e.get("error_type")) for name, e in index.items()}
    assert outcome == {
        "text": ("ok", "end_turn"),
        "thinking": ("ok", "end_turn"),
        "tool-use": ("ok", "tool_use"),
        "overloaded": ("raised", "overloaded_error"),
        "cut-short": ("ok", None),
    }
    assert index["thinking"]["blocks"] == ["thinking", "text"]
    assert b"event: message_stop" not in a["cut-short.sse"]


@pytest.mark.parametrize("stream", [False, True])
def test_agents_loop_in_process(stream: bool, capsys: pytest.CaptureFixture[str]) -> None:
    example = _load("agents_loop")
    assert example.main(["--stream"] if stream else []) == 0
    out = capsys.readouterr().out
    assert out.startswith("tool calls: 1\nfinal output: ")
    assert "get_weather returned: It is 21 degrees and sunny in" in out


@pytest.mark.slow
def test_agents_loop_against_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    example = _load("agents_loop")
    with LiveServer(MockGPT()) as server:
        assert example.main(["--base-url", server.url + "/v1"]) == 0
    out = capsys.readouterr().out
    assert "tool calls: 1" in out and "get_weather returned:" in out


def test_frontend_fixture_folder_is_up_to_date(tmp_path: Path) -> None:
    folder = EXAMPLES / "frontend_fixtures"
    for name in ("rules.yaml", "requests.jsonl"):
        shutil.copy(folder / name, tmp_path / name)
    args = ["render", str(tmp_path / "rules.yaml"), "--requests", str(tmp_path / "requests.jsonl"),
            "--api", "chat", "--out", str(tmp_path / "rendered")]  # fmt: skip
    assert synthgpt_cli(args) == 0
    fresh = {p.name: p.read_bytes() for p in sorted((tmp_path / "rendered").iterdir())}
    committed = {p.name: p.read_bytes() for p in sorted((folder / "rendered").iterdir())}
    assert sorted(fresh) == sorted(committed), "re-render examples/frontend_fixtures (see its README)"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"out of date: {stale}; re-render examples/frontend_fixtures (see its README)"
    manifest = json.loads(fresh["manifest.json"])
    assert [e["status"] for e in manifest["entries"]] == [200, 200, 200, 200, 200, 429, 200, 200]
    split = fresh[manifest["entries"][7]["file"]].decode()  # the rule's own deltas, id and created
    assert '"delta":{"content":"on\'s pull ["}' in split and '"id":"mock-1"' in split
    assert '"created":1700000000' in split
    kinds = [Path(e["file"]).suffix for e in manifest["entries"]]
    assert kinds == [".json", ".json", ".sse", ".json", ".sse", ".json", ".sse", ".sse"]
