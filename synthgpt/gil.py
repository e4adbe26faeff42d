"""Letting a thread that waits for the GIL take it, between the long passes of compiled code.

A large request is parsed and answered in the server's worker thread (`server.offload`) so that the event
loop's thread keeps answering others; it can only do so when the worker lets go of the GIL. Interpreted
code offers it every few ms on its own. Compiled code (`synthgpt.native`) never does: it held the GIL
through every pass over a large body in a row, 36 ms beyond orjson's parse for 16 MB of embeddings
inputs, 83 ms to count a 10 MB message's tokens, 85 ms to walk the depth of 100,000 messages.
"""

from __future__ import annotations

import time

__all__ = ["LONG_TEXT", "let_go"]

LONG_TEXT = 1 << 20
"""From this length, a text or body is gone over in passes or pieces with `let_go` between them (a pass
over 1 MB holds the GIL ~1-2 ms). Shorter ones pay nothing: they are the request path's common case."""


def let_go() -> None:
    """Lets a thread waiting for the GIL take it, then takes it back. `time.sleep(0)` lets go of the GIL
    for its system call; a thread that has waited for the GIL past the switch interval (5 ms) is handed it
    then. A few µs when no thread waits."""
    time.sleep(0)
