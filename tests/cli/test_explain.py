"""`synthgpt explain` as a real process: its whole output, its exit status, and that its answer is the
bytes a server sends for the same request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from synthgpt.rules.loader import load_files
from synthgpt.testing import InProcessTransport2

RULES = """\
seed: 42
rules:
  - name: refund
    match: {last_user: {contains: refund}, model: "gpt-4o*"}
    output: {text: Refunds take 5 days.}
  - name: weather
    match: {last_user: {regex: "weather in (?P<city>\\\\w+)"}}
    template: "Sunny in {{ city }}."
  - name: default
    match: always
    generate: {summary: {max_chars: 60}}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "rules.yaml").write_text(RULES)
    return tmp_path


def explain(folder: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "synthgpt", "explain", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder,
        input=stdin,
    )


def test_prints_the_trace_and_the_answer(folder: Path) -> None:
    done = explain(
        folder,
        "rules.yaml",
        "--prompt",
        "What's the weather in Lisbon?",
        "--model",
        "claude-x",
        "--api",
        "messages",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "request: request(api=messages, model='claude-x', last_user=\"What's the weather in Lisbon?\")\n"
        "seed 42, rules tried in order:\n"
        "   refund  (rules.yaml:3:5): last_user(contains='refund') is false\n"
        "=> weather  (rules.yaml:6:5): answers; captures city='Lisbon'\n"
        "answer: 200 from rule 'weather' (answer seed 16484793531648625632):\n"
        "{\n"
        '  "id": "msg_01ARV8KNmauKKEG4INg2zjI8",\n'
        '  "type": "message",\n'
        '  "role": "assistant",\n'
        '  "model": "claude-x",\n'
        '  "content": [\n'
        "    {\n"
        '      "type": "text",\n'
        '      "text": "Sunny in Lisbon."\n'
        "    }\n"
        "  ],\n"
        '  "stop_reason": "end_turn",\n'
        '  "stop_sequence": null,\n'
        '  "usage": {\n'
        '    "input_tokens": 17,\n'
        '    "cache_creation_input_tokens": 0,\n'
        '    "cache_read_input_tokens": 0,\n'
        '    "output_tokens": 6,\n'
        '    "service_tier": "standard"\n'
        "  }\n"
        "}\n"
    )
    body = {
        "model": "claude-x",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What's the weather in Lisbon?"}],
    }
    mock = load_files([folder / "rules.yaml"]).mock()
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    assert (
        json.loads(done.stdout.partition("16484793531648625632):\n")[2])
        == client.post("/v1/messages", json=body).json()
    )


def test_a_request_file_streamed_is_the_servers_stream_byte_for_byte(folder: Path) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "I want a refund"}], "stream": True}
    (folder / "req.json").write_text(json.dumps(body))
    done = explain(folder, "rules.yaml", "--request", "req.json", "--seed", "7")
    assert done.returncode == 0, done.stderr
    head, _, stream = done.stdout.partition(", streamed:\n")
    assert head.splitlines()[1:] == [
        "seed 7, rules tried in order:",
        "=> refund  (rules.yaml:3:5): answers",
        "answer: 200 from rule 'refund' (answer seed 12059165665634714337)",
    ]
    mock = load_files([folder / "rules.yaml"]).mock(seed=7)
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    assert stream == client.post("/v1/chat/completions", json=body).text.rstrip("\n") + "\n"


def test_json_output_is_the_endpoints(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"model": "gpt-4o", "input": "hello there"}
    done = explain(
        folder, "rules.yaml", "--request", "-", "--api", "responses", "--json", stdin=json.dumps(body)
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    monkeypatch.chdir(folder)  # the rules' sources read `rules.yaml:LINE:COL`, as the command named them
    mock = load_files(["rules.yaml"]).mock()
    client = httpx2.Client(transport=InProcessTransport2(mock), base_url="http://t")
    r = client.post("/_synthgpt/explain", json={"api": "responses", "request": body})
    assert printed == r.json()
    assert printed["answer"]["body"] == client.post("/v1/responses", json=body).json()


def test_the_built_in_rules_answer_without_files(folder: Path) -> None:
    done = explain(folder, "--prompt", "!MOCK_ERROR:429! hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:6] == [
        "seed 0, rules tried in order:",
        "   embeddings_triggers: api('embeddings') is false",
        "   embeddings: api('embeddings') is false",
        "=> triggers: answers",
        "answer: 429 from rule 'triggers' (answer seed 8711307083920019626):",
    ]
    assert '"code": "rate_limit_exceeded"' in done.stdout


def test_a_call_that_would_fail_exits_1_with_the_reason(folder: Path) -> None:
    (folder / "only.yaml").write_text(
        "rules:\n  - name: only\n    match: {model: x}\n    output: {text: x}\n"
    )
    done = explain(folder, "only.yaml", "--prompt", "hi")
    assert done.returncode == 1
    assert done.stdout.splitlines()[1:5] == [
        "seed 0, rules tried in order:",
        "   only  (only.yaml:2:5): model('x') is false",
        "!! no rule answers this request",
        "answer: 400:",
    ]
    (folder / "bad.json").write_text('{"model": "gpt-4o"}')
    done = explain(folder, "only.yaml", "--request", "bad.json")
    assert done.returncode == 1
    assert done.stdout.splitlines()[:2] == [
        "seed 0, rules tried in order:",
        "!! Missing required parameter: 'messages'.",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--request", "nope.json"],
            "synthgpt explain: error: cannot read nope.json: No such file or directory\n",
        ),
        (
            ["--request", "rules.yaml"],
            "synthgpt explain: error: rules.yaml: not valid JSON: Expecting value: "
            "line 1 column 1 (char 0)\n",
        ),
        (
            ["broken.yaml", "--prompt", "hi"],
            "synthgpt explain: error: broken.yaml:2:41: unknown generator "
            "'intger' — did you mean 'integer'?\n",
        ),
    ],
)
def test_bad_arguments_and_files_exit_2(folder: Path, args: list[str], message: str) -> None:
    (folder / "broken.yaml").write_text("rules:\n  - {name: a, match: always, generate: {intger: [1, 2]}}\n")
    done = explain(folder, *args)
    assert done.returncode == 2
    assert done.stderr.startswith(message)
    usage = explain(folder, "rules.yaml")
    assert usage.returncode == 2 and "one of the arguments --request --prompt is required" in usage.stderr


def test_the_guides_example_prints_what_the_guide_shows(tmp_path: Path) -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "playground.md").read_text(encoding="utf-8")
    rules = guide.split("```yaml\n# rules.yaml\n")[1].split("```")[0]
    console = guide.split("```console\n$ ")[1].split("```")[0]
    command, _, shown = console.partition("\n")
    assert command == "synthgpt explain rules.yaml --prompt \"What's the weather in Lisbon?\""
    (tmp_path / "rules.yaml").write_text(rules)
    done = explain(tmp_path, "rules.yaml", "--prompt", "What's the weather in Lisbon?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(shown)
