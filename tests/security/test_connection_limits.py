"""What slow clients and a dying supervisor leave behind (issue 11, §5): header and keep-alive timeouts,
the concurrency limit, and workers that end with their parent."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import REPO, StartServer


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _slow_client(url: str) -> socket.socket:
    """A connection that sent part of a request's headers and then went quiet."""
    sock = socket.create_connection(_address(url))
    sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-slow: ")
    return sock


def _read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk


def test_slow_headers_get_408_and_the_connection_closes(start_server: StartServer) -> None:
    with start_server("--header-timeout", "0.5") as url:
        slow = [_slow_client(url) for _ in range(50)]
        start = time.monotonic()
        assert httpx.get(url + "/healthz").status_code == 200  # others are served meanwhile
        answers = [_read_all(s, 5.0) for s in slow]
        assert time.monotonic() - start < 4.0
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
            assert answer.endswith(b"Request headers not complete within 0.5 s (--header-timeout).\n")
        for s in slow:
            s.close()
        # a healthy keep-alive client is not cut off: its second request comes after the first answer
        with httpx.Client() as client:
            assert client.get(url + "/healthz").status_code == 200
            time.sleep(0.3)
            assert client.get(url + "/healthz").status_code == 200


def test_the_header_deadline_counts_from_the_previous_answer_and_not_from_a_request_in_progress(
    start_server: StartServer,
) -> None:
    with (
        start_server("--timeout-keep-alive", "30", "--header-timeout", "0.4") as url,
        socket.create_connection(_address(url)) as idle,
        socket.create_connection(_address(url)) as busy,
    ):
        idle.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        idle.settimeout(5.0)
        answer = b""
        while not answer.endswith(b'{"status":"ok"}'):  # the whole answer: its head and body may come apart
            answer += idle.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200 OK")
        start = time.monotonic()
        # a body that comes slowly after complete headers is not the headers' business
        head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
        busy.sendall(head + b'content-length: 62\r\n\r\n{"model":"gpt-4o",')
        time.sleep(0.7)
        busy.sendall(b'"messages":[{"role":"user","content":"hi"}]}')
        assert _read_all(idle, 5.0).startswith(b"HTTP/1.1 408 Request Timeout")  # idle after its answer
        assert 0.4 <= time.monotonic() - start < 2.0
        busy.settimeout(5.0)
        assert busy.recv(65536).startswith(b"HTTP/1.1 200 OK")


def test_idle_keep_alive_connections_close(start_server: StartServer) -> None:
    with (
        start_server("--timeout-keep-alive", "1", "--header-timeout", "30") as url,
        socket.create_connection(_address(url)) as sock,
    ):
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        start = time.monotonic()
        assert _read_all(sock, 10.0).startswith(b"HTTP/1.1 200 OK")
        assert 0.8 < time.monotonic() - start < 5.0


def test_concurrency_limit(start_server: StartServer) -> None:
    with start_server("--limit-concurrency", "4") as url:
        held = [socket.create_connection(_address(url)) for _ in range(4)]
        time.sleep(0.2)
        r = httpx.get(url + "/healthz")
        assert (r.status_code, r.text) == (503, "Service Unavailable")
        for s in held:
            s.close()
        time.sleep(0.2)
        assert httpx.get(url + "/healthz").status_code == 200


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the test reads /proc for the workers")
def test_workers_exit_when_the_supervisor_is_killed() -> None:
    cmd = [sys.executable, "-m", "synthgpt", "serve", "--port", "0", "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
    workers: list[int] = []
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "synthgpt serve did not announce its URL"
        url = proc.stdout.readline().decode().split()[-1]
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the workers never answered"
                time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(workers) >= 2  # the workers (and multiprocessing's resource tracker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                socket.create_connection(_address(url), timeout=0.5).close()
            except OSError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("a worker still serves the port 5 s after its supervisor died")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        for pid in workers:  # left behind only when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def test_a_pipelined_request_in_progress_is_not_cut_by_the_header_deadline(
    start_server: StartServer, tmp_path: Path
) -> None:
    # Two requests in one write: the second's headers are complete (and its answer under way) when the
    # first answer ends. Its answer, held back longer than the header timeout, still comes whole.
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n"
        "  - name: slow\n"
        "    match: always\n"
        "    output: {text: later}\n"
        "    stream: {first_delay_ms: 1200}\n"
    )
    with (
        start_server(str(rules), "--timeout-keep-alive", "30", "--header-timeout", "0.4") as url,
        socket.create_connection(_address(url)) as sock,
    ):
        body = b'{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}'
        slow = (
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n" + slow)
        answers = _read_all(sock, 10.0)
        assert answers.count(b"HTTP/1.1 200 OK") == 2
        assert b"408" not in answers
        assert b'"content":"later"' in answers
