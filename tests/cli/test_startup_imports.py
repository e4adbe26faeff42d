"""What `synthgpt serve` imports before it answers: the recording proxy is not among it."""

from __future__ import annotations

import subprocess
import sys

# The record command's arguments are part of the command line every command builds; its proxy (httpx and
# the readers of every API, ~3 MB resident) must wait until `synthgpt record` runs.
_PROBE = """
import sys
from synthgpt.cli.parser import build_parser
import synthgpt.server.run
build_parser()
print(sorted(m for m in ("httpx", "synthgpt.record.proxy", "synthgpt.record.writer") if m in sys.modules))
"""


def test_the_command_line_and_the_server_do_not_import_the_recording_proxy() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_record_package_still_offers_its_names() -> None:
    from synthgpt.record import ProxyConfig, RecordingFile, create_proxy_app

    assert (ProxyConfig.__module__, RecordingFile.__module__, create_proxy_app.__module__) == (
        "synthgpt.record.proxy", "synthgpt.record.writer", "synthgpt.record.proxy",
    )  # fmt: skip
