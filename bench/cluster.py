"""A scale-out cluster on loopback ports: one `redis-server`, N `synthgpt serve --state redis://…`
replicas, and `nginx` round-robin in front. Used by the end-to-end test (tests/state) and the scale-out
benchmark (bench/scale_out.py); every process is started here and stopped by `close()`.

    with Cluster(tmp, rules=[path], replicas=3) as c:
        httpx.post(c.url + "/v1/chat/completions", json=…)
        c.redis.kill(); c.redis.start()       # an outage, data kept (append-only file)

nginx runs in the foreground (`daemon off`) with its config, pid, logs and temp files under `tmp`; each
answer carries `x-upstream` (the replica that answered), so a test can see calls land on every replica.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

__all__ = ["NGINX", "REDIS", "Cluster", "RedisServer", "free_port", "missing_programs"]

REDIS = shutil.which("redis-server")
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


def missing_programs() -> str | None:
    """Why a cluster cannot run here, or None."""
    missing = [name for name, path in (("redis-server", REDIS), ("nginx", NGINX)) if path is None]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install -y redis-server nginx)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{what} did not start on port {port}:\n{text}")
        time.sleep(0.05)


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class RedisServer:
    """`redis-server` on a free loopback port, data kept across `kill()` / `start()` (fsync per write)."""

    def __init__(self, workdir: Path, *, durable: bool = True) -> None:
        self.dir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.durable = durable
        """Fsync every write (the tests kill and restart it); False: in memory only, as a benchmark wants
        (an fsync per INCR costs milliseconds on a shared disk, which is not the state layer's cost)."""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert REDIS is not None, missing_programs()
        log = self.dir / "redis.log"
        persist = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else ["--appendonly",
                                                                                           "no"]  # fmt: skip
        cmd = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir), "--save", "",
               *persist, "--protected-mode", "no", "--daemonize", "no", "--logfile", str(log)]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:  # listening is not enough: it answers once the append-only file is loaded
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{text}")
            time.sleep(0.05)

    def kill(self) -> None:
        """Gone at once (SIGKILL), as a crashed or partitioned Redis is."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None

    def pause(self) -> None:
        """Frozen (SIGSTOP): connections stay open and nothing answers, as a Redis stuck on a slow disk or
        a long command is."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.resume()  # a stopped process cannot act on SIGTERM
        _stop(self.proc)
        self.proc = None


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    lines: queue.Queue[bytes] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    return lines.get(timeout=timeout).decode()


NGINX_CONF = """\
{user}worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream synthgpt {{
{servers}
        keepalive 64;
        keepalive_timeout 2s;   # under uvicorn's 5 s: nginx never reuses a connection the replica is closing
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://synthgpt;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;  # the client's Host: what --allowed-hosts checks
            proxy_buffering off;
            proxy_next_upstream off;
            add_header x-upstream $upstream_addr always;
        }}
    }}
}}
"""


class Cluster:
    def __init__(self, workdir: Path, *, rules: list[Path], replicas: int = 3, state: str = "redis",
                 extra_args: tuple[str, ...] = (), durable: bool = True) -> None:  # fmt: skip
        self.dir = workdir
        self.rules = rules
        self.n = replicas
        self.state = state
        self.extra_args = extra_args
        self.redis = RedisServer(workdir, durable=durable)
        self.replicas: list[subprocess.Popen[bytes]] = []
        self.replica_urls: list[str] = []
        self.nginx: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Cluster:
        problem = missing_programs()
        if problem:
            raise RuntimeError(problem)
        try:
            state_args: list[str] = []
            if self.state == "redis":
                self.redis.start()
                state_args = ["--state", self.redis.url]
            for _ in range(self.n):
                cmd = [sys.executable, "-m", "synthgpt", "serve", *map(str, self.rules), "--port", "0",
                       *state_args, *self.extra_args]  # fmt: skip
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                self.replicas.append(proc)
            for proc in self.replicas:
                line = _first_line(proc, timeout=180)  # three imports at once on a busy machine
                if not line.startswith("synthgpt listening on "):
                    raise RuntimeError(f"a replica did not start: {line!r}")
                self.replica_urls.append(line.split(" on ", 1)[1].strip())
            self.port = free_port()
            servers = "\n".join(f"        server {u.removeprefix('http://')};" for u in self.replica_urls)
            user = "user root;\n" if os.geteuid() == 0 else ""  # workers must reach the temp dirs here
            conf = self.dir / "nginx.conf"
            conf.write_text(NGINX_CONF.format(user=user, dir=self.dir, servers=servers, port=self.port))
            assert NGINX is not None
            self.nginx = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(self.dir), "-e",
                                           str(self.dir / "nginx-error.log")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            _wait_port(self.port, self.nginx, "nginx", self.dir / "nginx-error.log")
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + 180
        for url in self.replica_urls:
            while True:
                try:
                    if httpx.get(url + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"replica {url} never became ready")
                time.sleep(0.05)

    def close(self) -> None:
        _stop(self.nginx)
        self.nginx = None
        for proc in self.replicas:
            _stop(proc)
            if proc.stdout is not None:
                proc.stdout.close()
        self.replicas = []
        self.redis.stop()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
