"""`serve --watch`: rule files reload on change; a broken edit keeps the last good rules and says where."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from synthgpt.rules.loader import LoadedRules
from synthgpt.rules.watch import RuleWatcher

GOOD = "rules: [{name: a, match: always, output: {text: one}}]\n"


def touch(path: Path, text: str) -> None:
    """Write and move the mtime forward, so the change shows even on coarse-mtime file systems."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


class Calls:
    def __init__(self) -> None:
        self.reloads: list[LoadedRules] = []
        self.errors: list[str] = []
        self.event = threading.Event()

    def reload(self, loaded: LoadedRules) -> None:
        self.reloads.append(loaded)
        self.event.set()

    def error(self, message: str) -> None:
        self.errors.append(message)
        self.event.set()


def texts(loaded: LoadedRules) -> list[str]:
    return [repr(r.generator) for r in loaded.ruleset]


def test_reload_on_change_and_keep_last_good(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rules = tmp_path / "rules.yaml"
    rules.write_text(GOOD)
    calls = Calls()
    watcher = RuleWatcher(["rules.yaml"], calls.reload, calls.error, interval=60)
    watcher.start()
    try:
        assert watcher.last_good is not None and texts(watcher.last_good) == ["reply(text=just('one'))"]
        assert watcher.poll() is False  # nothing changed yet
        touch(rules, GOOD.replace("one", "two"))
        assert watcher.poll() is True
        assert [texts(x) for x in calls.reloads] == [["reply(text=just('two'))"]]

        touch(rules, "rules:\n  - {name: a, match: always, generate: {integer: [9, 3]}}\n")
        assert watcher.poll() is False
        assert calls.errors == ["rules.yaml:2:41: `integer` takes `lo` <= `hi`, got 9 > 3"]
        assert texts(watcher.last_good) == ["reply(text=just('two'))"]  # the last good rules stay
        assert watcher.poll() is False and len(calls.errors) == 1  # reported once, not on every poll

        touch(rules, GOOD.replace("one", "three"))
        assert watcher.poll() is True
        assert texts(calls.reloads[-1]) == ["reply(text=just('three'))"] and watcher.last_error is None
    finally:
        watcher.stop()


def test_included_files_are_watched(tmp_path: Path) -> None:
    main = tmp_path / "main.yaml"
    extra = tmp_path / "extra.yaml"
    extra.write_text("rules: [{name: x, match: {turn: 2}, output: {text: x1}}]\n")
    main.write_text("include: extra.yaml\n" + GOOD)
    calls = Calls()
    with RuleWatcher([main], calls.reload, calls.error, interval=60) as watcher:
        touch(extra, "rules: [{name: x, match: {turn: 2}, output: {text: x2}}]\n")
        assert watcher.poll() is True
        assert texts(calls.reloads[0]) == ["reply(text=just('x2'))", "reply(text=just('one'))"]
        extra.unlink()
        assert watcher.poll() is False
        assert calls.errors == [
            f"{main}:1:10: cannot read included file '{extra}': No such file or directory"
        ]


def test_start_with_broken_files_then_fix(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text("rules: [{name: a}]\n")
    calls = Calls()
    with RuleWatcher([rules], calls.reload, calls.error, interval=60) as watcher:
        assert watcher.last_good is None
        touch(rules, GOOD)
        assert watcher.poll() is True and len(calls.reloads) == 1


def test_the_thread_polls(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(GOOD)
    calls = Calls()
    with RuleWatcher([rules], calls.reload, calls.error, interval=0.01):
        touch(rules, GOOD.replace("one", "polled"))
        assert calls.event.wait(timeout=30), "the watcher thread never reloaded"
    assert texts(calls.reloads[0]) == ["reply(text=just('polled'))"]


def test_errors_go_to_the_log_without_on_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(GOOD)
    watcher = RuleWatcher([rules], lambda loaded: None, interval=60)
    with watcher:
        touch(rules, "rules: [")
        with caplog.at_level("ERROR", logger="synthgpt.rules"):
            assert watcher.poll() is False
    assert f"{rules}:1:9: invalid YAML: expected the node content, but found '<stream end>'" in caplog.text
    assert "keeping the last good rules" in caplog.text


def test_a_failing_callback_does_not_stop_the_watcher(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(GOOD)

    def boom(loaded: LoadedRules) -> None:
        raise RuntimeError("boom")

    with RuleWatcher([rules], boom, interval=60) as watcher:
        touch(rules, GOOD.replace("one", "two"))
        with caplog.at_level("ERROR", logger="synthgpt.rules"):
            assert watcher.poll() is False
    assert "rule reload callback failed" in caplog.text


def test_arguments() -> None:
    with pytest.raises(ValueError, match="interval must be > 0 seconds, got 0"):
        RuleWatcher(["x.yaml"], lambda loaded: None, interval=0)
    watcher = RuleWatcher(["x.yaml"], lambda loaded: None, interval=60).start()
    try:
        with pytest.raises(RuntimeError, match="already started"):
            watcher.start()
    finally:
        watcher.stop()


@pytest.mark.slow
def test_serve_watch_reloads_and_keeps_the_last_good_rules(tmp_path: Path, start_server: Any) -> None:
    import time

    import httpx

    rules = tmp_path / "rules.yaml"
    rules.write_text(GOOD)

    def answer(url: str) -> str:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=10)
        return str(r.json()["choices"][0]["message"]["content"])

    def wait_for(url: str, text: str) -> None:
        deadline = time.monotonic() + 30
        while answer(url) != text:
            assert time.monotonic() < deadline, f"the server never answered {text!r}"
            time.sleep(0.1)

    log = tmp_path / "serve.log"
    with start_server("--watch", str(rules), stderr=log) as url:
        assert answer(url) == "one"
        touch(rules, GOOD.replace("one", "two"))
        wait_for(url, "two")
        touch(rules, "rules: [{name: a, match: alway, output: {text: broken}}]\n")  # a broken edit
        # the watcher has read the broken file once it says so; only then can "no reload" be checked
        deadline = time.monotonic() + 30
        while "rule files not reloaded, keeping the last good rules" not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, "the server never reported the broken edit"
            time.sleep(0.1)
        assert f"{rules}:1:26: unknown matcher 'alway' — did you mean 'always'?" in log.read_text()
        assert answer(url) == "two"
        touch(rules, GOOD.replace("one", "three"))
        wait_for(url, "three")


def test_a_file_that_became_empty_is_a_broken_edit_until_it_stays_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A truncating save leaves the file empty for a moment: that must not replace the rules with none
    (issue 11, §5). Only a file that stays empty for `empty_grace` seconds is loaded as such."""
    monkeypatch.chdir(tmp_path)
    rules = tmp_path / "rules.yaml"
    rules.write_text(GOOD)
    calls = Calls()
    now = [100.0]
    watcher = RuleWatcher(["rules.yaml"], calls.reload, calls.error, interval=60, empty_grace=2.0,
                          clock=lambda: now[0])  # fmt: skip
    watcher.start()
    try:
        empty_error = (
            "rules.yaml: the file is empty (a save in progress?); keeping the last good rules. If it stays "
            "empty for 2 s, it is loaded as it is: no rules."
        )
        touch(rules, "")  # the editor truncated the file...
        assert watcher.poll() is False
        assert calls.reloads == [] and calls.errors == [empty_error]
        now[0] += 1.0
        touch(rules, GOOD.replace("one", "two"))  # ...and wrote the new rules
        assert watcher.poll() is True
        assert [texts(x) for x in calls.reloads] == [["reply(text=just('two'))"]]

        touch(rules, "")  # emptied on purpose: kept for the grace period, then loaded
        assert watcher.poll() is False
        now[0] += 1.5
        assert watcher.poll() is False
        assert len(calls.reloads) == 1 and calls.errors == [empty_error, empty_error]
        now[0] += 1.0
        assert watcher.poll() is True
        assert [texts(x) for x in calls.reloads][-1] == []
        assert watcher.poll() is False  # empty and loaded: nothing more to do
    finally:
        watcher.stop()
