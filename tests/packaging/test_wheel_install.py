"""The wheel, installed into a fresh virtual environment without the dev extra, serves a request.

What a user does in their own project (`pip install synthgpt`): build the wheel (`python -m build`), install
it alone (pip fetches the runtime dependencies, nothing from the dev extra), run `synthgpt serve`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def run(*cmd: str | Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, cwd=REPO)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_wheel_serves_from_a_fresh_venv_without_the_dev_extra(tmp_path: Path) -> None:
    src, dist = tmp_path / "src", tmp_path / "dist"  # built from a copy: setuptools writes build/ beside it
    shutil.copytree(REPO / "synthgpt", src / "synthgpt", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, src)  # setuptools: dev
    [wheel] = dist.glob("synthgpt-*.whl")
    files = zipfile.ZipFile(wheel).namelist()
    for data in ("generators/faker_tables/FAKER_VERSION", "generators/faker_tables/en_US/name.json",
                 "server/static/playground.js", "rules/rulefile.schema.json"):  # fmt: skip
        assert f"synthgpt/{data}" in files
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    bin_ = venv / "bin"
    pip = (bin_ / "python", "-m", "pip", "--disable-pip-version-check")
    run(*pip, "install", "--quiet", "--no-compile", wheel)
    packages = run(*pip, "list", "--format=freeze").stdout.lower()
    for dev_only in ("openai==", "anthropic==", "pytest==", "syrupy==", "mypy==", "ruff=="):
        assert dev_only not in packages  # only what serving needs
    assert "prometheus-client==" in packages or "prometheus_client==" in packages
    version = run(bin_ / "synthgpt", "--version").stdout.strip()
    assert version.startswith("synthgpt ") and "unknown" not in version

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNTHGPT_", "PYTHONPATH"))}
    proc = subprocess.Popen(
        [bin_ / "synthgpt", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("synthgpt listening on http://127.0.0.1:"), line
        url = line.rsplit(" ", 1)[1].strip()
        deadline = time.monotonic() + 30
        while True:
            try:
                reply = httpx.post(url + "/v1/chat/completions", json={
                    "model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.05)
        assert reply.status_code == 200
        body = reply.json()
        assert body["object"] == "chat.completion" and body["choices"][0]["message"]["content"]
        assert "synthgpt_requests_total" in httpx.get(url + "/metrics").text
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert "synthgpt: POST /v1/chat/completions 200 api=chat model=gpt-4o rule=default" in err
