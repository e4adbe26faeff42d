"""The compiled rule search (`rules/dispatch.py`, `rules/text_index.py`) answers as the plain first-match
loop over every rule does, and follows changes to the rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import ModelRequest
from synthgpt.rules import matchers as m
from synthgpt.rules.dispatch import requirements
from synthgpt.rules.matchers import Matcher
from synthgpt.rules.rule import Rule, RuleSet
from synthgpt.rules.text_index import MAX_INDEXED_BYTES, MIN_INDEXED

WORDS = ["tide", "Tide", "POOL", "straße", "İstanbul", "ǅemal", "ﬁsh", "crab", "日本", "a.b"]
PIECES = [*WORDS, " ", "STRASSE", "istanbul", "FISH", "12"]
REGEXES = [r"\btide\b", r"(?P<w>po+l)", r"^crab", r"\w+ß", r"[0-9]{2}", r"日.", r"ﬁ"]


def _texts() -> st.SearchStrategy[Matcher]:
    case = st.booleans()
    contains = st.builds(lambda w, c: m.last_user(w, case_sensitive=c), st.sampled_from(WORDS), case)
    regex = st.builds(lambda r, c: m.last_user(regex=r, case_sensitive=c), st.sampled_from(REGEXES), case)
    return contains | regex


def _matchers() -> st.SearchStrategy[Matcher]:
    others = [m.api("chat"), m.api("embeddings", "messages"), m.model("gpt-4o"), m.model("gpt-*"),
              m.has_tools(), m.system("tide"), m.last_user(equals="crab"), m.always()]  # fmt: skip
    atoms = _texts() | st.sampled_from(others)
    return st.recursive(
        atoms,
        lambda inner: st.lists(inner, min_size=0, max_size=3).flatmap(
            lambda parts: st.sampled_from([m.All(*parts), m.Any_(*parts), ~m.All(*parts)])
        ),
        max_leaves=5,
    )


def _plain_first_match(rules: list[Rule], request: ModelRequest) -> tuple[str, dict[str, str]] | None:
    for rule in rules:
        caps = rule.matcher.match(request)
        if caps is not None:
            return rule.name, dict(caps)
    return None


def _request(text: str | None, api: str, model: str) -> ModelRequest:
    messages = [{"role": "system", "content": "tide"}]
    if text is not None:
        messages.append({"role": "user", "content": text})
    return ModelRequest.from_dict({"api": api, "model": model, "messages": messages})


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    specs=st.lists(_matchers(), min_size=1, max_size=12),
    padding=st.integers(0, MIN_INDEXED + 2),
    text=st.none() | st.lists(st.sampled_from(PIECES)).map("".join),
    api=st.sampled_from(["chat", "messages", "embeddings"]),
    model=st.sampled_from(["gpt-4o", "gpt-5", "claude"]),
)
def test_the_compiled_search_answers_as_asking_every_rule(
    specs: list[Matcher], padding: int, text: str | None, api: str, model: str
) -> None:
    # enough last-user rules (never matching) that the RE2 index is built, or not, before the drawn ones
    filler = [Rule(f"pad{i}", m.last_user(f"zz-never-{i}"), "x") for i in range(padding)]
    rules = [*filler, *(Rule(f"r{i}", matcher, "x") for i, matcher in enumerate(specs))]
    ruleset = RuleSet(rules)
    if padding >= MIN_INDEXED:
        assert ruleset.compiled().text_index is not None
    request = _request(text, api, model)
    expected = _plain_first_match(rules, request)
    try:
        got: Any = ruleset.resolve(request)
    except Exception:  # NoRuleMatched
        got = None
    assert (None if got is None else (got.rule.name, got.captures)) == expected


def test_requirements_are_read_from_the_matchers_data() -> None:
    assert requirements(m.api("chat") & m.model("gpt-4o")) == (frozenset({"chat"}), frozenset({"gpt-4o"}))
    assert requirements(m.api("chat") | m.api("responses")) == (frozenset({"chat", "responses"}), None)
    assert requirements(m.api("chat") | m.always()) == (None, None)
    assert requirements(m.model("gpt-*")) == (None, None)  # a glob names no exact model
    assert requirements(~m.api("chat")) == (None, None)
    assert requirements(m.Any_()) == (frozenset(), frozenset())  # an empty `any` matches nothing


def test_the_compiled_search_follows_changes_to_the_rules() -> None:
    first = Rule("first", m.last_user("hello"), "a")
    rules = RuleSet([first, Rule("rest", m.always(), "b")])
    hello = _request("hello there", "chat", "gpt-4o")
    assert rules.resolve(hello).rule.name == "first"
    first.matcher = m.last_user("goodbye")  # a rule's matcher set after it was built
    assert rules.resolve(hello).rule.name == "rest"
    rules.rules.insert(0, Rule("new", m.api("chat"), "c"))  # the public list changed in place
    assert rules.resolve(hello).rule.name == "new"
    rules.rules = [Rule("only", m.model("gpt-4o"), "d")]
    assert rules.resolve(hello).rule.name == "only"
    limited = Rule("limited", m.always(), "e")
    rules.add(limited)
    assert rules.resolve(hello).order_free
    rules.rules[0].times = 1  # `times` set later: which rule answers now depends on the calls before
    assert not rules.resolve(hello).order_free


Claimed = tuple[str, dict[str, str], int, bool]


def _resolve_by_matching(rules: RuleSet, request: ModelRequest) -> Claimed | None:
    """`RuleSet.resolve` by way of `matching`: the first whose rule has a call left (no shared counter)."""
    for rule, caps, order_free in rules.matching(request):
        index = rule._claim()
        if index is not None:
            return rule.name, dict(caps), index, order_free
    return None


def _limited_rules(padding: int) -> list[Rule]:
    filler = [Rule(f"pad{i}", m.last_user(f"zz-never-{i}"), "x") for i in range(padding)]
    return [
        *filler,
        Rule("twice", m.last_user(regex=r"(?P<w>po+l)"), "a", times=2),
        Rule("tide", m.last_user("tide"), "b"),
        Rule("once", m.api("chat"), "c", times=1),
        Rule("gpt", m.model("gpt-4o") & m.last_user(regex=r"(?P<n>[0-9]{2})"), "d"),
        Rule("rest", m.always(), "e"),
    ]


@pytest.mark.parametrize("padding", [0, MIN_INDEXED + 1])  # the RE2 index off, then on
def test_resolve_is_the_first_match_with_calls_left_as_before(padding: int) -> None:
    # several rules match each request, two with `times`; the calls use them up in turn, the rules are
    # reloaded (a new list) and one's `times` is set later: each step claims as the old search did
    texts = ["pool tide 12", "tide pool", "crab 12", "poool", "nothing", "tide", "pool 34"]
    shapes = [(api, model) for api in ("chat", "messages") for model in ("gpt-4o", "x")]
    requests = [_request(t, api, model) for t in texts for api, model in shapes]
    mine, theirs = RuleSet(_limited_rules(padding)), RuleSet(_limited_rules(padding))
    for round_ in range(3):
        for request in requests:
            try:
                r = mine.resolve(request)
                got: Any = (r.rule.name, r.captures, r.call_index, r.order_free)
            except Exception:  # NoRuleMatched
                got = None
            assert got == _resolve_by_matching(theirs, request)
        if round_ == 0:  # a reload: fresh rules, fresh counts
            mine.rules, theirs.rules = _limited_rules(padding), _limited_rules(padding)
        else:
            mine.rules[-2].times = theirs.rules[-2].times = 3


def test_resolve_without_any_rule_left_says_so() -> None:
    rules = RuleSet([Rule("once", m.always(), "a", times=1)])
    request = _request("hi", "chat", "gpt-4o")
    assert rules.resolve(request).call_index == 0
    with pytest.raises(Exception, match="used up"):
        rules.resolve(request)


# a 200 kB text, a regex of 100,000 alternatives (790 kB): each is past RE2's memory budget for a set
_WORDS = "(?i)(?:" + "|".join(f"w{i}q" for i in range(100_000)) + ")"


@pytest.mark.parametrize(("huge", "text"), [("x" * 200_000, "x" * 200_001), (_WORDS, "say W99999Q now")])
def test_a_test_too_large_for_the_re2_index_is_asked_one_by_one(huge: str, text: str) -> None:
    # the set failed to compile on the first request (re2.error, a 500 for every request; found by
    # SYNTHGPT_FUZZ_SCALE=30 of the rule-file fuzz). Such a test's rule is asked one by one, the others'
    # tests still go through the index
    test = m.last_user(regex=huge) if huge is _WORDS else m.last_user(huge)
    filler = [Rule(f"pad{i}", m.last_user(f"zz-never-{i}"), "x") for i in range(MIN_INDEXED)]
    rules = RuleSet([*filler, Rule("huge", test, "h"), Rule("tide", m.last_user("tide"), "t"),
                     Rule("rest", m.always(), "r")])  # fmt: skip
    assert rules.resolve(_request("tide pools", "chat", "gpt-4o")).rule.name == "tide"
    assert rules.resolve(_request(text, "chat", "gpt-4o")).rule.name == "huge"
    assert rules.resolve(_request("x w5 " + "x" * 50, "chat", "gpt-4o")).rule.name == "rest"
    assert rules.resolve(_request("zz-never-3", "chat", "gpt-4o")).rule.name == "pad3"
    index = rules.compiled().text_index
    assert index is not None and index.needs[MIN_INDEXED] is None and index.needs[-2] is not None


def test_a_set_past_re2s_budget_leaves_its_tests_unindexed() -> None:
    # many texts each under MAX_INDEXED_BYTES, together past what one RE2 set compiles: their rules are
    # asked one by one, and answer as asking every rule does
    long = [Rule(f"long{i}", m.last_user(f"{i:03d}" + "y" * (MAX_INDEXED_BYTES - 8)), "l") for i in range(40)]
    rules = RuleSet([*long, Rule("rest", m.always(), "r")])
    assert rules.compiled().text_index is None  # (no test left in it: the index is not used)
    assert rules.resolve(_request("031" + "y" * MAX_INDEXED_BYTES, "chat", "gpt-4o")).rule.name == "long31"
    assert rules.resolve(_request("y" * 100, "chat", "gpt-4o")).rule.name == "rest"
