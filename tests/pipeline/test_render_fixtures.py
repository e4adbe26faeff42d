"""`synthgpt render`: fixture files from rule files, byte-identical on every run, no server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from synthgpt import MockGPT
from synthgpt.cli import main as cli_main
from synthgpt.render import file_stem, main, render_requests
from synthgpt.rules.loader import load_files
from synthgpt.testing import InProcessTransport2

RULES = """\
seed: 11
rules:
  - name: weather
    match: {last_user: {contains: weather}}
    output: {text: "WEATHER_TEXT"}
  - name: chatter
    match: always
    generate: {paragraph: [1, 2]}
"""
ANTHROPIC = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
REQUESTS = [
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]},
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather in Oslo?"}]},
    {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "tell me more"}]},
]


def _setup(tmp: Path, weather: str = "Sunny.") -> tuple[Path, Path]:
    rules = tmp / "rules.yaml"
    rules.write_text(RULES.replace("WEATHER_TEXT", weather))
    requests = tmp / "requests.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in REQUESTS))
    return rules, requests


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_two_runs_are_byte_identical(tmp_path: Path) -> None:
    rules, requests = _setup(tmp_path)
    for out in ("a", "b"):
        args = [str(rules), "--requests", str(requests), "--api", "chat", "--out", str(tmp_path / out)]
        assert main(args) == 0
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first == second
    names = [file_stem(i + 1, json.dumps(r), "chat", False) + ".json" for i, r in enumerate(REQUESTS)]
    assert sorted(first) == sorted([*names, "manifest.json"])
    manifest = json.loads(first["manifest.json"])
    assert manifest["seed"] == 11 and manifest["api"] == "chat" and manifest["stream"] is False
    assert [(e["line"], e["file"], e["rule"], e["status"]) for e in manifest["entries"]] == [
        (1, names[0], "chatter", 200),
        (2, names[1], "weather", 200),
        (3, names[2], "chatter", 200),
    ]
    assert json.loads(first[names[1]])["choices"][0]["message"]["content"] == "Sunny."
    # an unchanged re-run does not even touch the files
    mtimes = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a").iterdir()}
    main([str(rules), "--requests", str(requests), "--api", "chat", "--out", str(tmp_path / "a")])
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a").iterdir()} == mtimes


def test_a_changed_rule_changes_only_the_files_it_answers(tmp_path: Path) -> None:
    rules, requests = _setup(tmp_path)
    args = ["--requests", str(requests), "--api", "chat", "--stream", "--out"]
    main([str(rules), *args, str(tmp_path / "before")])
    rules.write_text(RULES.replace("WEATHER_TEXT", "Rain all day."))
    main([str(rules), *args, str(tmp_path / "after")])
    before, after = _tree(tmp_path / "before"), _tree(tmp_path / "after")
    assert sorted(before) == sorted(after)
    changed = sorted(name for name in before if before[name] != after[name])
    weather_file = file_stem(2, json.dumps(REQUESTS[1]), "chat", True) + ".sse"
    assert changed == [weather_file]  # the manifest too is unchanged: same rule, same seed
    assert b"Rain" in after[weather_file]


def test_streams_are_the_bytes_the_server_sends(tmp_path: Path) -> None:
    rules, _ = _setup(tmp_path)
    loaded = load_files([rules])
    lines = [json.dumps(r) for r in REQUESTS]
    rendered = render_requests(MockGPT(loaded.ruleset, seed=11), lines, "chat", stream=True)
    server_mock = MockGPT(load_files([rules]).ruleset, seed=11)
    with httpx2.Client(transport=InProcessTransport2(server_mock), base_url="http://t") as client:
        for r, request in zip(rendered, REQUESTS, strict=True):
            served = client.post("/v1/chat/completions", json={**request, "stream": True})
            assert r.file.endswith(".sse") and r.data == served.content


@pytest.mark.parametrize(
    ("api", "request_body", "check"),
    [
        ("responses", {"model": "gpt-4o", "input": "hi"}, lambda b: b["object"] == "response"),
        ("messages", ANTHROPIC,
         lambda b: b["type"] == "message"),
    ],
)  # fmt: skip
def test_other_apis(tmp_path: Path, api: str, request_body: dict[str, object], check: object) -> None:
    requests = tmp_path / "r.jsonl"
    requests.write_text(json.dumps(request_body) + "\n")
    assert main(["--requests", str(requests), "--api", api, "--out", str(tmp_path / "o")]) == 0
    files = [p for p in (tmp_path / "o").iterdir() if p.name != "manifest.json"]
    assert len(files) == 1 and callable(check) and check(json.loads(files[0].read_bytes()))
    assert main(["--requests", str(requests), "--api", api, "--stream", "--out", str(tmp_path / "s")]) == 0
    sse = next(p for p in (tmp_path / "s").iterdir() if p.suffix == ".sse").read_text()
    assert sse.startswith("event: ") and sse.endswith("\n\n")


def test_bad_lines_are_reported_and_written_as_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = tmp_path / "r.jsonl"
    requests.write_text('{"model": "gpt-4o", "messages": []}\n\nnot json\n')
    assert main(["--requests", str(requests), "--api", "chat", "--out", str(tmp_path / "o")]) == 1
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert [(e["line"], e["status"]) for e in manifest["entries"]] == [(1, 400), (3, 400)]
    body = json.loads((tmp_path / "o" / manifest["entries"][1]["file"]).read_text())
    assert body["error"]["type"] == "invalid_request_error"
    # the server's words for the same body
    assert body["error"]["message"].startswith("We could not parse the JSON body of your request (Expecting")
    err = capsys.readouterr().err
    assert "synthgpt render: line 3: We could not parse the JSON body" in err
    assert "synthgpt render: 0 of 2 requests rendered" in err


def test_stale_files_of_an_earlier_run_are_removed(tmp_path: Path) -> None:
    rules, requests = _setup(tmp_path)
    out = tmp_path / "o"
    main([str(rules), "--requests", str(requests), "--api", "chat", "--out", str(out)])
    (out / "notes.txt").write_text("mine")  # not ours: kept
    requests.write_text(json.dumps(REQUESTS[0]) + "\n")
    main([str(rules), "--requests", str(requests), "--api", "chat", "--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [file_stem(1, json.dumps(REQUESTS[0]), "chat", False) + ".json", "manifest.json", "notes.txt"]
    )


def test_progress_bar_and_cli_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, requests = _setup(tmp_path)
    code = cli_main(["render", str(rules), "--requests", str(requests), "--api", "chat",
                     "--out", str(tmp_path / "o"), "--progress"])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "\rrendering [" in err and "3/3 (100%)\n" in err
    assert main(["--requests", str(tmp_path / "missing.jsonl"), "--api", "chat", "--out", "x"]) == 2
    assert "requests file not found" in capsys.readouterr().err
    assert main(["--requests", str(requests), "--api", "nope", "--out", "x"]) == 2


def test_out_that_is_a_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    requests = tmp_path / "r.jsonl"
    requests.write_text('{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}\n')
    out = tmp_path / "out.json"
    out.write_text("keep me")
    assert main(["--requests", str(requests), "--api", "chat", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"synthgpt render: --out must be a folder, but {out} is a file\n"
    assert out.read_text() == "keep me"
