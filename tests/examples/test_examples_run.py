"""Every example under examples/ runs, as a user would run it, and does what it says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.testing import LiveServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path = EXAMPLES, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_AGENTS_DISABLE_TRACING": "1", "OPENAI_API_KEY": "sk-not-used"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip


def test_pytest_app_suite_passes() -> None:
    result = _run(["-m", "pytest", "-q", "-p", "no:randomly"], cwd=EXAMPLES / "pytest_app")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 passed" in result.stdout


def test_anthropic_stream_fixtures_are_reproducible_and_sdk_readable(tmp_path: Path) -> None:
    for out in ("a", "b"):
        result = _run(["anthropic_stream_fixtures.py", str(tmp_path / out)])
        assert result.returncode == 0, result.stderr
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
def test_agents_loop_in_process(stream: bool) -> None:
    result = _run(["agents_loop.py", *(["--stream"] if stream else [])])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tool calls: 1\nfinal output: ")
    assert "get_weather returned: It is 21 degrees and sunny in" in result.stdout


def test_agents_loop_against_a_server() -> None:
    with LiveServer(MockGPT()) as server:
        result = _run(["agents_loop.py", "--base-url", server.url + "/v1"])
    assert result.returncode == 0, result.stderr
    assert "tool calls: 1" in result.stdout and "get_weather returned:" in result.stdout


def test_frontend_fixture_folder_is_up_to_date(tmp_path: Path) -> None:
    folder = EXAMPLES / "frontend_fixtures"
    for name in ("rules.yaml", "requests.jsonl"):
        shutil.copy(folder / name, tmp_path / name)
    args = ["-m", "synthgpt", "render", "rules.yaml", "--requests", "requests.jsonl", "--api", "chat",
            "--out", "rendered"]  # fmt: skip
    result = _run(args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    fresh = {p.name: p.read_bytes() for p in sorted((tmp_path / "rendered").iterdir())}
    committed = {p.name: p.read_bytes() for p in sorted((folder / "rendered").iterdir())}
    assert sorted(fresh) == sorted(committed), "re-render examples/frontend_fixtures (see its README)"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"out of date: {stale}; re-render examples/frontend_fixtures (see its README)"
    manifest = json.loads(fresh["manifest.json"])
    assert [e["status"] for e in manifest["entries"]] == [200, 200, 200, 200, 200, 429, 200]
    kinds = [Path(e["file"]).suffix for e in manifest["entries"]]
    assert kinds == [".json", ".json", ".sse", ".json", ".sse", ".json", ".sse"]
