"""`synthgpt serve --workers 2`, with `--journal PATH.sqlite` or without: every worker sees every call."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

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


def test_workers_without_a_journal_file_gather_their_calls_when_read(start_server: Any) -> None:
    """`--workers 2` alone: each worker keeps its calls in memory and a read gathers both workers'
    (`journal.workers`). A call is there as soon as its answer is, whichever worker is asked, in the order
    the calls were made; a clear asked of one worker clears the other's calls too."""
    with start_server("--workers", "2") as url:
        for i in range(16):  # a new connection per request, so the kernel hands them to either worker
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"call {i}"}]}
            assert httpx.post(url + "/v1/chat/completions", json=body).status_code == 200
            listing = httpx.get(url + "/_synthgpt/calls")
            assert listing.headers["x-total-count"] == str(i + 1)
            calls = listing.json()
            assert [c["index"] for c in calls] == list(range(i + 1))
            texts = [c["request"]["last_user"] for c in calls]
            assert texts == [f"call {k}" for k in range(i + 1)]
        assert httpx.delete(url + "/_synthgpt/calls").status_code == 200
        for _ in range(4):
            assert httpx.get(url + "/_synthgpt/calls").headers["x-total-count"] == "0"
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "after the clear"}]}
        assert httpx.post(url + "/v1/chat/completions", json=body).status_code == 200
        for _ in range(4):  # numbering goes on from the calls made, not from the calls kept
            assert [c["index"] for c in httpx.get(url + "/_synthgpt/calls").json()] == [16]
