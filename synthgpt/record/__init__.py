"""Record real traffic into a rule file, and replay it (docs/record.md).

`synthgpt record --upstream URL --out recorded.yaml` runs `record.proxy`: each request goes to the real API
and its answer back to the client unchanged, and `record.readers` turn the answer into a rule matched by
the request's canonical digest (`synthgpt.rules.canonical`), which `record.writer` appends to the file.
`synthgpt serve recorded.yaml` replays it; `--strict` (`record.strict`) refuses unrecorded requests.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .proxy import ProxyConfig, create_proxy_app
    from .writer import RecordingFile

__all__ = ["ProxyConfig", "RecordingFile", "create_proxy_app"]

# The command line imports `record.cli` for every command, `serve` included: the proxy (httpx and the
# readers of every API, ~4 MB resident) is imported when it is first used, not with the package.
_LAZY = {"ProxyConfig": ".proxy", "create_proxy_app": ".proxy", "RecordingFile": ".writer"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
