"""`synthgpt check`: one line per finding, `PATH:LINE:COL: message`, exit 1 on any finding."""

# ruff: noqa: E501 - expected messages stay whole, one per line, so they read like the output

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from synthgpt.rules import matchers as m
from synthgpt.rules.check import check_files, implies, main
from synthgpt.rules.spec import SCHEMA_PATH
from tests.rules._support import BARE_LIST_TWO_TYPOS


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_clean_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        here / "ok.yaml",
        "rules: [{name: a, match: {last_user: x}, output: {text: y}}, {name: b, match: always, "
        "output: {text: z}}]\n",
    )
    assert run(capsys, "ok.yaml") == (0, [], "ok: ok.yaml\n")
    assert run(capsys, "-q", "ok.yaml") == (0, [], "")


LINTED = """
rules:
  - name: weather
    match: {last_user: weather}
    output: {text: w}
  - name: weather-again
    match: {last_user: weather}
    output: {text: w2}
  - name: weather-with-tools
    match: {last_user: weather, has_tools: true}
    output: {text: w3}
  - name: either
    match: {any: [{turn: 2}, {turn: 3}]}
    output: {text: e}
  - name: turn-three
    match: {all: [{turn: 3}, {model: gpt-4o}]}
    output: {text: t}
  - name: once
    match: {last_user: retry}
    times: 1
    output: {text: first}
  - name: retry
    match: {last_user: retry}
    output: {text: later}
  - name: fallback
    match: always
    output: {text: f}
  - name: after-fallback
    match: {model: x}
    output: {text: never}
  - name: last
    match: always
    output: {text: never}
"""


def test_lints(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(here / "rules" / "chat.yaml", LINTED)
    code, lines, err = run(capsys, "rules/chat.yaml")
    assert code == 1
    assert lines == [
        "rules/chat.yaml:6:12: rule 'weather-again' can never answer: rule 'weather' (rules/chat.yaml:2:5) has "
        "the same matcher `last_user(contains='weather')`",
        "rules/chat.yaml:9:12: rule 'weather-with-tools' can never answer: every request it matches is taken "
        "first by rule 'weather' (rules/chat.yaml:2:5), `last_user(contains='weather')`",
        "rules/chat.yaml:15:12: rule 'turn-three' can never answer: every request it matches is taken first by "
        "rule 'either' (rules/chat.yaml:11:5), `turn(2) | turn(3)`",
        "rules/chat.yaml:25:12: rule 'fallback' matches every request, so the rules after it never answer "
        "('after-fallback', 'last'); move it last",
    ]
    assert err == "4 problems found\n"


def test_errors_from_several_files_in_command_line_order(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(here / "b.yaml", "rules:\n  - {name: b, match: alway, output: {text: x}}\n")
    write(here / "a.yaml", "rules:\n  - {name: a, match: always, generate: {intger: 1}}\n  - {name: c}\n")
    code, lines, _ = run(capsys, "b.yaml", "./a.yaml")
    assert code == 1
    assert lines == [
        "b.yaml:2:22: unknown matcher 'alway' — did you mean 'always'?",
        "./a.yaml:2:41: unknown generator 'intger' — did you mean 'integer'?",
        "./a.yaml:3:5: a rule needs `match`",
    ]


def test_files_together_or_separately(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        write(
            here / f"{name}.yaml",
            f"seed: {ord(name)}\nrules: [{{name: default, match: always, generate: prose}}]\n",
        )
    code, lines, _ = run(capsys, "a.yaml", "b.yaml")
    assert (code, lines) == (
        1,
        [
            "b.yaml:1:7: `seed` is set differently in a.yaml:1:7; set it in one file only",
            "b.yaml:2:16: two rules are named 'default' (the first at a.yaml:2:9); rule names must be unique",
        ],
    )
    assert run(capsys, "--separately", "a.yaml", "b.yaml")[:2] == (0, [])


def test_usage_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2 and err.endswith("synthgpt check: error: give at least one RULE_FILE\n")
    code, lines, _ = run(capsys, "--schema")
    assert code == 0
    assert json.loads("\n".join(lines)) == json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_missing_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "nope.yaml")[:2] == (
        1,
        ["nope.yaml:1:1: cannot read the rule file: No such file or directory"],
    )


def test_a_finding_quoting_a_line_break_stays_one_line(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a generator's keys '' and '\r' were quoted as they are: the carriage return split the finding in
    # two, and the second line named no file (found by SYNTHGPT_FUZZ_SCALE=50 of the rule-file fuzz)
    write(here / "r.yaml", 'rules:\n  - name: r\n    match: always\n    generate: {"": 1, "\\r": 2}\n')
    assert run(capsys, "r.yaml")[:2] == (
        1,
        ["r.yaml:4:15: a generator is one `{name: arguments}` pair, got several keys (, \\r); for an object "
         "of fields write `{objects: {field: generator, …}}`"],
    )  # fmt: skip


def test_check_files_api(here: Path) -> None:
    write(
        here / "a.yaml",
        "rules: [{name: a, match: always, output: {text: x}}, {name: b, match: always, output: {text: y}}]\n",
    )
    [finding] = check_files(["a.yaml"])
    assert (finding.path, finding.line, finding.col) == ("a.yaml", 1, 26)
    assert str(finding) == (
        "a.yaml:1:26: rule 'a' matches every request, so the rules after it never answer ('b'); move it last"
    )


@pytest.mark.parametrize(
    ("later", "earlier", "expected"),
    [
        (m.last_user("a") & m.has_tools(), m.last_user("a"), True),
        (m.last_user("a"), m.last_user("a") & m.has_tools(), False),
        (m.turn(2), m.turn(2) | m.turn(3), True),
        (m.turn(2) | m.turn(3), m.turn(2), False),
        (m.turn(2) | m.turn(3), m.turn(3) | m.turn(2), True),
        (m.model("x") & m.turn(1) & m.has_tools(), m.has_tools() & m.model("x"), True),
        (m.model("x"), m.always(), True),
        (m.always(), m.model("x"), False),
        (~m.has_tools(), ~m.has_tools(), True),
        (m.model("gpt-4o"), m.model("gpt-4o*"), False),  # globs are beyond the simple cases
    ],
)
def test_implies(later: m.Matcher, earlier: m.Matcher, expected: bool) -> None:
    assert implies(later, earlier) is expected


def test_through_the_synthgpt_command(here: Path) -> None:
    write(here / "bad.yaml", "rules:\n  - {name: a, match: always, generate: {integer: [9, 3]}}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "synthgpt", "check", "bad.yaml"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (1, "bad.yaml:2:41: `integer` takes `lo` <= `hi`, got 9 > 3\n")


def test_bare_list_findings_are_each_reported_at_their_line(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same message twice, on different lines: both are findings (a bare list once put both at 1:1)
    write(here / "list.yaml", BARE_LIST_TWO_TYPOS)
    assert run(capsys, "list.yaml") == (1, [
        "list.yaml:5:11: unknown matcher 'last_usr' — did you mean 'last_user'?",
        "list.yaml:8:11: unknown matcher 'last_usr' — did you mean 'last_user'?",
    ], "2 problems found\n")


def test_count_matchers_are_checked_where_written(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        here / "counts.yaml",
        """
        rules:
          - name: a
            match: {turn: {min: 2, max: 1}}
            output: {text: x}
          - name: b
            match: {round: {eq: 1, min: 0}}
            output: {text: y}
          - name: c
            match: {turn: -1}
            output: {text: z}
        """,
    )
    assert run(capsys, "counts.yaml") == (1, [
        "counts.yaml:3:13: turn: min must be <= max, got min=2 and max=1",
        "counts.yaml:6:13: round: give eq or min=/max=, not both",
        "counts.yaml:9:13: turn: eq must be a whole number >= 0, got -1",
    ], "3 problems found\n")


def test_spec_module_writes_checks_and_helps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from synthgpt.rules import spec

    target = tmp_path / "rulefile.schema.json"
    monkeypatch.setattr(spec, "SCHEMA_PATH", target)
    assert spec.main(["--check"]) == 1 and not target.exists()  # missing: stale, and nothing written
    assert capsys.readouterr().err == f"{target} is stale: run `python -m synthgpt.rules.spec` to write it\n"
    with pytest.raises(SystemExit) as info:
        spec.main(["--help"])
    assert info.value.code == 0 and not target.exists()
    assert capsys.readouterr().out.startswith("usage: python -m synthgpt.rules.spec [-h] [--check]\n")
    assert spec.main([]) == 0 and target.read_text(encoding="utf-8") == spec.render_schema()
    assert capsys.readouterr().out == f"wrote {target}\n"
    assert spec.main(["--check"]) == 0
    assert capsys.readouterr().out == f"{target} is up to date\n"
    target.write_text("{}\n", encoding="utf-8")
    assert spec.main(["--check"]) == 1 and target.read_text(encoding="utf-8") == "{}\n"


def test_shipped_schema_is_current() -> None:
    result = subprocess.run([sys.executable, "-m", "synthgpt.rules.spec", "--check"], capture_output=True,
                            text=True, check=False)
    assert (result.returncode, result.stdout) == (0, f"{SCHEMA_PATH} is up to date\n")
