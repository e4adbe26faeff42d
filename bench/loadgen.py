"""Drive one HTTP target with a fixed load: wrk when installed, else the built-in Python generator."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .procs import pin_preexec

__all__ = ["LoadGen", "LoadResult", "Req", "Target", "choose_loadgen", "parse_wrk_output", "wrk_lua"]

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Req:
    """One HTTP request: POST `body` to `path` with `headers`."""

    path: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()

    def raw(self, host: str, port: int, body: bytes | None = None) -> bytes:
        body = self.body if body is None else body
        head = [f"POST {self.path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in self.headers]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass(frozen=True)
class Target:
    """What a load run sends to http://host:port: its requests in turn.

    With `unique`, every `{N}` in a body is replaced by a counter, so no two requests are the same
    (what a long load test looks like to caches and the journal).
    """

    host: str
    port: int
    requests: tuple[Req, ...]
    unique: bool = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.requests[0].path}"

    def spec(self) -> dict[str, Any]:
        """The JSON form bench.pyload reads."""
        return {
            "host": self.host,
            "port": self.port,
            "unique": self.unique,
            "requests": [
                {"path": r.path, "body": r.body.decode(), "headers": list(r.headers)} for r in self.requests
            ],
        }


@dataclass(frozen=True)
class LoadResult:
    requests: int
    duration_s: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0


def _lua_str(text: str) -> str:
    """`text` as a Lua long string, at a bracket level its content cannot close early."""
    level = 1
    while f"]{'=' * level}]" in text or text.endswith(f"]{'=' * level}"):
        level += 1
    eq = "=" * level
    return f"[{eq}[{text}]{eq}]"


def _lua_headers(headers: tuple[tuple[str, str], ...]) -> str:
    return "{" + ", ".join(f"[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers) + "}"


_WRK_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH_WRK %d %d %.0f %.0f %d %d %d %d %d\\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write,
    e.status, e.timeout))
end
"""


def wrk_lua(target: Target) -> str:
    """A wrk script sending `target`'s requests and printing one machine-readable summary line."""
    if len(target.requests) == 1 and not target.unique:
        # the static form: wrk builds the request once, the cheapest load it can generate
        r = target.requests[0]
        lines = ['wrk.method = "POST"', f"wrk.body = {_lua_str(r.body.decode())}"]
        lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in r.headers]
        return "\n".join(lines) + "\n" + _WRK_DONE
    reqs = ",\n".join(
        f"  {{path = {json.dumps(r.path)}, body = {_lua_str(r.body.decode())},"
        f" headers = {_lua_headers(r.headers)}}}"
        for r in target.requests
    )
    unique = "true" if target.unique else "false"
    return (
        f"""local reqs = {{
{reqs}
}}
local n = 0
local tid = 0
local unique = {unique}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("tid", counter)
end
init = function(args)
  tid = wrk.thread:get("tid") or 0
end
request = function()
  n = n + 1
  local r = reqs[(n % #reqs) + 1]
  local body = r.body
  if unique then
    body = string.gsub(body, "{{N}}", tid .. "-" .. n)
  end
  return wrk.format("POST", r.path, r.headers, body)
end
"""
        + _WRK_DONE
    )


def parse_wrk_output(text: str) -> LoadResult:
    for line in text.splitlines():
        if line.startswith("BENCH_WRK "):
            n, dur_us, p50, p99, *errs = (float(x) for x in line.split()[1:])
            return LoadResult(int(n), dur_us / 1e6, p50 / 1e3, p99 / 1e3, int(sum(errs)))
    raise RuntimeError(f"wrk printed no summary line:\n{text[-2000:]}")


class LoadGen:
    """Runs one load against a target on the load generator's cores and returns what it measured."""

    name = "?"

    def __init__(self, cpus: set[int] | None, workdir: Path) -> None:
        self.cpus = cpus
        self.workdir = workdir

    def run(self, target: Target, connections: int, duration: float) -> LoadResult:
        raise NotImplementedError


class WrkLoadGen(LoadGen):
    def __init__(self, cpus: set[int] | None, workdir: Path, exe: str) -> None:
        super().__init__(cpus, workdir)
        self.exe = exe
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
        first = (out.stdout or out.stderr).strip().splitlines()
        self.name = "wrk (" + (first[0].split(" Copyright")[0] if first else exe) + ")"

    def run(self, target: Target, connections: int, duration: float) -> LoadResult:
        threads = max(1, min(len(self.cpus) if self.cpus else 1, connections))
        with tempfile.NamedTemporaryFile("w", suffix=".lua", dir=self.workdir, delete=False) as fh:
            fh.write(wrk_lua(target))
        # wrk takes whole seconds
        argv = [
            self.exe,
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, math.ceil(duration))}s",
            "--timeout",
            "10s",
            "-s",
            fh.name,
            target.url,
        ]
        out = subprocess.run(
            argv, capture_output=True, text=True, check=False, preexec_fn=pin_preexec(self.cpus)
        )
        Path(fh.name).unlink(missing_ok=True)
        return parse_wrk_output(out.stdout + out.stderr)


class PythonLoadGen(LoadGen):
    name = "built-in python asyncio generator (bench/pyload.py; wrk not found)"

    def run(self, target: Target, connections: int, duration: float) -> LoadResult:
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=self.workdir, delete=False) as fh:
            json.dump(target.spec(), fh)
        argv = [
            sys.executable,
            "-m",
            "bench.pyload",
            "--target",
            fh.name,
            "--connections",
            str(connections),
            "--duration",
            str(duration),
        ]
        out = subprocess.run(
            argv, capture_output=True, text=True, check=False, cwd=ROOT, preexec_fn=pin_preexec(self.cpus)
        )
        Path(fh.name).unlink(missing_ok=True)
        for line in out.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                return LoadResult(
                    int(r["requests"]),
                    float(r["duration_s"]),
                    r["p50_us"] / 1e3,
                    r["p99_us"] / 1e3,
                    int(r["errors"]),
                )
        raise RuntimeError(f"bench.pyload failed:\n{out.stdout[-1000:]}{out.stderr[-2000:]}")


def choose_loadgen(which: str, cpus: set[int] | None, workdir: Path) -> LoadGen:
    """`auto`: wrk if it is on PATH, else the Python generator; `wrk` / `python` force one."""
    exe = shutil.which("wrk")
    if which == "wrk" and exe is None:
        raise SystemExit("--loadgen wrk: wrk is not installed (apt-get install wrk)")
    if which in ("auto", "wrk") and exe is not None:
        return WrkLoadGen(cpus, workdir, exe)
    gen = PythonLoadGen(cpus, workdir)
    if which == "python" and exe is not None:
        gen.name = "built-in python asyncio generator (bench/pyload.py; forced by --loadgen python)"
    return gen
