"""The Dockerfile, compose.yaml and Makefile, checked without a Docker engine (none runs here): the image
serves on 0.0.0.0 as a non-root user, every file it copies exists, every SYNTHGPT_* name is a real flag's
variable; the Makefile rebuilds a broken .venv and has real lint/typecheck recipes."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from synthgpt import cli
from synthgpt.cli.env import env_names

REPO = Path(__file__).resolve().parents[2]


def _serve_variables() -> set[str]:
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(env_names(sub.choices["serve"]))


def _instructions() -> list[tuple[str, str]]:
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    steps = _instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_the_image_serves_on_all_interfaces_as_a_non_root_user() -> None:
    final = dict(_final_stage())
    assert final["FROM"].startswith("python:3.") and final["FROM"].endswith("-slim")
    user = final["USER"].split(":")[0]
    assert user not in ("root", "0")
    assert "useradd" in final["RUN"] and f" {user}" in final["RUN"]
    assert json.loads(final["ENTRYPOINT"]) == ["synthgpt"]
    assert json.loads(final["CMD"]) == ["serve", "--host", "0.0.0.0"]
    assert final["EXPOSE"] == "8000"
    assert "/healthz" in final["HEALTHCHECK"]


def test_the_one_image_carries_the_redis_client() -> None:
    """deploy/'s replicas run `--state redis://…` in this image: the wheel goes in with the `redis` extra,
    which pyproject.toml defines."""
    final = dict(_final_stage())
    assert '"$(ls /tmp/dist/*.whl)[redis]"' in final["RUN"]
    assert "redis = [" in (REPO / "pyproject.toml").read_text()
    assert not (REPO / "deploy" / "Dockerfile").exists()


def test_every_copied_file_exists_and_the_environment_names_real_flags() -> None:
    for word, rest in _instructions():
        if word == "COPY" and not rest.startswith("--from"):
            *sources, _ = shlex.split(rest)
            for source in sources:
                assert (REPO / source).exists(), source
    names = [kv.split("=")[0] for word, rest in _instructions() if word == "ENV" for kv in shlex.split(rest)]
    variables = {name for name in names if name.startswith("SYNTHGPT_")}
    assert variables and variables <= _serve_variables()


def test_the_compose_example() -> None:
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())
    service = compose["services"]["synthgpt"]
    assert service["build"] == "."
    assert set(service["environment"]) <= _serve_variables()
    rules = service["environment"]["SYNTHGPT_RULE_FILES"]
    [volume] = service["volumes"]
    host, container, _ = volume.split(":")
    assert rules.startswith(container + "/")
    assert (REPO / host / rules[len(container) + 1 :]).exists()
    assert service["ports"] == ["127.0.0.1:8000:8000"]


def _make(where: Path, target: str) -> subprocess.CompletedProcess[str]:
    """`make -n target` as a user runs it (not as a sub-make of `make test`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", "-n", target], cwd=where, capture_output=True,
                          text=True, timeout=60, env=env)  # fmt: skip


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefile_rebuilds_a_venv_whose_python_cannot_run(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to("/nonexistent/python3.9")
    dry = _make(tmp_path, "serve")
    assert dry.returncode == 0, dry.stderr
    said = ".venv was made by a Python that cannot run synthgpt (3.11+ needed): rebuilding it\n"
    assert dry.stdout.startswith(said)
    assert not (tmp_path / ".venv").exists()
    # serving's install: the package and what `synthgpt compile` needs (mypyc), no dev extra
    assert "-m venv .venv" in dry.stdout and "install --progress-bar on -e '.[native]'\n" in dry.stdout
    assert ".venv/bin/synthgpt compile --if-stale" in dry.stdout
    for target, command in (("lint", ".venv/bin/ruff check ."), ("typecheck", ".venv/bin/mypy")):
        out = _make(tmp_path, target)
        assert command in out.stdout.splitlines() and "'.[dev]'" in out.stdout
