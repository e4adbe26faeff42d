"""The Vercel AI SDK (npm `ai` 6 with `@ai-sdk/openai` and `@ai-sdk/azure`) against a LiveServer:
`generateText` with a tool, `Output.object` and `stopWhen` calls the tool, then writes the object from its
result, on Chat, Responses and Azure's v1 Chat (`azure.chat()`).

The packages are installed with npm into `tests/frameworks/node/node_modules` (git-ignored, kept between
runs). Skips only where node or npm is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import LiveServer

HERE = Path(__file__).parent / "node"
NODE, NPM = shutil.which("node"), shutil.which("npm")
pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None, reason="node and npm are needed (apt: nodejs npm)"
)


def _installed() -> bool:
    wanted = json.loads((HERE / "package.json").read_text())["dependencies"]
    for name, version in wanted.items():
        found = HERE / "node_modules" / name / "package.json"
        if not found.exists() or json.loads(found.read_text())["version"] != version:
            return False
    return True


def _install() -> None:
    if not _installed():
        subprocess.run(
            [str(NPM), "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"],
            cwd=HERE,
            check=True,
            timeout=300,
            capture_output=True,
        )


@pytest.mark.slow
def test_tools_then_output_object_on_every_openai_surface() -> None:
    _install()
    mock = MockGPT(seed=1, clock=fixed_clock(1_700_000_000))
    with LiveServer(mock) as server:
        run = subprocess.run(
            [str(NODE), "ai_sdk_loop.mjs", server.url],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr[-2000:]
    results = {r["name"]: r for r in map(json.loads, run.stdout.splitlines())}
    assert sorted(results) == ["azure.chat", "openai.chat", "openai.responses"]
    for r in results.values():
        assert (r["steps"], r["calls"]) == (2, ["Lisbon"])
        output = r["output"]
        assert (output["city"], output["temperature_c"]) == ("Lisbon", 21.5)
        # zod 4's `.int()` declares ±2^53 bounds: the count stays a plausible one
        assert 0 <= output["visitors"] <= 1000
    paths = [r.request.api for r in mock.records]
    assert paths == ["chat", "chat", "responses", "responses", "chat", "chat"]
