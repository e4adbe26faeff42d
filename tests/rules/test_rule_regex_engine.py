"""Rule regexes run in linear time (RE2): no message makes a matcher backtrack for seconds, constructs RE2
lacks are a located `check` error naming the fix, and Python's Unicode classes keep their meaning."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import httpx
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.errors import RuleError
from synthgpt.model import ModelRequest
from synthgpt.rules.check import check_files
from synthgpt.server import create_app

EVIL = "(a+)+$"
MESSAGE = "a" * 26 + "!"  # 27 characters: Python's `re` took 5-45 s on this


async def test_a_catastrophic_regex_answers_at_once() -> None:
    rules = [Rule("evil", m.last_user(regex=EVIL), "matched"), Rule("rest", m.always(), "not matched")]
    app = create_app(MockGPT(rules=rules, seed=0))
    started = time.perf_counter()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        body = {"model": "m", "messages": [{"role": "user", "content": MESSAGE}]}
        r = await c.post("/v1/chat/completions", json=body)
    assert time.perf_counter() - started < 1.0
    assert r.json()["choices"][0]["message"]["content"] == "not matched"


def test_a_schema_pattern_checked_against_another_branch_is_linear_too() -> None:
    schema = {"oneOf": [{"type": "string", "pattern": "^a{26}!$"}, {"type": "string", "pattern": "^(a+)+$"}]}
    started = time.perf_counter()
    assert g.from_schema(schema).example(3) == MESSAGE  # a seed that draws the first branch
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("regex", "text", "captures"),
    [
        (r"^hi (?P<who>\w+)", "HI Zoë, how are you", {"who": "Zoë"}),
        (r"(?P<n>\d+) items", "٣ items", {"n": "٣"}),  # Unicode digits, as in Python
        (r"école", "ÉCOLE", {}),  # case folding beyond ASCII
        (r"[\w-]+@(?P<host>\S+)", "mail to ané-b@example.org now", {"host": "example.org"}),
        (r"caf\u00e9", "café", {}),
    ],
)
def test_python_meanings_are_kept(regex: str, text: str, captures: dict[str, str]) -> None:
    request = ModelRequest.from_dict({"messages": [{"role": "user", "content": text}]})
    assert m.last_user(regex=regex).match(request) == captures


@pytest.mark.parametrize(
    ("regex", "construct"),
    [
        (r"(a)\1", "a backreference"),
        (r"(?P<x>a)(?P=x)", "a backreference"),
        (r"price(?= EUR)", "a lookahead or lookbehind"),
        (r"(?<!not )ok", "a negative lookahead or lookbehind"),
        (r"a++", "a possessive quantifier"),
        (r"(?>ab)", "an atomic group"),
        (r"end\Z", "\\Z"),
    ],
)
def test_constructs_re2_lacks_are_refused_when_built(regex: str, construct: str) -> None:
    with pytest.raises(RuleError) as info:
        m.last_user(regex=regex)
    assert f"uses {construct}, which rule regexes do not support" in str(info.value)


def test_check_locates_an_unsupported_regex(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            rules:
              - name: twice
                match: {last_user: {regex: "(\\\\w+) \\\\1"}}
                output: {text: "you repeated yourself"}
            """
        ),
        encoding="utf-8",
    )
    [finding] = check_files([str(path)])
    assert (finding.line, finding.col) == (3, 13)
    assert finding.message == (
        "last_user: regex '(\\\\w+) \\\\1' uses a backreference, which rule regexes do not support (they "
        "run on RE2, in time linear in the text, so no message can stall the server); match the repeated "
        "part as its own group"
    )
