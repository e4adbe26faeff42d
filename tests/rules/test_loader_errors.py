"""Every error a rule file can get, with its exact `PATH:LINE:COL: message`: the messages are interface."""

# ruff: noqa: E501 - expected messages stay whole, one per line, so they read like the output

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from synthgpt.errors import SynthGPTError
from synthgpt.rules.loader import RuleFileError, load_files, load_report, load_text
from tests.rules._support import BARE_LIST_TWO_TYPOS


def errors_of(text: str, path: str = "rules.yaml") -> list[str]:
    with pytest.raises(RuleFileError) as info:
        load_text(textwrap.dedent(text).lstrip("\n"), path)
    return [str(e) for e in info.value.errors]


def rule(body: str) -> str:
    """A file with one rule `r` whose body lines are `body` (indented under the rule)."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    return "rules:\n  - name: r\n" + "".join(f"    {line}\n" for line in lines)


# The issue's own examples, verbatim.
def test_issue_examples() -> None:
    text = """\
        seed: 1
        rules:
          - name: age
            match: always
            generate: {integer: [9, 3]}
          - name: typo
            match: always
            generate:
              objects:
                id: {id: user}
                n:
                  lists:
                    element:
                      intger: [1, 2]
        """
    assert errors_of(text) == [
        "rules.yaml:5:16: `integer` takes `lo` <= `hi`, got 9 > 3",
        "rules.yaml:14:15: unknown generator 'intger' — did you mean 'integer'?",
    ]


ERRORS: list[tuple[str, str, list[str]]] = [
    # -- syntax --
    (
        "yaml syntax",
        "rules: [\n  a: b\n",
        ["rules.yaml:3:1: invalid YAML: expected ',' or ']', but got '<stream end>'"],
    ),
    (
        "yaml tag",
        "seed: !nope 1\n",
        ["rules.yaml:1:7: invalid YAML value: could not determine a constructor for the tag '!nope'"],
    ),
    ("yaml duplicate key", "seed: 1\nseed: 2\n", ["rules.yaml:2:1: duplicate key 'seed'"]),
    ("yaml complex key", "? [a]\n: 1\n", ["rules.yaml:1:3: keys must be plain values"]),
    (
        "yaml bad merge",
        "rules:\n  - {<<: 1, name: r}\n",
        ["rules.yaml:2:5: `<<` merges a mapping or a list of mappings"],
    ),
    (
        "not a mapping",
        "42\n",
        [
            "rules.yaml:1:1: a rule file is a mapping with `rules:` (and `seed`, `clock`, `models`, `include`), "
            "or a list of rules"
        ],
    ),
    ("rules not a list", "rules: {name: r}\n", ["rules.yaml:1:8: `rules` is a list of rules"]),
    (
        "rule not a mapping",
        "rules: [r]\n",
        ["rules.yaml:1:9: a rule is a mapping with `name`, `match` and an answer"],
    ),
    # -- top level --
    ("unknown top key", "sed: 1\n", ["rules.yaml:1:1: unknown key 'sed' — did you mean 'seed'?"]),
    ("unknown top key, no hint", "zzz: 1\n", ["rules.yaml:1:1: unknown key 'zzz'"]),
    (
        "seed type",
        "seed: many\n",
        [
            "rules.yaml:1:7: `seed`: input should be a valid integer, unable to parse string as an integer, got 'many'"
        ],
    ),
    (
        "bad clock",
        "clock: hourly\n",
        [
            "rules.yaml:1:8: bad clock 'hourly': use fixed, fixed:<unix-seconds>, step:<start>[:<step>] or system"
        ],
    ),
    (
        "clock type",
        "clock: [1]\n",
        ["rules.yaml:1:8: `clock` is a string like `fixed:1700000000` or a number, got [1]"],
    ),
    ("models type", "models: [1]\n", ["rules.yaml:1:10: `models[0]`: input should be a valid string, got 1"]),
    # -- rule shape --
    (
        "missing name",
        "rules:\n  - {match: always, output: {text: x}}\n",
        ["rules.yaml:2:5: a rule needs `name`"],
    ),
    ("missing match", "rules:\n  - {name: r, output: {text: x}}\n", ["rules.yaml:2:5: a rule needs `match`"]),
    (
        "unknown rule key",
        rule("match: always\ngenrate: prose\n"),
        ["rules.yaml:4:5: unknown key 'genrate' — did you mean 'generate'?"],
    ),
    (
        "unknown nested key",
        rule("match: always\noutput: {txt: x}\n"),
        ["rules.yaml:4:14: unknown key 'txt' — did you mean 'text'?"],
    ),
    (
        "unknown stream key",
        rule("match: always\noutput: {text: x}\nstream: {fault: []}\n"),
        ["rules.yaml:5:14: unknown key 'fault' — did you mean 'faults'?"],
    ),
    (
        "missing tool name",
        rule("match: always\noutput: {tool_calls: [{arguments: {}}]}\n"),
        ["rules.yaml:4:27: `output.tool_calls[0]` needs `name`"],
    ),
    (
        "bad fault",
        rule("match: always\noutput: {text: x}\nstream: {faults: [{kind: boom}]}\n"),
        [
            "rules.yaml:5:30: `stream.faults[0].kind`: input should be 'disconnect', 'truncate', 'stream_error', "
            "'malformed' or 'unknown_item', got 'boom'"
        ],
    ),
    (
        "bad status",
        rule("match: always\nerror: {status: 200}\n"),
        ["rules.yaml:4:21: `error.status`: input should be greater than or equal to 400, got 200"],
    ),
    (
        "bad times",
        rule("match: always\noutput: {text: x}\ntimes: 0\n"),
        ["rules.yaml:5:12: `times`: input should be greater than or equal to 1, got 0"],
    ),
    (
        "bad reasoning",
        rule("match: always\noutput: {text: x}\nreasoning: maybe\n"),
        ["rules.yaml:5:16: `reasoning`: input should be 'auto', True or False, got 'maybe'"],
    ),
    (
        "bad arguments",
        rule("match: always\noutput: {tool_calls: [{name: f, arguments: 3}]}\n"),
        ["rules.yaml:4:48: `arguments` is a JSON object or JSON text"],
    ),
    (
        "two answers",
        rule("match: always\noutput: {text: x}\ngenerate: prose\n"),
        ["rules.yaml:5:5: a rule has one answer: got both `output` and `generate`"],
    ),
    (
        "no answer",
        rule("match: always\n"),
        [
            "rules.yaml:2:5: rule 'r' has no answer: give `output`, `generate`, `template`, `schema`, `script` or "
            "`sequence`, or an `error`"
        ],
    ),
    (
        "step without answer",
        rule("match: always\nscript: [{stream: {}}]\n"),
        [
            "rules.yaml:4:14: a step has no answer: give `output`, `generate`, `template`, `schema`, or an `error`"
        ],
    ),
    (
        "empty script",
        rule("match: always\nscript: []\n"),
        ["rules.yaml:4:5: `script` needs at least one step"],
    ),
    (
        "nested steps",
        rule("match: always\nsequence: [{script: []}]\n"),
        ["rules.yaml:4:17: unknown key 'script'"],
    ),
    (
        "overrides alone",
        rule("match: always\ngenerate: prose\noverrides: {a: 1}\n"),
        [
            "rules.yaml:5:5: `overrides` goes with `schema`; for the request's own schema write "
            "`generate: {from_request_schema: {overrides: …}}`"
        ],
    ),
    (
        "duplicate names",
        "rules:\n  - {name: r, match: always, output: {text: x}}\n"
        "  - {name: r, match: always, output: {text: y}}\n",
        ["rules.yaml:3:12: two rules are named 'r' (the first at rules.yaml:2:5); rule names must be unique"],
    ),
    # -- matchers --
    (
        "unknown matcher",
        rule("match: {last_usr: hi}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: unknown matcher 'last_usr' — did you mean 'last_user'?"],
    ),
    (
        "unknown bare matcher",
        rule("match: alway\noutput: {text: x}\n"),
        ["rules.yaml:3:12: unknown matcher 'alway' — did you mean 'always'?"],
    ),
    (
        "matcher argument",
        rule("match: {turn: {mn: 2}}\noutput: {text: x}\n"),
        ["rules.yaml:3:20: `turn` has no argument 'mn' — did you mean 'min'?"],
    ),
    (
        "matcher rule error",
        rule("match: {turn: null}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: turn: give eq, min= or max="],
    ),
    (
        "matcher two tests",
        rule("match: {last_user: {contains: a, regex: b}}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: last_user: give one of contains=, regex=, equals=, glob=; got contains, regex"],
    ),
    (
        "matcher bad regex",
        rule("match: {last_user: {regex: '('}}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: last_user: bad regex '(': missing ), unterminated subpattern at position 0"],
    ),
    (
        "matcher unknown api",
        rule("match: {api: chatt}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: unknown api 'chatt' — did you mean 'chat'?"],
    ),
    (
        "matcher too many",
        rule("match: {turn: [1, 2]}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: `turn` takes at most 1 argument, got 2"],
    ),
    (
        "empty matcher list",
        rule("match: []\noutput: {text: x}\n"),
        ["rules.yaml:3:12: an empty list matches nothing useful: write `always` or some matchers"],
    ),
    (
        "empty matcher mapping",
        rule("match: {}\noutput: {text: x}\n"),
        ["rules.yaml:3:12: an empty matcher: write `always` or `{name: arguments}`"],
    ),
    (
        "matcher scalar",
        rule("match: 5\noutput: {text: x}\n"),
        ["rules.yaml:3:12: a matcher is a name, `{name: arguments}` or a list of matchers, got 5"],
    ),
    (
        "all needs a list",
        rule("match: {all: always}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: `all` takes a non-empty list of matchers"],
    ),
    (
        "not needs a matcher",
        rule("match: {not: null}\noutput: {text: x}\n"),
        ["rules.yaml:3:13: `not` takes a matcher"],
    ),
    # -- generators --
    (
        "unknown generator",
        rule("match: always\ngenerate: {intger: [1, 2]}\n"),
        ["rules.yaml:4:16: unknown generator 'intger' — did you mean 'integer'?"],
    ),
    (
        "unknown bare generator",
        rule("match: always\ngenerate: Hello there\n"),
        [
            "rules.yaml:4:15: unknown generator 'Hello there' (a fixed value is `{just: …}`, fixed text "
            "`output: {text: …}`)"
        ],
    ),
    (
        "generator several keys",
        rule("match: always\ngenerate: {a: 1, b: 2}\n"),
        [
            "rules.yaml:4:15: a generator is one `{name: arguments}` pair, got several keys (a, b); for an object "
            "of fields write `{objects: {field: generator, …}}`"
        ],
    ),
    (
        "generator scalar",
        rule("match: always\ngenerate: 5\n"),
        ["rules.yaml:4:15: a generator is a name or `{name: arguments}`, got 5; a fixed value is {just: …}"],
    ),
    (
        "generator argument",
        rule("match: always\ngenerate: {integer: {low: 1}}\n"),
        ["rules.yaml:4:26: `integer` has no argument 'low' — did you mean 'lo'?"],
    ),
    (
        "generator argument, no hint",
        rule("match: always\ngenerate: {integer: {zzz: 1}}\n"),
        ["rules.yaml:4:26: `integer` has no argument 'zzz' (it takes lo, hi)"],
    ),
    (
        "generator takes none",
        rule("match: always\ngenerate: {uuid: {x: 1}}\n"),
        ["rules.yaml:4:23: `uuid` has no argument 'x' (it takes none)"],
    ),
    (
        "generator too many",
        rule("match: always\ngenerate: {integer: [1, 2, 3]}\n"),
        ["rules.yaml:4:16: `integer` takes at most 2 arguments, got 3"],
    ),
    (
        "generator missing",
        rule("match: always\ngenerate: {from_schema: {overrides: {}}}\n"),
        ["rules.yaml:4:16: `from_schema` needs argument 'schema'"],
    ),
    (
        "generator bounds",
        rule("match: always\ngenerate: {integer: [9, 3]}\n"),
        ["rules.yaml:4:16: `integer` takes `lo` <= `hi`, got 9 > 3"],
    ),
    (
        "generator type error",
        rule("match: always\ngenerate: {words: [a, 3]}\n"),
        ["rules.yaml:4:16: `words` argument `min_words`: input should be a valid integer, unable to parse "
         "string as an integer, got str 'a'"],
    ),
    (
        "nested generator",
        rule("match: always\ngenerate: {lists: [{fake: nmae}]}\n"),
        ["rules.yaml:4:25: unknown faker provider 'nmae' — did you mean 'name'?"],
    ),
    (
        "objects mapping",
        rule("match: always\ngenerate: {objects: [1]}\n"),
        ["rules.yaml:4:16: `objects` takes a mapping of field names to generators"],
    ),
    (
        "schema error",
        rule("match: always\nschema: {type: object, properties: {a: {type: strng}}}\n"),
        [
            "rules.yaml:4:44: schema at '/properties/a': type must be one of null, boolean, integer, number, string, "
            "array, object, or a list of them, got 'strng'"
        ],
    ),
    (
        "nested schema error",
        rule("match: always\ngenerate:\n  from_schema:\n    schema: {type: array, items: {minimum: x}}\n"),
        ["rules.yaml:6:38: schema at '/items': minimum must be a number, got 'x'"],
    ),
    (
        "template syntax",
        rule("match: always\ntemplate: '{{ x'\n"),
        [
            "rules.yaml:4:15: template syntax error at line 1: unexpected end of template, expected 'end of print "
            "statement'."
        ],
    ),
    (
        "template undefined",
        rule("match: always\ntemplate: '{{ last_usr }}'\n"),
        ["rules.yaml:4:15: template uses undefined name 'last_usr' — did you mean 'last_user'?"],
    ),
    (
        "template undefined, no hint",
        rule("match: always\ntemplate: '{{ zzzq }}'\n"),
        [
            "rules.yaml:4:15: template uses undefined name 'zzzq' (names come from the built-ins, the generators "
            "and the regex groups of the rule's matcher)"
        ],
    ),
    (
        "template capture typo",
        rule("match: {last_user: {regex: '(?P<city>\\w+)'}}\ntemplate: '{{ cty }}'\n"),
        ["rules.yaml:4:15: template uses undefined name 'cty' — did you mean 'city'?"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_message(text: str, expected: list[str]) -> None:
    assert errors_of(text) == expected


JSON_ERRORS: list[tuple[str, str, str]] = [
    ("empty value", '{"seed": }', "rules.json:1:10: invalid JSON: expected a value"),
    ("trailing data", '{"seed": 1} x', "rules.json:1:13: invalid JSON: extra data after the document"),
    ("bad key", "{seed: 1}", "rules.json:1:2: invalid JSON: expected a string key"),
    ("no colon", '{"seed" 1}', "rules.json:1:9: invalid JSON: expected ':' after a key"),
    ("object end", '{"seed": 1 "x": 2}', "rules.json:1:12: invalid JSON: expected ',' or '}'"),
    ("array end", '{"models": ["a" "b"]}', "rules.json:1:17: invalid JSON: expected ',' or ']'"),
    ("end of text", '{"models": [', "rules.json:1:13: invalid JSON: unexpected end of the document"),
    ("string", '{"models": ["a\nb"]}', "rules.json:1:15: invalid JSON: invalid control character at"),
    ("duplicate key", '{"seed": 1,\n "seed": 2}', "rules.json:2:2: duplicate key 'seed'"),
    ("too deep", "[" * 201 + "]" * 201, "rules.json:1:201: invalid JSON: nesting deeper than 200 levels"),
    (
        "unknown key",
        '{"rules": [{"name": "r", "match": "always", "ouput": {}}]}',
        "rules.json:1:45: unknown key 'ouput' — did you mean 'output'?",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [e[1:] for e in JSON_ERRORS], ids=[e[0] for e in JSON_ERRORS])
def test_json_error_message(text: str, expected: str) -> None:
    assert errors_of(text, "rules.json") == [expected]


def test_yaml_nesting_limit() -> None:
    assert errors_of("a: " + "[" * 201 + "]" * 201 + "\n") == [
        "rules.yaml:1:203: nesting deeper than 200 levels"
    ]


def test_error_type_and_fields() -> None:
    with pytest.raises(RuleFileError) as info:
        load_text("seed: 1\nsed: 2\n", "dir/rules.yaml")
    err = info.value
    assert isinstance(err, SynthGPTError)
    assert (err.path, err.line, err.col, err.message) == (
        "dir/rules.yaml",
        2,
        1,
        "unknown key 'sed' — did you mean 'seed'?",
    )
    assert str(err) == "dir/rules.yaml:2:1: unknown key 'sed' — did you mean 'seed'?"


# ---------------------------------------------------------------------------------------- file errors


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(RuleFileError) as info:
        load_files([missing])
    assert str(info.value) == f"{missing}:1:1: cannot read the rule file: No such file or directory"


def test_missing_include_and_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("include: [b.yaml, gone.yaml]\n")
    (tmp_path / "b.yaml").write_text("seed: 1\ninclude: c.yaml\n")
    (tmp_path / "c.yaml").write_text("include:\n  - a.yaml\n")
    with pytest.raises(RuleFileError) as info:
        load_files(["a.yaml"])
    assert [str(e) for e in info.value.errors] == [
        "c.yaml:2:5: include cycle: a.yaml -> b.yaml -> c.yaml -> a.yaml",
        "a.yaml:1:19: cannot read included file 'gone.yaml': No such file or directory",
    ]


def test_conflicting_seeds_across_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("seed: 1\n")
    (tmp_path / "b.yaml").write_text("seed: 1\nclock: fixed\n")
    (tmp_path / "c.yaml").write_text("\nseed: 2\nclock: fixed:5\n")
    assert load_files(["a.yaml", "b.yaml"]).seed == 1  # the same value twice is fine
    with pytest.raises(RuleFileError) as info:
        load_files(["a.yaml", "b.yaml", "c.yaml"])
    assert [str(e) for e in info.value.errors] == [
        "c.yaml:2:7: `seed` is set differently in a.yaml:1:7; set it in one file only",
        "c.yaml:3:8: `clock` is set differently in b.yaml:2:8; set it in one file only",
    ]


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        # plurals, short keys and keys two slips away are data, even when close to a generator name
        ("{items: [1, 2]}", "objects({'items': just([1, 2])})"),
        ("{choices: [a]}", "objects({'choices': just(['a'])})"),
        ("{ids: [1]}", "objects({'ids': just([1])})"),
        ("{nmber: 1}", None),
        ("{jsut: 1}", None),
    ],
)
def test_near_miss_of_a_generator_name_in_data(data: str, kept: str | None) -> None:
    text = rule(f"match: always\ngenerate: {{objects: {{n: {data}}}}}\n")
    if kept is None:
        [message] = errors_of(text)
        assert message.startswith("rules.yaml:4:30: unknown generator ")
    else:
        loaded = load_text(text, "rules.yaml")
        assert repr(loaded.ruleset.rules[0].generator) == f"objects({{'n': {kept}}})"


def test_load_report_gives_every_error(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text(rule("match: always\ngenerate: {objects: {n: {intger: [1, 2]}}}\n") + "  - {name: s}\n")
    loaded, errors = load_report([p])
    assert loaded is None
    assert [(e.line, e.message) for e in errors] == [
        (4, "unknown generator 'intger' — did you mean 'integer'?"),
        (5, "a rule needs `match`"),
    ]


# A file that is a bare list of rules keeps every position: errors name the line they are on.
def test_bare_list_errors_keep_their_positions_yaml() -> None:
    assert errors_of(BARE_LIST_TWO_TYPOS) == [
        "rules.yaml:5:11: unknown matcher 'last_usr' — did you mean 'last_user'?",
        "rules.yaml:8:11: unknown matcher 'last_usr' — did you mean 'last_user'?",
    ]


def test_bare_list_errors_keep_their_positions_json() -> None:
    text = """\
        [
          {"name": "a", "match": "always", "output": {"text": "x"}},
          {"name": "b", "match": "always", "output": {"text": "y"}},
          {"name": "c", "match": "always", "output": {"text": "z"}},
          {"name": "d",
           "match": "always",
           "generate": {"integer": [9, 3]}}
        ]
        """
    assert errors_of(text, "rules.json") == ["rules.json:7:17: `integer` takes `lo` <= `hi`, got 9 > 3"]
