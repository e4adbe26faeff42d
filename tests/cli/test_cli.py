"""The `synthgpt` command: argument handling in process, `serve` as a real process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthgpt import cli
from synthgpt.server.run import ServeConfig

HI = {"model": "gpt-test", "messages": [{"role": "user", "content": "hello"}]}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "synthgpt", *args], capture_output=True, text=True, timeout=60
    )


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    assert "{serve,init,record,check,render,explain,compile}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--clock", "later"], "argument --clock: bad clock 'later'"),
        (["serve", "--port", "70000"], "argument --port: must be between 0 and 65535, got 70000"),
        (["serve", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
        (["serve", "--max-body-bytes", "0"], "argument --max-body-bytes: must be >= 1, got 0"),
        (["serve", "--journal-size", "-1"], "argument --journal-size: must be >= 0, got -1"),
        (["launch"], "invalid choice: 'launch'"),
        (["serve", "--workers", "two"], "argument --workers: must be a whole number, got 'two'\n"),
        (["serve", "--port", "80.5"], "argument --port: must be a whole number, got '80.5'\n"),
        (["serve", "--journal-size", ""], "argument --journal-size: must be a whole number, got ''\n"),
        (["serve", "--seed", "x"], "argument --seed: must be a whole number, got 'x'\n"),
        (["serve", "--clock", "step:0:nan"], "argument --clock: bad clock 'step:0:nan': use fixed, "
                                              "fixed:<unix-seconds>, step:<start>[:<step>] or system\n"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "invalid _" not in err  # never argparse's "invalid _positive value"


def test_serve_help_names_every_clock_form(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    assert "step:<start>[:<step>]" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("command", "module"), [("check", "synthgpt.rules.check"), ("render", "synthgpt.render")]
)
def test_check_and_render_get_their_arguments_untouched(
    command: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    seen: list[list[str]] = []
    mod = importlib.import_module(module)

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 3

    monkeypatch.setattr(mod, "main", fake_main)
    assert cli.main([command, "a.yaml", "--help", "-q"]) == 3
    assert seen == [["a.yaml", "--help", "-q"]]


def test_serve_builds_its_config(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ServeConfig] = []
    monkeypatch.setattr("synthgpt.server.run.serve", lambda config: seen.append(config))
    assert (
        cli.main(
            [
                "serve",
                "r.yaml",
                "--port",
                "0",
                "--seed",
                "5",
                "--clock",
                "fixed:1700000000",
                "--workers",
                "2",
                "--watch",
                "--journal-size",
                "7",
                "--access-log",
                "--memo-entries",
                "0",
            ]
        )
        == 0
    )
    [config] = seen
    assert config.memo_entries == 0
    assert (config.rule_files, config.port, config.seed, config.clock, config.workers) == (
        ("r.yaml",),
        0,
        5,
        "fixed:1700000000",
        2,
    )
    assert (config.watch, config.journal_size, config.access_log, config.max_body_bytes) == (
        True,
        7,
        True,
        10 << 20,
    )
    assert ServeConfig.from_json(config.to_json()) == config


def test_serve_reports_unreadable_rule_files() -> None:
    result = run_cli("serve", "/nonexistent/rules.yaml", "--port", "0")
    assert result.returncode == 2
    assert result.stderr.startswith(
        "synthgpt serve: error: /nonexistent/rules.yaml:1:1: cannot read the rule file"
    )


def test_serve_reports_every_error_of_a_rule_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n"
        "  - name: a\n"
        "    match: always\n"
        "    generate: {intger: [1, 2]}\n"
        "  - name: b\n"
        "    match: always\n"
        "    generate: {integer: [9, 3]}\n",
        encoding="utf-8",
    )
    result = run_cli("serve", str(rules), "--port", "0")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(f"synthgpt serve: error: {rules}:4:")
    assert "unknown generator 'intger'" in lines[0]
    assert lines[1].startswith(f"synthgpt serve: error: {rules}:7:")
    assert "9 > 3" in lines[1]


@pytest.mark.slow
def test_serve_with_a_rule_file_seed_clock_and_limits(tmp_path: Path, start_server: Any) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "seed: 7\nmodels: [gpt-test]\nrules:\n  - name: hello\n    match: always\n"
        "    output: {text: Hello from a rule file}\n"
    )
    args = (str(rules), "--clock", "fixed:1700000000", "--max-body-bytes", "300", "--journal-size", "1")
    with start_server(*args) as url:
        r = httpx.post(url + "/v1/chat/completions", json=HI)
        assert r.json()["choices"][0]["message"]["content"] == "Hello from a rule file"
        assert r.json()["created"] == 1700000000
        assert [m["id"] for m in httpx.get(url + "/v1/models").json()["data"]] == ["gpt-test"]
        assert httpx.post(url + "/v1/chat/completions", json={**HI, "model": "gpt-4o"}).status_code == 404
        assert httpx.post(url + "/v1/chat/completions", content=b"x" * 301).status_code == 413
        calls = httpx.get(url + "/_synthgpt/calls").json()
        assert [(c["rule"], c["seed"] != 0) for c in calls] == [
            ("hello", True)
        ]  # journal size 1: the last call


@pytest.mark.slow
def test_workers_answer_with_the_same_bytes(start_server: Any) -> None:
    with start_server("--workers", "2") as url:
        bodies = set()
        for i in range(12):  # a fresh connection each time, so the workers share the requests
            r = httpx.post(url + "/v1/chat/completions", json={**HI, "stream": i % 2 == 0})
            bodies.add((r.status_code, r.headers["x-request-id"], r.content))
        assert len(bodies) == 2  # one streamed form, one plain form


@pytest.mark.slow
def test_watch_reloads_changed_rules(tmp_path: Path, start_server: Any) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: a\n    match: always\n    output: {text: first}\n")
    with start_server(str(rules), "--watch") as url:
        assert (
            httpx.post(url + "/v1/chat/completions", json=HI).json()["choices"][0]["message"]["content"]
            == "first"
        )
        rules.write_text("rules:\n  - name: b\n    match: always\n    output: {text: second version}\n")
        deadline = time.monotonic() + 10
        content = ""
        while time.monotonic() < deadline and content != "second version":
            time.sleep(0.1)
            content = httpx.post(url + "/v1/chat/completions", json=HI).json()["choices"][0]["message"][
                "content"
            ]
        assert content == "second version"
