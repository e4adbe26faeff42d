"""The new `serve` flags refuse bad values with a message naming the flag (exit 2), and reach the config."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import cli
from synthgpt.server.run import ServeConfig


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--header-timeout", "nan"],
            "argument --header-timeout: must be between 0 and 86400 seconds, got nan",
        ),
        (["--header-timeout", "0"], "argument --header-timeout: must be between 0 and 86400 seconds, got 0"),
        (["--header-timeout", "soon"], "argument --header-timeout: must be a number of seconds, got 'soon'"),
        (["--timeout-keep-alive", "0"], "argument --timeout-keep-alive: must be >= 1, got 0"),
        (["--limit-concurrency", "-5"], "argument --limit-concurrency: must be >= 1, got -5"),
        (["--journal-bytes", "0"], "argument --journal-bytes: must be >= 1, got 0"),
        (
            ["--allowed-hosts", "ev*il.example"],
            "argument --allowed-hosts: 'ev*il.example' is not a host pattern",
        ),
        (["--allowed-hosts", "a.example,"], "argument --allowed-hosts: '' is not a host pattern"),
        (
            ["--admin-token", "t", "--no-admin"],
            "argument --no-admin: not allowed with argument --admin-token",
        ),
    ],
)
def test_bad_values_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["serve", *args])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_flags_reach_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ServeConfig] = []

    def fake_serve(config: ServeConfig, **_: Any) -> None:
        seen.append(config)

    monkeypatch.setattr("synthgpt.server.run.serve", fake_serve)
    monkeypatch.setenv("SYNTHGPT_ADMIN_TOKEN", "from-env")
    argv = ["serve", "--allowed-hosts", "a.example,*.svc", "--limit-concurrency", "50",
            "--timeout-keep-alive", "2", "--header-timeout", "1.5", "--journal-bytes", "1000"]  # fmt: skip
    assert cli.main(argv) == 0
    assert cli.main(["serve", "--admin-token", "flag-wins"]) == 0
    assert cli.main(["serve", "--no-admin"]) == 0
    first, second, third = seen
    assert first.allowed_hosts == ("a.example", "*.svc") and first.admin_token == "from-env"
    assert (first.limit_concurrency, first.timeout_keep_alive, first.header_timeout) == (50, 2, 1.5)
    assert first.journal_bytes == 1000
    assert second.admin_token == "flag-wins"
    assert third.admin is False and third.admin_token is None
    assert ServeConfig.from_json(first.to_json()) == first
