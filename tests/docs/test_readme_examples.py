"""The README's Python examples run as written and print what they promise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TESTING_GUIDE = README.parent / "docs" / "testing.md"

pytest_plugins = ["pytester"]


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _block_containing(text: str) -> str:
    (block,) = [b for b in _python_blocks() if text in b]
    return block


def test_dsl_example_prints_the_profile_answer(tmp_path: Path) -> None:
    script = tmp_path / "dsl.py"
    script.write_text(_block_containing("mock = MockGPT("), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"id":"user_0lNi4cpKT3UhWAnSnZ0Q3VI3","age":53}\nprofile\n'


def test_plugin_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_readme_plugin=_block_containing("def test_refund"))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_testing_guide_plugin_example_passes(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"```python\n(.*?)```", TESTING_GUIDE.read_text(encoding="utf-8"), flags=re.S)
    (block,) = [b for b in blocks if "def test_refund" in b]
    pytester.makepyfile(test_guide_plugin=block)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
