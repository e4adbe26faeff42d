"""Every command-line flag is also a `SYNTHGPT_*` environment variable; `--version`; `synthgpt init`."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from synthgpt import cli
from synthgpt.cli.env import env_name, env_names
from synthgpt.rules.check import check_report
from synthgpt.rules.loader import load_files
from synthgpt.server.run import ServeConfig


def serve_config(monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str]) -> ServeConfig:
    for k in [k for k in __import__("os").environ if k.startswith("SYNTHGPT_")]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    seen: list[ServeConfig] = []
    monkeypatch.setattr("synthgpt.server.run.serve", lambda config: seen.append(config))
    assert cli.main(["serve", *argv]) == 0
    [config] = seen
    return config


def _serve_parser() -> argparse.ArgumentParser:
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices["serve"]
    return parser


def test_every_serve_flag_has_a_variable_named_after_it() -> None:
    parser = _serve_parser()
    flags = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    names = env_names(parser)
    for action in flags:  # flags added later (by anyone) are covered with no list to update
        name = env_name(action)
        assert name is not None, action
        spelled = (action.option_strings[0] if action.option_strings else action.dest).lstrip("-")
        assert name == "SYNTHGPT_" + spelled.upper().replace("-", "_")
        assert name in names
    assert {"SYNTHGPT_PORT", "SYNTHGPT_MAX_BODY_BYTES", "SYNTHGPT_RULE_FILES", "SYNTHGPT_LOG_FORMAT",
            "SYNTHGPT_REQUEST_LOG", "SYNTHGPT_WATCH"} <= set(names)  # fmt: skip


def test_variables_set_the_config_and_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "SYNTHGPT_RULE_FILES": "a.yaml, b.yaml",
        "SYNTHGPT_HOST": "0.0.0.0",
        "SYNTHGPT_PORT": "9001",
        "SYNTHGPT_SEED": "7",
        "SYNTHGPT_WORKERS": "3",
        "SYNTHGPT_WATCH": "true",
        "SYNTHGPT_MEMO_ENTRIES": "0",
        "SYNTHGPT_LOG_FORMAT": "json",
        "SYNTHGPT_REQUEST_LOG": "off",
        "SYNTHGPT_CLOCK": "system",
    }
    config = serve_config(monkeypatch, [], env)
    assert (config.rule_files, config.host, config.port, config.seed, config.workers) == (
        ("a.yaml", "b.yaml"), "0.0.0.0", 9001, 7, 3,
    )  # fmt: skip
    assert (config.watch, config.memo_entries, config.log_format, config.request_log, config.clock) == (
        True, 0, "json", False, "system",
    )  # fmt: skip
    flags = serve_config(monkeypatch, ["c.yaml", "--port", "9002", "--request-log"], env)
    assert (flags.rule_files, flags.port, flags.request_log, flags.seed) == (("c.yaml",), 9002, True, 7)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SYNTHGPT_PORT": "eighty"}, "environment variable SYNTHGPT_PORT='eighty': must be a whole number"),
        ({"SYNTHGPT_WORKERS": "0"}, "environment variable SYNTHGPT_WORKERS='0': must be >= 1, got 0"),
        (
            {"SYNTHGPT_LOG_FORMAT": "xml"},
            "environment variable SYNTHGPT_LOG_FORMAT='xml': choose from text, json",
        ),
        ({"SYNTHGPT_WATCH": "maybe"}, "environment variable SYNTHGPT_WATCH='maybe': use one of 1, true, yes"),
    ],
)
def test_a_bad_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str], message: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as info:
        cli.main(["serve"])
    assert info.value.code == 2
    assert "synthgpt serve: error: " + message in capsys.readouterr().err


def test_a_misspelt_variable_is_a_warning(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    serve_config(monkeypatch, [], {"SYNTHGPT_PROT": "9000"})
    assert capsys.readouterr().err == (
        "synthgpt serve: warning: SYNTHGPT_PROT is not a synthgpt setting — did you mean SYNTHGPT_PORT?\n"
    )


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "synthgpt", "--version"], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert (out.returncode, out.stdout) == (0, f"synthgpt {version('synthgpt')}\n")


def test_init_writes_a_starter_that_checks_clean_and_keeps_the_builtin_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init"]) == 0
    assert capsys.readouterr().out == (
        "wrote rules.yaml: check it with `synthgpt check rules.yaml`, "
        "serve it with `synthgpt serve rules.yaml`\n"
    )
    assert check_report(["rules.yaml"]) == ([], [])  # no error, no warning
    loaded = load_files(["rules.yaml"])
    assert loaded.builtin == {"triggers", "defaults"}
    mock = loaded.mock()
    ask = {"model": "gpt-4o", "messages": [{"role": "user", "content": "I want a refund"}]}
    assert mock.generate(ask).rule == "refund_policy"
    assert cli.main(["init"]) == 1  # never over an existing file
    assert "rules.yaml already exists (--force overwrites it)" in capsys.readouterr().err
    assert cli.main(["init", "other.yaml"]) == 0
    assert cli.main(["init", "--force"]) == 0


def test_the_pure_python_switch_is_a_setting_not_a_typo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `SYNTHGPT_PURE_PYTHON=1` (synthgpt.native) is read on import, not by a flag: serve took it for a
    # misspelt SYNTHGPT_PATH
    serve_config(monkeypatch, [], {"SYNTHGPT_PURE_PYTHON": "1"})
    assert capsys.readouterr().err == ""
