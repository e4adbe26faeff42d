"""instructor itself against a LiveServer, in its own virtualenv: instructor 1.17 pins `jiter<0.15`, which
the openai SDK of the dev extra (3.60, `jiter>=0.16`) cannot share, so `instructor_env/.venv` (git-ignored,
kept between runs) holds instructor with the openai it resolves to. Each mode extracts a Person."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import LiveServer

HERE = Path(__file__).parent / "instructor_env"
VENV = HERE / ".venv"
PYTHON = VENV / "bin" / "python"


def _venv() -> Path:
    wanted = (HERE / "requirements.txt").read_text().strip()
    stamp = VENV / ".installed"
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, timeout=120)
        pip = [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        wants = ["-r", str(HERE / "requirements.txt")]
        subprocess.run([*pip, *wants], check=True, timeout=600, capture_output=True)
        stamp.write_text(wanted)
    return PYTHON


@pytest.mark.slow
def test_every_mode_extracts_what_the_text_says() -> None:
    python = _venv()
    mock = MockGPT(seed=1, clock=fixed_clock(1_700_000_000))
    with LiveServer(mock) as server:
        run = subprocess.run(
            [str(python), str(HERE / "modes.py"), server.url], capture_output=True, text=True, timeout=180
        )
    assert run.returncode == 0, run.stderr[-2000:]
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert results == [
        {"mode": mode, "person": {"name": "Jason", "age": 25}}
        for mode in ("TOOLS", "JSON", "MD_JSON", "JSON_SCHEMA", "RESPONSES_TOOLS")
    ]
    # one request per mode: nothing had to be retried
    assert len(mock.records) == 5
