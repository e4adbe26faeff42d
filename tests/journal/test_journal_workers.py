"""`synthgpt serve --workers 2 --journal PATH.sqlite`: every worker sees every call."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    return lines.get(timeout=timeout)


def test_workers_share_one_sqlite_journal(tmp_path: Path) -> None:
    db = tmp_path / "calls.sqlite"
    cmd = [sys.executable, "-m", "synthgpt", "serve", "--workers", "2", "--port", "0", "--journal", str(db)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = _first_line(proc, timeout=60)
        assert line.startswith("synthgpt listening on http://127.0.0.1:"), line
        url = line.split(" on ", 1)[1].strip()
        deadline = time.monotonic() + 60
        while True:  # the workers import and start after the announcement
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "workers did not start"
            time.sleep(0.1)
        for i in range(20):  # a new connection per call, so the kernel may hand them to either worker
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"call {i}"}]}
            assert httpx.post(url + "/v1/chat/completions", json=body).status_code == 200
            # a call is in the file before its answer leaves (the workers write theirs in batches)
            assert httpx.get(url + "/_synthgpt/calls").headers["x-total-count"] == str(i + 1)
        for _ in range(4):  # whichever worker answers the admin route sees all twenty calls
            listing = httpx.get(url + "/_synthgpt/calls")
            assert listing.headers["x-total-count"] == "20"
            assert sorted(c["index"] for c in listing.json()) == list(range(20))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
