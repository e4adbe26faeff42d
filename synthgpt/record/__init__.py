"""Record real traffic into a rule file, and replay it (docs/record.md).

`synthgpt record --upstream URL --out recorded.yaml` runs `record.proxy`: each request goes to the real API
and its answer back to the client unchanged, and `record.readers` turn the answer into a rule matched by
the request's canonical digest (`synthgpt.rules.canonical`), which `record.writer` appends to the file.
`synthgpt serve recorded.yaml` replays it; `--strict` (`record.strict`) refuses unrecorded requests.
"""

from __future__ import annotations

from .proxy import ProxyConfig, create_proxy_app
from .writer import RecordingFile

__all__ = ["ProxyConfig", "RecordingFile", "create_proxy_app"]
