"""examples/quickstart.py runs and prints exactly this, byte for byte, in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"

EXPECTED = """\
[weather] "What's the weather in town?"
    -> tool call get_weather({"city":"East Jack"}) id=call_gyZOsLzd5pqYqpTwnSZdBsEq
    finish=tool_calls usage=78+13 tokens
[greeting] 'Hi, my name is Ada.'
    -> 'Nice to meet you, Ada! Your lucky number is 78.'
    finish=stop usage=14+15 tokens
[profile] 'Create a user profile.'
    -> '{"id":"user_6Na5i7v8fdy54lHQoYtPt6pq","name":"Karen Duffy","age":21}'
    finish=stop usage=14+33 tokens
[default] 'Summarise this. It has three sentences. The last is dropped.'
    -> 'Summarise this. It has three sentences.'
    finish=stop usage=26+13 tokens
[default] 'Summarise this. It has three sentences. The last is dropped.'
    -> 'Summarise this'
    finish=length usage=26+4 tokens

journal:
  #0 rule=weather seed=367603807785513334 at=1700000000 captures={}
  #1 rule=greeting seed=11852700632197173383 at=1700000000 captures={'name': 'Ada'}
  #2 rule=profile seed=3357678202043604372 at=1700000000 captures={}
  #3 rule=default seed=257704104791427131 at=1700000000 captures={}
  #4 rule=default seed=3785548262726124398 at=1700000000 captures={}

same answer again: True
"""


@pytest.mark.slow
@pytest.mark.parametrize("hash_seed", ["0", "987"])
def test_quickstart_prints_the_same_bytes_every_time(hash_seed: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == EXPECTED
