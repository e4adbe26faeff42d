"""`synthgpt check RULE_FILES…`: validate rule files and lint them for rules that can never answer.

The files are checked together, as `synthgpt serve` would load them (rule names unique across them, one
`seed`); `--separately` checks each file on its own. Every finding is one line `PATH:LINE:COL: message`
(the path as given on the command line), and every finding is an error: the exit code is 1 when there
is any, 0 when there is none, 2 for bad usage. What is reported:
- everything loading reports (syntax, unknown keys and names, bad arguments, undefined template names),
  all of them rather than the first;
- a catch-all rule (`always`) that is not last: the rules after it never answer;
- a rule whose matcher is the same as an earlier rule's, or implies it (the earlier one's matcher plus
  more conditions, or one branch of an earlier `any`): it never answers.
A rule with `times` does not hide the rules after it: once used up, they answer.

Warnings are printed `PATH:LINE:COL: warning: message` and leave the exit code 0 (1 with `--strict`):
- requests no rule matches would get `400 no_rule_matched`: neither `include: builtin` (or
  `builtin:defaults`) nor a last rule with `match: always` (an empty file too).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .loader import LoadedRules, load_report
from .matchers import All, Always, Any_, Matcher
from .rule import Rule

__all__ = ["Finding", "check_files", "check_report", "implies", "lint", "main", "unanswered_warning"]


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    message: str
    warning: bool = False

    def __str__(self) -> str:
        message = self.message.translate(_ONE_LINE)
        return f"{self.path}:{self.line}:{self.col}: {'warning: ' if self.warning else ''}{message}"


# What ends a line for editors and `str.splitlines`, escaped: a finding is one line even where its message
# quotes a rule file's key or value holding one ("\r", "\u2028")
_ONE_LINE = {c: repr(chr(c))[1:-1] for c in (*range(32), 0x7F, 0x85, 0x2028, 0x2029)}


def check_files(paths: Sequence[str]) -> list[Finding]:
    """Every error for these files, in file order, then line order."""
    return check_report(paths)[0]


def check_report(paths: Sequence[str]) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) for these files, each in file order, then line order."""
    loaded, errors = load_report(paths)
    found = [Finding(e.path, e.line, e.col, e.message) for e in errors]
    if loaded is None:
        return _ordered(found, paths), []
    warning = unanswered_warning(loaded.ruleset)
    warnings = [Finding(paths[-1], 1, 1, warning, warning=True)] if warning and paths else []
    return _ordered(found + lint(loaded), paths), warnings


def unanswered_warning(rules: Iterable[Rule]) -> str | None:
    """Why some requests would get `400 no_rule_matched` with these rules, or None if none would.

    A rule matching every request (`always`, no `times`) answers them all; `include: builtin` brings one,
    the built-in `default` rule.
    """
    rules = list(rules)
    if any(_is_always(r.matcher) and r.times is None for r in rules):
        return None
    what = ("there are no rules, so every request gets" if not rules
            else "no rule matches every request, so a request none matches gets")  # fmt: skip
    return (f"{what} 400 no_rule_matched: add `include: builtin` to keep the built-in answers as the "
            "fallback, or end with a rule that has `match: always`")


def _ordered(findings: list[Finding], paths: Sequence[str]) -> list[Finding]:
    rank = {p: i for i, p in enumerate(paths)}
    unique = list(dict.fromkeys(findings))
    return sorted(unique, key=lambda f: (rank.get(f.path, len(rank)), f.path, f.line, f.col, f.message))


def lint(loaded: LoadedRules) -> list[Finding]:
    """Rules hidden by an earlier rule that always answers first."""
    rules = list(loaded.ruleset)
    out: list[Finding] = []
    for i, j in enumerate(_first_hiding(rules)):
        rule = rules[i]
        origin = loaded.origins.get(rule.name)
        if origin is None or j is None:  # a built-in rule (`include: builtin`): not the file's to fix
            continue
        earlier = rules[j]
        if _is_always(earlier.matcher):
            continue  # reported once, at the catch-all itself (below)
        where = loaded.origins.get(earlier.name, "the built-in rules")
        if rule.matcher == earlier.matcher:
            why = f"rule {earlier.name!r} ({where}) has the same matcher `{earlier.matcher!r}`"
        else:
            why = (f"every request it matches is taken first by rule {earlier.name!r} ({where}), "
                   f"`{earlier.matcher!r}`")
        out.append(Finding(origin.path, origin.match_line, origin.match_col,
                           f"rule {rule.name!r} can never answer: {why}"))  # fmt: skip
    for i, rule in enumerate(rules):
        if not _is_always(rule.matcher) or rule.times is not None or i == len(rules) - 1:
            continue
        origin = loaded.origins.get(rule.name)
        if origin is None:
            continue
        after = [r.name for r in rules[i + 1 :]]
        names = ", ".join(map(repr, after[:5])) + (f" and {len(after) - 5} more" if len(after) > 5 else "")
        own = [r for r in rules[i + 1 :] if r.name in loaded.origins]
        fix = "move it last" if own else (
            "the built-in answers are the fallback after every rule: include `builtin:triggers` instead of "
            "`builtin` to keep only the triggers")  # fmt: skip
        out.append(Finding(
            origin.path, origin.match_line, origin.match_col,
            f"rule {rule.name!r} matches every request, so the rules after it never answer ({names}); {fix}",
        ))
        break  # the rules after the first catch-all, other catch-alls included, are covered by this one
    return out


def _first_hiding(rules: Sequence[Rule]) -> list[int | None]:
    """For each rule, the first earlier rule without `times` whose matcher it implies (None: no such rule).

    Asking `implies` of every earlier rule made linting quadratic (20,000 rules: minutes). `implies(a, b)`
    only ever succeeds on a pair of equal sub-matchers (or on `always()`), where the one of
    `a` is `a` or one of its `all`/`any` parts, at any depth, and the one of `b` is reached from `b` through
    every branch of an `any` but only one part of an `all` (all of them must hold, so any one of them must
    be implied). So each earlier rule is filed under those sub-matchers (matchers compare and hash by
    value), its *anchors*, choosing for each `all` the part whose anchors are rarest; a rule asks `implies`
    only of the earlier rules filed under its own sub-matchers. Same answers, a handful of comparisons per
    rule.
    """
    keys: dict[int, tuple[object, ...]] = {}

    def text(m: Matcher) -> tuple[object, ...]:
        k = keys.get(id(m))
        if k is None:
            k = keys[id(m)] = m.identity
        return k

    def nodes(m: Matcher) -> list[Matcher]:
        found, todo = [], [m]
        while todo:
            n = todo.pop()
            found.append(n)
            if isinstance(n, All | Any_):
                todo.extend(n.parts)
        return found

    counts = Counter(text(n) for r in rules for n in nodes(r.matcher))

    def anchors(m: Matcher) -> set[tuple[object, ...]] | None:  # None: any rule may imply it (`always()`)
        if _is_always(m):
            return None
        if isinstance(m, All):
            choices = [a for a in map(anchors, m.parts) if a is not None]
            if not choices:
                return None
            return {text(m), *min(choices, key=lambda a: sum(counts[x] for x in a))}
        if isinstance(m, Any_):
            found = {text(m)}
            for part in m.parts:
                a = anchors(part)
                if a is None:
                    return None
                found |= a
            return found
        return {text(m)}

    filed: dict[tuple[object, ...], list[int]] = {}
    anywhere: list[int] = []  # earlier rules every rule must ask
    hiding: list[int | None] = []
    for i, rule in enumerate(rules):
        own = nodes(rule.matcher)
        if any(isinstance(n, Any_) and not n.parts for n in own):  # an empty `any` implies anything
            candidates: Iterable[int] = range(i)
        else:
            found = set(anywhere)
            for n in own:
                found.update(filed.get(text(n), ()))
            candidates = sorted(found)
        hiding.append(next((j for j in candidates if rules[j].times is None and
                            implies(rule.matcher, rules[j].matcher)), None))  # fmt: skip
        if rule.times is None:
            mine = anchors(rule.matcher)
            if mine is None:
                anywhere.append(i)
            else:
                for a in mine:
                    filed.setdefault(a, []).append(i)
    return hiding


def _is_always(m: Matcher) -> bool:
    return isinstance(m, Always)


def implies(a: Matcher, b: Matcher) -> bool:
    """Whether every request `a` matches is sure to match `b`, judged from the structure only."""
    if _is_always(b) or a == b:
        return True
    if isinstance(b, All):
        return all(implies(a, p) for p in b.parts)
    if isinstance(a, Any_):
        return all(implies(p, b) for p in a.parts)
    if isinstance(a, All):
        return any(implies(p, b) for p in a.parts)
    if isinstance(b, Any_):
        return any(implies(a, p) for p in b.parts)
    return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="synthgpt check",
        description="Validate rule files and report rules that can never answer. Exit 1 on any finding.",
    )
    parser.add_argument("files", nargs="*", metavar="RULE_FILE", help="YAML or JSON rule files")
    parser.add_argument("--separately", action="store_true",
                        help="check each file on its own instead of as one rule set")  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--schema", action="store_true", help="print the JSON Schema of rule files and exit")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.schema:
        from .spec import render_schema

        sys.stdout.write(render_schema())
        return 0
    if not args.files:
        parser.print_usage(sys.stderr)
        print("synthgpt check: error: give at least one RULE_FILE", file=sys.stderr)
        return 2
    groups = [[f] for f in args.files] if args.separately else [args.files]
    reports = [check_report(group) for group in groups]
    findings = [f for errors, _ in reports for f in errors]
    warnings = [w for _, warns in reports for w in warns]
    for f in [*findings, *warnings]:
        print(f)
    if not args.quiet:
        said = _count(len(warnings), "warning")
        if findings:
            print(_count(len(findings), "problem") + " found" + (f" ({said})" if warnings else ""),
                  file=sys.stderr)  # fmt: skip
        else:
            verdict = "ok" + (f" with {said}" if warnings else "")
            if warnings and args.strict:
                verdict = f"{said} (--strict)"
            print(f"{verdict}: {', '.join(args.files)}", file=sys.stderr)
    return 1 if findings or (warnings and args.strict) else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
