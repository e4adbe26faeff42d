"""Processes under test: start pinned to a core, wait until they listen, read their CPU time and RSS.

CPU and memory come from /proc (Linux); elsewhere they read as None and the report says "n/a".
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CpuPlan",
    "Proc",
    "cpu_plan",
    "free_port",
    "pin_preexec",
    "tree_cpu_seconds",
    "tree_pids",
    "tree_rss_bytes",
]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class CpuPlan:
    """Which cores the servers and the load generator run on (None: not pinned)."""

    server: set[int] | None
    load: set[int] | None

    def describe(self) -> str:
        if self.server is None or self.load is None:
            return "not pinned (fewer than 2 usable cores, or no sched_setaffinity)"
        return f"servers on cpu {_fmt(self.server)}, load generator on cpu {_fmt(self.load)}"


def _fmt(cpus: set[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def cpu_plan() -> CpuPlan:
    """Server on the first usable core, load generator on the others, when there are at least two."""
    if not hasattr(os, "sched_getaffinity"):
        return CpuPlan(None, None)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return CpuPlan(None, None)
    return CpuPlan({cpus[0]}, set(cpus[1:]))


def pin_preexec(cpus: set[int] | None) -> Callable[[], None] | None:
    # Set before exec so every thread the child later creates inherits the mask (wrk, uvicorn).
    if cpus is None:
        return None

    def pin() -> None:
        os.sched_setaffinity(0, cpus)

    return pin


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its descendants (a server may serve from a child process)."""
    out = [pid]
    i = 0
    while i < len(out):
        p = out[i]
        i += 1
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    out.extend(int(c) for c in fh.read().split())
    return out


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: split after the last ')'
    return raw[raw.rindex(")") + 2 :].split()


def tree_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of the process tree, in seconds (10 ms resolution on most kernels)."""
    total = 0
    seen = False
    for p in tree_pids(pid):
        f = _stat_fields(p)
        if f is not None:
            seen = True
            total += int(f[11]) + int(f[12])  # utime, stime (fields 14 and 15 of stat)
    return total / _TICKS if seen else None


def tree_rss_bytes(pid: int) -> int | None:
    """Resident set size of the process tree (the sum over its processes)."""
    total = 0
    seen = False
    for p in tree_pids(pid):
        f = _stat_fields(p)
        if f is not None:
            seen = True
            total += int(f[21]) * _PAGE  # rss in pages (field 24 of stat)
    return total if seen else None


@dataclass
class Proc:
    """A child process we started: a server or a load generator."""

    name: str
    argv: Sequence[str]
    cpus: set[int] | None = None
    cwd: Path | None = None
    env: dict[str, str] | None = None
    popen: subprocess.Popen[bytes] | None = field(default=None, init=False)
    log_path: Path | None = None

    def start(self) -> Proc:
        log = open(self.log_path, "wb") if self.log_path else None  # noqa: SIM115
        self.popen = subprocess.Popen(
            list(self.argv),
            stdout=log if log is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            env=self.env,
            preexec_fn=pin_preexec(self.cpus),
            start_new_session=True,
        )
        if log is not None:
            log.close()
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None, f"{self.name} was not started"
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def log_tail(self, chars: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]

    def wait_listening(self, host: str, port: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.name} exited before listening:\n{self.log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"{self.name} did not listen on {host}:{port} within {timeout:.0f}s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """SIGTERM to the process group we created, SIGKILL after 5 s."""
        if self.popen is None or self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=5)


def python_argv(*args: str) -> list[str]:
    return [sys.executable, *args]


__all__ += ["python_argv"]
