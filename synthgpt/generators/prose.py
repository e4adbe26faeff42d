"""The built-in default answer: readable text shaped by what the last user message asks for.

The answer is about the message's own topic (its longest run of content words, so "tide pools" stays one
phrase) and takes the shape a chat model would give: a greeting back, numbered steps for a how-to, a
bulleted list for ideas or tips, a table for a comparison, a fenced code block for a code request, and
paragraphs otherwise. Every choice is drawn from the context's RNG, in a fixed order.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from .._validation import size_range
from ..errors import RuleError
from ..seeding import DrawRandom
from .core import DrawContext, Generator
from .reading import read_window
from .text import ADJECTIVES, WORDS, with_article

__all__ = ["Prose", "answer_shape", "sentence_about", "topic"]

# Words that never make a topic: function words, the verbs people use to ask for something, and how they
# want it said ("explain X simply", "in layman's terms").
_NOT_TOPIC = frozenset(
    """
    a an the and or but nor so yet if then than that this these those there here it its it's i i'm me my
    we our you your he she they them their his her what which who whom whose when where why how is are
    was were be been being am do does did doing done have has had having can could should would will
    shall may might must not no yes to of in on at by for from with about into onto over under between
    among through during before after above below up down out off again further once also just only
    very too more most less least much many some any all each every both few other such own same please
    tell explain give make show write describe list help know want need like get got let lets use using
    what's that's it's there's here's who's how's where's don't doesn't can't won't isn't aren't i'd i've
    summarise summarize summary translate rewrite review fix create build generate find check
    thanks thank hello hi hey ok okay sure something anything thing things way ways quick short brief
    simple good best better new really kind sort lot lots able
    step steps idea ideas tip tips example examples option options difference differences compare
    versus vs code function script snippet program implement
    simply briefly quickly clearly concisely exactly actually basically detail detailed terms layman
    layman's eli5
    """.split()
)
# Possessive repeats (`*+`, `++`): nothing follows them in their branch, so giving back a character never
# makes a match, and not keeping the places to give back to makes `findall` ~20 % faster.
_WORD = re.compile(r"[^\W\d_][\w'-]*+|[\d]++", re.UNICODE)
# the same words in ASCII text (nearly all), where spelled-out classes match ~1.5x faster than \w and \d
_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*+|[0-9]++")

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b[\s!.,]*(there)?[\s!.,]*$", re.I
)
_CODE = re.compile(
    r"```|\b(code|function|script|snippet|implement|python|javascript|typescript|sql|bash|shell|regex|"
    r"class|method|program)\b",
    re.I,
)
_STEPS = re.compile(r"\b(how (do|can|should) (i|we|you)|how to|steps?|guide|walk me through|set ?up)\b", re.I)
_LIST = re.compile(r"\b(list|ideas?|tips?|ways|options|examples|suggestions?|recommend\w*)\b", re.I)
_COMPARE = re.compile(r"\b(vs\.?|versus|compare|comparison|difference between|better than)\b", re.I)
_SIDES = (
    re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?:[?.!,]|$)", re.I),
    re.compile(r"\bcompare\s+(.+?)\s+(?:and|with|to)\s+(.+?)(?:[?.!,]|$)", re.I),
    re.compile(r"(\S+(?:\s+\S+)?)\s+(?:vs\.?|versus)\s+(\S+(?:\s+\S+)?)", re.I),
)
_LANGS = (
    ("python", re.compile(r"\bpython|\.py\b|pandas|django|flask", re.I)),
    ("typescript", re.compile(r"\btypescript|\.ts\b|angular", re.I)),
    ("javascript", re.compile(r"\bjavascript|\bjs\b|node|react|\.js\b", re.I)),
    ("sql", re.compile(r"\bsql|query|postgres|mysql|sqlite|table", re.I)),
    ("bash", re.compile(r"\bbash|shell|terminal|command line|cli\b", re.I)),
)


_DETERMINERS = {"a": "a", "an": "an", "the": "the", "my": "your", "our": "your", "your": "my"}


def topic(text: str, limit: int = 3, *, names_first: bool = False) -> str:
    """The phrase `text` is about: its longest run of up to `limit` content words ("tide pools").

    A determiner just before the run comes along, turned to the answer's point of view ("my dog" is
    "your dog"); names keep their capitals ("Lisbon", "TCP"), the first word of `text` too when
    `names_first`.
    """
    window = read_window(text)
    last = _LAST_TOPIC[0]  # (one read: another thread may replace it, never change it)
    if last[0] == window and last[1] == limit and last[2] == names_first:
        return last[3]
    found = _topic(window, limit, names_first)
    _LAST_TOPIC[0] = (window, limit, names_first, found)
    return found


# The last text `topic` read and what it found. A request is read by several readers (the reasoning, the
# answer, a schema's summary fields, a hosted tool's query), one after the other: they find it here. A
# window is at most `READ_CHARS + 1` long, so a miss costs a short comparison at most.
_LAST_TOPIC: list[tuple[str, int, bool, str]] = [("", 3, False, "this")]


# Every lower case in this module is str.lower through the method object: compiled (synthgpt.native),
# `s.lower()` is mypyc's own lower case, which writes a word's final capital sigma as σ where Python writes ς
_lower = str.lower


def _topic(window: str, limit: int, names_first: bool) -> str:
    words = (_ASCII_WORD if window.isascii() else _WORD).findall(window)
    if not words:
        return "this"
    # each word's lower case, and whether it can be part of a topic (a topic word never is "of"/"the"); no
    # word holds a space, nor does its lower case, so the words lowered at once split back one for one
    lows = _lower(" ".join(words)).split(" ")
    content = [lw not in _NOT_TOPIC and len(lw) >= 3 and not lw.isdigit() for lw in lows]
    lows.append("")
    content += [False, False]
    best: list[str] = []
    run: list[str] = []
    before = ""
    joined = 0  # how many of "of", "the" the run holds: they do not count towards `limit`
    skip = -1
    # most words are not content words and no run is open then: those cost one test each
    for i, word in enumerate(words):
        if content[i]:
            low = lows[i]
            if len(run) - joined < limit:
                if not run:
                    before = lows[i - 1] if i else ""
                if word != low and (
                    (word.isupper() and len(word) > 1) or (word[:1].isupper() and (i > 0 or names_first))
                ):
                    low = word  # a name keeps its capitals
                run.append(low)
                continue
            # the run is full: it ends here, and this word starts the next (i > 0: a run came before)
            if len(run) > len(best):
                best = [_DETERMINERS[before], *run] if before in _DETERMINERS else run
            before = lows[i - 1]
            run = [word if word[:1].isupper() else low]
            joined = 0
            continue
        if not run:
            continue
        if i == skip:
            continue
        if not joined and lows[i] == "of" and len(run) < limit:
            # "the capital of France", "the history of the Roman empire": one phrase, not two
            nxt = lows[i + 1]
            if content[i + 1] or (nxt == "the" and content[i + 2]):
                run += ["of", "the"] if nxt == "the" else ["of"]
                joined = 2 if nxt == "the" else 1
                skip = i + 1 if nxt == "the" else -1
                continue
        if len(run) > len(best):
            best = [_DETERMINERS[before], *run] if before in _DETERMINERS else run
        run = []
        joined = 0
    if len(run) > len(best):
        best = [_DETERMINERS[before], *run] if before in _DETERMINERS else run
    return " ".join(best) if best else "this"


def answer_shape(text: str) -> str:
    """What kind of answer `text` asks for: greeting, code, compare, steps, list or prose."""
    text = read_window(text)
    last = _LAST_SHAPE[0]  # the request's other readers asked the same (see `_LAST_TOPIC`)
    if last[0] == text:
        return last[1]
    shape = _answer_shape(text)
    _LAST_SHAPE[0] = (text, shape)
    return shape


_LAST_SHAPE: list[tuple[str, str]] = [("", "prose")]


def _answer_shape(text: str) -> str:
    if _GREETING.match(text):
        return "greeting"
    # ASCII text (nearly all): a shape's pattern can only match where one of its words is, and looking for
    # those is a fast substring test; other text may match case-insensitively in ways lower() does not show
    low = _lower(text) if text.isascii() else None
    if low is not None and "```" not in low and not _ANY_HINT.search(" " + low):
        return "prose"  # most questions: no shape's word anywhere, found in one pass rather than four
    for shape, pattern, words in _SHAPES:
        if (low is None or any(w in low for w in words)) and pattern.search(text):
            return shape
    return "prose"


# each shape's pattern, with a substring every match of it contains (in lower case)
_SHAPES = (
    ("code", _CODE, ("```", "code", "function", "script", "snippet", "implement", "python", "sql", "bash",
                     "shell", "regex", "class", "method", "program")),
    ("compare", _COMPARE, ("vs", "versus", "compar", "difference between", "better than")),
    ("steps", _STEPS, ("how ", "step", "guide", "walk me through", "setup", "set up")),
    ("list", _LIST, ("list", "idea", "tip", "ways", "options", "examples", "suggestion", "recommend")),
)  # fmt: skip


def _any_of(words: list[str]) -> str:
    """A pattern matching where any of `words` begins, its branches shared by common prefixes: the regex
    engine tries each branch at each position, so a flat alternation of 35 words is ~1.6x slower."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in by_first.items():
        if "" in rests or len(rests) == 1:  # a whole word here: the longer ones add no match
            branches.append(re.escape(first + min(rests, key=len)))
        else:
            branches.append(re.escape(first) + "(?:" + _any_of(rests) + ")")
    return "|".join(branches)


# Each shape's words begin at a word boundary in its pattern (`\b(code|…)`), "```" aside (a substring test
# of its own): in lower-case ASCII text a non-word character comes just before them (or the start, hence the
# space put before the text). Starting from those characters only, the search tries the branches at about
# one place in five, not at every letter (~1.5x faster on a question).
_ANY_HINT = re.compile(
    "[^a-z0-9_](?:" + _any_of([w for _, _, words in _SHAPES for w in words if w != "```"]) + ")"
)


# {t} is the asker's own phrase, singular or plural ("your dog", "tides"): no template makes a verb agree
# with it, and no "it" stands for it
_OPENERS = (
    "Here is a short overview of {t}.",
    "Good question: it comes down to a few ideas about {t}.",
    "Sure, let me walk you through {t}.",
    "There are a few things worth knowing about {t}.",
    "In short, the heart of {t} is a {a} {n}.",
)
_BODY = (
    "The first thing to look at with {t} is the {n}, because it sets the {m} for everything else.",
    "In practice, what matters most for {t} is a {a} {n}, more than any single {m}.",
    "A common mistake is to treat {t} as a fixed {n} rather than a {a} {m}.",
    "If the {n} changes, expect the {m} around {t} to change with it.",
    "Most people start with the {n} and only later notice how much the {m} matters.",
    "It is worth checking the {n} early, because small differences there add up.",
    "For {t}, a {a} {n} usually works better than a clever {m}.",
    "Keep the {n} and the {m} separate, and reasoning about {t} gets much easier.",
    "A good test is whether the {n} still makes sense when the {m} is different.",
)
_CLOSERS = (
    "I hope this helps. Let me know if you want more detail on {t}.",
    "Happy to go deeper on any part of this.",
    "If you share more about your situation, I can be more specific.",
    "That covers the main points about {t}.",
)
_COMPARE_OPENERS = (
    "Here is how {l} and {r} compare.",
    "{l} and {r} overlap more than it seems, but they differ in a few places.",
    "Side by side, {l} and {r} look like this.",
)
_VERDICTS = (
    "Pick {l} when the {n} matters most, and {r} when the {m} does.",
    "In short: {l} for a {a} {n}, {r} when the {m} comes first.",
    "Neither is better everywhere; it depends on whether the {n} or the {m} matters more to you.",
)
_GREETINGS = (
    "Hello! How can I help you today?",
    "Hi there! What would you like to talk about?",
    "Hey! What can I do for you?",
)
_STEP_LINES = (
    "Check the {n} first and note anything {a}.",
    "Set up the {n}, keeping the {m} as {a} as you can.",
    "Apply the change to one {n} and watch the {m}.",
    "Compare the {m} with what you expected.",
    "Repeat for the remaining {n}s, one at a time.",
    "Write down the {m} so the next run is quicker.",
)
_LIST_LINES = (
    "keep the {n} {a} and easy to change.",
    "start from the {m} you already have.",
    "review the {n} once a week.",
    "pair each {n} with a clear {m}.",
    "drop any {n} that no longer earns its place.",
    "share the {m} early and ask for feedback.",
)
_CODE_BODIES = {
    "python": (
        "def {f}(items: list[dict]) -> list[dict]:\n"
        '    """Return the {t} entries whose {n} is set, ordered by {m}."""\n'
        '    ready = [item for item in items if item.get("{n}")]\n'
        '    return sorted(ready, key=lambda item: item.get("{m}", 0))\n'
    ),
    "typescript": (
        "export function {F}(items: Array<Record<string, unknown>>): Array<Record<string, unknown>> {{\n"
        "  // the {t} entries whose {n} is set, ordered by {m}\n"
        '  return items.filter((item) => item["{n}"]).sort((a, b) => Number(a["{m}"]) - Number(b["{m}"]));\n'
        "}}\n"
    ),
    "javascript": (
        "function {F}(items) {{\n"
        "  // the {t} entries whose {n} is set, ordered by {m}\n"
        "  return items.filter((item) => item.{n}).sort((a, b) => a.{m} - b.{m});\n"
        "}}\n"
    ),
    "sql": "SELECT *\nFROM {f}\nWHERE {n} IS NOT NULL\nORDER BY {m};\n",
    "bash": '#!/usr/bin/env bash\nset -euo pipefail\nfor f in ./{f}/*; do\n  echo "{n}: $f"\ndone\n',
}


_ARTICLE_FIX = re.compile(r"\b([Aa]) (\w+)")
_ARTICLE_SLOT = re.compile(r"\b([Aa]) \{([anm])\}")
# each drawn word with the article it takes, both cases: "an early", "An early", "a useful"
_ARTICLED = {w: with_article(w) for w in (*ADJECTIVES, *WORDS)}
_ARTICLED_CAP = {w: with_article(w, capital=True) for w in (*ADJECTIVES, *WORDS)}
_COMPILED: dict[str, tuple[str, bool]] = {}
_N_ADJ, _N_WORDS = len(ADJECTIVES), len(WORDS)


def _fix_articles(text: str) -> str:
    """'a' before a word that wants 'an' (and the like), fixed: `with_article` for each "a <word>"."""
    return _ARTICLE_FIX.sub(lambda m: with_article(m.group(2), capital=m.group(1) == "A"), text)


def _compile(template: str) -> str:
    """`template` as a format string whose articles are settled: the fixed words' at once, and an "a"
    before a drawn word becomes a slot for that word with its article (`{xa}`, `{Xn}`, …), so a fill is one
    `format` instead of a regex pass over the text."""
    slotted = _ARTICLE_SLOT.sub(lambda m: f"{{{'X' if m.group(1) == 'A' else 'x'}{m.group(2)}}}", template)
    return _fix_articles(slotted)


# How a compiled template's slots read as expressions of the four words (`A`/`C`: the articled tables).
_SLOT_CODE = {
    "t": "t", "a": "a", "n": "n", "m": "m",
    "xa": "A[a]", "xn": "A[n]", "xm": "A[m]", "Xa": "C[a]", "Xn": "C[n]", "Xm": "C[m]",
}  # fmt: skip
_SLOT = re.compile(r"\{(\w+)\}")


def _as_function(form: str) -> Callable[[str, str, str, str], str] | None:
    """A compiled template (`_compile`) as a function of (t, a, n, m) whose one f-string writes what
    `form.format` with those words and their articled forms writes: ~0.1 µs a fill where `format` with
    ten keywords costs 0.6-0.9. None for a form this does not cover (literal braces, other slots).

    Only this module's own phrase tables are made into code, once, at import: never a text from a
    request (a comparison's verdict names the asked sides; it is filled by `format`)."""
    pieces = _SLOT.split(form)  # literal text at even places, slot names at odd ones
    literals, slots = pieces[::2], pieces[1::2]
    if not set(slots) <= _SLOT_CODE.keys() or any("{" in p or "}" in p for p in literals):
        return None
    if not all(p.isprintable() for p in literals):  # (a line break would end the f-string)
        return None
    body = "".join(
        p.replace("\\", "\\\\").replace("'", "\\'") if i % 2 == 0 else "{" + _SLOT_CODE[p] + "}"
        for i, p in enumerate(pieces)
    )
    made: Callable[[str, str, str, str], str] = eval(
        f"lambda t, a, n, m: f'{body}'", {"A": _ARTICLED, "C": _ARTICLED_CAP}
    )
    return made


# The three words of a fill come from one 64-bit draw `x`, as its mixed-radix digits (the bias is below
# 2**-40): the adjective `i = x % A`, the noun `j = x // A % W` and the other word
# `k = x // (A * W) % (W - 1)`, which is `WORDS[k + (k >= j)]`, never the noun again (A adjectives, W
# words). All three read only `r = x % (A * W * (W - 1))` (A * W divides that modulus): one operation on
# the 64-bit number, then small ones, and each (i, j) pair's adjective, noun and other words (`WORDS`
# without the noun) come from one table entry, `_PAIRS[r % (A * W)]`, the other word being that entry's
# `[r // (A * W)]`.
_PAIRS_SPAN = _N_ADJ * _N_WORDS
_WORDS_SPAN = _PAIRS_SPAN * (_N_WORDS - 1)
_OTHERS = tuple((*WORDS[:j], *WORDS[j + 1 :]) for j in range(_N_WORDS))
_PAIRS = tuple((ADJECTIVES[r % _N_ADJ], WORDS[r // _N_ADJ], _OTHERS[r // _N_ADJ]) for r in range(_PAIRS_SPAN))


class _Words:
    """Fills a template's slots with drawn words: one 64-bit draw per template, always, in a fixed order."""

    __slots__ = ("rng", "subject")

    def __init__(self, rng: random.Random, subject: str) -> None:
        self.rng = rng
        # the subject's own articles ("a apple" as asked), settled once; no template puts "a" before {t}
        # (a topic rarely holds "a "/"A ", which every such article does: no regex pass for the others)
        self.subject = _fix_articles(subject) if "a " in subject or "A " in subject else subject

    def fill(self, template: str) -> str:
        made = _FILLS.get(template)
        if made is not None:  # a phrase table's template (nearly every fill)
            return self.fill_from(made, self.rng.getrandbits(64))
        return self._fill_by_format(template)

    def fill_from(self, made: Callable[[str, str, str, str], str], x: int) -> str:
        """The fill of a phrase table's template (its `_FILLS` function) whose 64 random bits are `x`."""
        r = x % _WORDS_SPAN  # the three words, as `_PAIRS` reads them
        adjective, noun, others = _PAIRS[r % _PAIRS_SPAN]
        return made(self.subject, adjective, noun, others[r // _PAIRS_SPAN])

    def _fill_by_format(self, template: str) -> str:
        compiled = _COMPILED.get(template)
        if compiled is None:
            text = _compile(template)
            # whether it has an article slot: most have none, and their fill passes four words, not ten
            compiled = (text, "{x" in text or "{X" in text)
            if len(_COMPILED) < 4096:  # the phrase tables; a comparison's verdict names the asked sides
                _COMPILED[template] = compiled
        r = self.rng.getrandbits(64) % _WORDS_SPAN  # the three words, as `_PAIRS` reads them
        adjective, noun, others = _PAIRS[r % _PAIRS_SPAN]
        other = others[r // _PAIRS_SPAN]
        form, articled = compiled
        if not articled:
            return form.format(t=self.subject, a=adjective, n=noun, m=other)
        return form.format(
            t=self.subject, a=adjective, n=noun, m=other,
            xa=_ARTICLED[adjective], xn=_ARTICLED[noun], xm=_ARTICLED[other],
            Xa=_ARTICLED_CAP[adjective], Xn=_ARTICLED_CAP[noun], Xm=_ARTICLED_CAP[other],
        )  # fmt: skip


# each phrase table's template as the function that fills it (see `_as_function`); others use `format`
_FILLS = {
    template: made
    for template in (*_OPENERS, *_BODY, *_CLOSERS, *_STEP_LINES, *_LIST_LINES)
    if (made := _as_function(_compile(template))) is not None
}


# the prose shape's tables as their fill functions, in the tables' order (what `_paragraphs` picks from)
_OPENER_FILLS = tuple(_FILLS[template] for template in _OPENERS)
_CLOSER_FILLS = tuple(_FILLS[template] for template in _CLOSERS)
_BODY_FILLS = tuple(_FILLS[template] for template in _BODY)


_NUMBERS = {w: i for i, w in enumerate("one two three four five six seven eight nine ten".split(), 1)}
_COUNT = re.compile(
    r"\b(\d{1,3}|" + "|".join(_NUMBERS) + r")\s+(?:[a-z-]+\s+)?"
    r"(ideas?|tips?|ways?|steps?|options?|examples?|suggestions?|things?|reasons?|items?|points?|names?|"
    r"questions?|recommendations?|books?|places?|facts?|words?)\b",
    re.I,
)
_MAX_ITEMS = 10


def _count_asked(text: str) -> int | None:
    """How many items `text` asks for ("5 ideas", "three quick tips"), at most `_MAX_ITEMS`; None if it
    names no number."""
    found = _COUNT.search(text)
    if found is None:
        return None
    word = _lower(found.group(1))
    count = _NUMBERS.get(word) or int(word)
    return min(max(count, 1), _MAX_ITEMS)


def sentence_about(rng: random.Random, subject: str, max_len: int | None = None) -> str:
    """One sentence of the default answer's body about `subject` (a `topic`): what a model writes into a
    `summary` or `description` field. The first, in a drawn order, that fits in `max_len` characters,
    those naming the subject before the others; the first of all when none fits (the caller cuts it)."""
    words = _Words(rng, subject)
    order = rng.sample(_BODY, len(_BODY))
    # sentences that name the subject first; the others only when none of those fits
    order.sort(key=lambda template: "{t}" not in template)
    first = words.fill(order[0])
    if max_len is None or len(first) <= max_len:
        return first
    for template in order[1:]:
        text = words.fill(template)
        if len(text) <= max_len:
            return text
    return first


def _identifier(subject: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", _lower(subject)) if w not in _DETERMINERS] or ["items"]
    return "_".join(words)


class Prose(Generator[str]):
    """Readable text about the request's own topic, shaped like its question: the built-in default answer.

    `min_sentences`..`max_sentences` bounds the sentences (or list items, plus an opener and a closer);
    a list or steps question that asks for a number of them ("5 ideas", "top three tips") gets that many,
    up to 10.
    """

    __slots__ = ("hi", "lo")
    lo: int
    hi: int

    # `Any`, checked here: compiled (synthgpt.native), an `int` parameter would refuse a str with a bare
    # TypeError before the check could name the generator and the argument
    def __init__(self, min_sentences: Any = 3, max_sentences: Any = 5) -> None:
        size_range("prose", min_sentences, max_sentences, "sentences")
        if min_sentences < 2:
            raise RuleError("`prose` needs at least 2 sentences (an opener and a closer)")
        self.lo, self.hi = min_sentences, max_sentences

    def draw(self, ctx: DrawContext) -> str:
        rng = ctx.rng
        asked = read_window(ctx.request.last_user)
        subject = topic(asked)
        words = _Words(rng, subject)
        n = rng.randint(self.lo, self.hi)
        shape = answer_shape(asked)
        if shape == "greeting":
            return rng.choice(_GREETINGS)
        if shape == "prose" and type(rng) is DrawRandom and n - 2 <= len(_BODY):
            return _paragraphs(rng, words, n - 2)  # most answers: the same text from one batch of draws
        opener = words.fill(rng.choice(_OPENERS))
        closer = words.fill(rng.choice(_CLOSERS))
        middle = max(n - 2, 1)
        asked_for = _count_asked(asked) if shape in ("steps", "list") else None
        if asked_for is not None:
            middle = asked_for
        if shape == "steps":
            lines = [f"{i}. {words.fill(line)}" for i, line in enumerate(_pick(rng, _STEP_LINES, middle), 1)]
            return f"{opener}\n\n" + "\n".join(lines) + f"\n\n{closer}"
        if shape == "list":
            items = [words.fill(line) for line in _pick(rng, _LIST_LINES, middle)]
            bullets = [f"- **{rng.choice(ADJECTIVES).capitalize()} {rng.choice(WORDS)}**: {i}" for i in items]
            return f"{opener}\n\n" + "\n".join(bullets) + f"\n\n{closer}"
        if shape == "compare":
            return self._compare(rng, words, asked, closer, middle)
        if shape == "code":
            return self._code(rng, words, asked, subject, opener, closer)
        body = [words.fill(line) for line in _pick(rng, _BODY, n - 2)]
        if len(body) >= 3:  # longer answers read as two paragraphs
            half = (len(body) + 1) // 2
            return " ".join([opener, *body[:half]]) + "\n\n" + " ".join([*body[half:], closer])
        return " ".join([opener, *body, closer])

    @staticmethod
    def _compare(rng: random.Random, words: _Words, asked: str, closer: str, rows: int) -> str:
        left, right = "the first option", "the second option"
        for pattern in _SIDES:
            found = pattern.search(asked)
            if found:
                left, right = (topic(side, limit=3, names_first=True) for side in found.groups())
                break
        opener = rng.choice(_COMPARE_OPENERS).format(l=left, r=right)
        header = f"| | {left} | {right} |\n|---|---|---|"
        lines = [
            f"| {rng.choice(WORDS)} | {rng.choice(ADJECTIVES)} | {rng.choice(ADJECTIVES)} |"
            for _ in range(max(rows, 2))
        ]
        verdict = words.fill(rng.choice(_VERDICTS).replace("{l}", left).replace("{r}", right))
        return f"{opener}\n\n{header}\n" + "\n".join(lines) + f"\n\n{verdict} {closer}"

    @staticmethod
    def _code(
        rng: random.Random, words: _Words, asked: str, subject: str, opener: str, closer: str
    ) -> str:
        lang = next((name for name, pattern in _LANGS if pattern.search(asked)), "python")
        noun, other = rng.choice(WORDS), rng.choice(WORDS)
        name = _identifier(subject)
        camel = name.split("_")[0] + "".join(p.capitalize() for p in name.split("_")[1:])
        # "the {t} entries": the topic without its determiner ("the your invoices"), or none at all
        first, _, rest = subject.partition(" ")
        bare = rest if _lower(first) in _DETERMINERS else subject
        bare = "matching" if subject == "this" or not bare else bare
        code = _CODE_BODIES[lang].format(f=name, F=camel, t=bare, n=noun, m=other)
        explain = words.fill(rng.choice(_BODY))
        return f"{opener}\n\n```{lang}\n{code}```\n\n{explain} {closer}"

    def __repr__(self) -> str:
        return f"prose({self.lo}, {self.hi})"


def _paragraphs(rng: DrawRandom, words: _Words, k: int) -> str:
    """`Prose.draw`'s answer of the prose shape with `k` body sentences (at most `len(_BODY)`): the draws
    it makes one by one (`choice` of an opener, its fill, of a closer, its fill, `sample` of `k` body
    sentences, their fills), taken as one batch of `next64s` and mapped as those methods map them."""
    z = rng.next64s(4 + 2 * k)
    subject, pairs, span = words.subject, _PAIRS, _PAIRS_SPAN
    # each fill as `_Words.fill_from` makes it, written out here (a call less per sentence)
    r = z[1] % _WORDS_SPAN
    a, n, others = pairs[r % span]
    opener = _OPENER_FILLS[(z[0] * len(_OPENER_FILLS)) >> 64](subject, a, n, others[r // span])
    r = z[3] % _WORDS_SPAN
    a, n, others = pairs[r % span]
    closer = _CLOSER_FILLS[(z[2] * len(_CLOSER_FILLS)) >> 64](subject, a, n, others[r // span])
    pool = list(_BODY_FILLS)
    size = len(pool)
    body = []
    for i in range(k):  # `DrawRandom.sample(_BODY, k)`
        j = (z[4 + i] * (size - i)) >> 64
        r = z[4 + k + i] % _WORDS_SPAN
        a, n, others = pairs[r % span]
        body.append(pool[j](subject, a, n, others[r // span]))
        pool[j] = pool[size - i - 1]
    if k >= 3:  # longer answers read as two paragraphs
        half = (k + 1) // 2
        return " ".join([opener, *body[:half]]) + "\n\n" + " ".join([*body[half:], closer])
    return " ".join([opener, *body, closer])


def _pick(rng: random.Random, lines: tuple[str, ...], k: int) -> list[str]:
    """`k` distinct lines in a drawn order (repeating the pool only when `k` exceeds it)."""
    out: list[str] = []
    while len(out) < k:
        out += rng.sample(lines, min(k - len(out), len(lines)))
    return out
