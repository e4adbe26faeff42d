"""Fixtures shared by every test area.

- `live_server`: base URL of one real `synthgpt serve` process (built-in rules, seed 0) per test session
  (per xdist worker), on a free loopback port; stopped at the end of the session.
- `start_server`: `start_server(*serve_args, env=None, stderr=None)` is a context manager that runs another
  `synthgpt serve` process with those arguments and yields its base URL (`http://127.0.0.1:PORT`);
  `stderr`, a path, keeps the server's log there for the test to read.
- `openai_spec`: `validate(schema_name, value)` against the OpenAI OpenAPI schemas vendored in
  `tests/specs/` (a subset of the public spec; see tests/specs/README.md).
- `sse_snapshot`: syrupy's `snapshot` storing text/bytes as one `.sse` file per assertion.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

REPO = Path(__file__).resolve().parents[1]
OPENAI_SCHEMAS = REPO / "tests" / "specs" / "openai-schemas.json"
START_TIMEOUT = 30.0

StartServer = Callable[..., contextlib.AbstractContextManager[str]]


@contextlib.contextmanager
def start_server(*args: str, env: dict[str, str] | None = None, stderr: Path | None = None) -> Iterator[str]:
    """Run `python -m synthgpt serve --port 0 *args` and yield its base URL once /healthz answers."""
    with synthgpt_process("serve", *args, env=env, stderr=stderr) as url:
        yield url


@contextlib.contextmanager
def synthgpt_process(
    command: str,
    *args: str,
    env: dict[str, str] | None = None,
    stderr: Path | None = None,
    healthz: bool = True,
) -> Iterator[str]:
    """Run `python -m synthgpt COMMAND --host 127.0.0.1 --port 0 *args` (`serve`, `record`), yield the URL
    it announces (once /healthz answers, with `healthz`), and stop it afterwards."""
    cmd = [sys.executable, "-m", "synthgpt", command, "--host", "127.0.0.1", "--port", "0", *args]
    with tempfile.TemporaryFile() if stderr is None else stderr.open("w+b") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=err, cwd=REPO, env={**os.environ, **(env or {})}
        )
        try:
            url = _wait_for_url(proc, err)
            if healthz:
                _wait_healthy(url, proc)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


_ANNOUNCED = re.compile(r"synthgpt(?: \w+:)? listening on (http://[^\s,]+)")


def _failure(proc: subprocess.Popen[bytes], err: Any, what: str) -> RuntimeError:
    err.seek(0)
    return RuntimeError(
        f"synthgpt {what} (exit code {proc.poll()}):\n{err.read().decode(errors='replace')}"
    )


def _wait_for_url(proc: subprocess.Popen[bytes], err: Any) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline().decode().strip()
            # `synthgpt listening on URL` (serve), `synthgpt record: listening on URL, forwarding to …`
            announced = _ANNOUNCED.match(line)
            if announced:
                return announced.group(1)
            if not line and proc.poll() is not None:
                break
        elif proc.poll() is not None:
            break
    proc.kill()
    raise _failure(proc, err, "did not announce its URL")


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"synthgpt at {url} never became healthy")


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    with start_server("--seed", "0") as url:
        yield url


@pytest.fixture(name="start_server", scope="session")
def start_server_fixture() -> StartServer:
    return start_server


# ---------------------------------------------------------------------------------------- spec validation


def _nullable_to_type(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` rewritten as JSON Schema (WIRE.md §8)."""
    if isinstance(node, dict):
        out = {k: _nullable_to_type(v) for k, v in node.items() if k != "nullable"}
        if node.get("nullable") is True:
            if isinstance(out.get("enum"), list) and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
            if isinstance(out.get("type"), str):
                out["type"] = [out["type"], "null"]
            elif "type" not in out:
                out = {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(node, list):
        return [_nullable_to_type(v) for v in node]
    return node


def _openai_schemas() -> Any:
    """The vendored schemas (tests/specs/regenerate.py), nullable rewritten."""
    import json

    return _nullable_to_type(json.loads(OPENAI_SCHEMAS.read_text(encoding="utf-8"))["schemas"])


@cache
def _openai_registry() -> Any:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = {"components": {"schemas": _openai_schemas()}}
    return Registry().with_resource("openai", Resource.from_contents(doc, default_specification=DRAFT202012))


@pytest.fixture(scope="session")
def openai_spec() -> Callable[[str, Any], None]:
    """`validate(name, value)` against `#/components/schemas/<name>` of the OpenAI OpenAPI document."""
    from jsonschema import Draft202012Validator

    registry = _openai_registry()

    def validate(name: str, value: Any) -> None:
        validator = Draft202012Validator({"$ref": f"openai#/components/schemas/{name}"}, registry=registry)
        errors = sorted(validator.iter_errors(value), key=lambda e: len(list(e.absolute_path)))
        problems = "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])
        assert not problems, f"not a valid {name}:\n{problems}"

    return validate


# ---------------------------------------------------------------------------------------------- snapshots


class _SSESnapshot(SingleFileSnapshotExtension):
    """One text file per snapshot, so stream diffs read line by line."""

    file_extension = "sse"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return data.decode() if isinstance(data, bytes) else str(data)


@pytest.fixture
def sse_snapshot(snapshot: Any) -> Any:
    return snapshot.use_extension(_SSESnapshot)
