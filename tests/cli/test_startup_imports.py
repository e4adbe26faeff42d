"""What `synthgpt serve` imports before it answers: the recording proxy is not among it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


# A server of the built-in rules reads no YAML, keeps no SQLite journal and, until /metrics is scraped,
# exports no metrics. Nor does it load ctypes (workers' parent watch, ~0.4 MB) or difflib (a misspelt
# name's suggestion, ~0.2 MB): the memory case of `make bench` has no margin for them.
_SERVER_PROBE = """
import sys
from synthgpt.server.app import create_app
from synthgpt.server.run import ServeConfig, build_mock
app = create_app(build_mock(ServeConfig()))
lazy = ("yaml", "prometheus_client", "synthgpt.server.metrics_export", "sqlite3", "ctypes", "difflib")
print(sorted(m for m in lazy if m in sys.modules))
"""


def test_a_server_of_the_built_in_rules_loads_no_yaml_sqlite_prometheus_client_ctypes_or_difflib() -> None:
    out = subprocess.run([sys.executable, "-c", _SERVER_PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_RULES = Path(__file__).resolve().parents[2] / "examples" / "rules" / "chaos.yaml"


def test_a_rule_file_and_a_scrape_load_them() -> None:
    probe = _SERVER_PROBE.replace(
        "app = create_app(build_mock(ServeConfig()))",
        "import httpx\n"
        "from synthgpt.testing import InProcessTransport\n"
        f"app = create_app(build_mock(ServeConfig(rule_files=({str(_RULES)!r},))))\n"
        "assert httpx.Client(transport=InProcessTransport(app)).get('http://t/metrics').status_code == 200",
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['prometheus_client', 'synthgpt.server.metrics_export', 'yaml']"
