"""No wall clock, global `random`, uuid4() or globally seeded Faker anywhere answers are made.

Only the modules that pace or serve (the clock itself, the server, the SSE pacing layer, the CLI) may read
real time. Comments and plain strings are ignored (docstrings say "never uuid4()"); f-strings are scanned.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "synthgpt"
ALLOWED = ("clock.py", "server/", "codec/sse.py", "cli/")

_RANDOM_FUNCS = (
    "random|randint|randrange|choice|choices|shuffle|seed|sample|uniform|gauss|getrandbits|triangular|betavariate"
)
FORBIDDEN = re.compile(
    r"\btime\.time(?:_ns)?\("
    r"|\bdatetime\.(?:now|utcnow|today)\("
    r"|\bdate\.today\("
    r"|\buuid[14]\("
    r"|\bos\.urandom\("
    r"|\bsecrets\.\w+\("
    rf"|(?<![\w.])random\.(?:{_RANDOM_FUNCS})\("
    r"|\bfrom\s+random\s+import\s+(?!Random\b)"
    r"|\bFaker\.seed\("
)


def code_only(source: str) -> list[str]:
    """The source's lines with comments and non-f-string literals blanked, line numbers kept."""
    lines = source.splitlines()
    blank = [list(line) for line in lines]
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        is_fstring = tok.type == tokenize.STRING and "f" in tok.string.split("'")[0].split('"')[0].lower()
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and not is_fstring):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for row in range(r0, r1 + 1):
                start = c0 if row == r0 else 0
                end = c1 if row == r1 else len(blank[row - 1])
                for col in range(start, end):
                    blank[row - 1][col] = " "
    return ["".join(chars) for chars in blank]


def scan(path: Path, root: Path) -> list[str]:
    found = []
    for number, line in enumerate(code_only(path.read_text(encoding="utf-8")), start=1):
        match = FORBIDDEN.search(line)
        if match:
            found.append(f"{path.relative_to(root).as_posix()}:{number}: {match.group(0)}")
    return found


def scan_package(root: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(rel == allowed or (allowed.endswith("/") and rel.startswith(allowed)) for allowed in ALLOWED):
            continue
        found += scan(path, root)
    return found


def test_generation_code_reads_no_wall_clock_global_random_or_uuid4() -> None:
    assert PACKAGE.is_dir()
    assert scan_package(PACKAGE) == []


def test_the_scanner_catches_each_forbidden_call(tmp_path: Path) -> None:
    pkg = tmp_path / "synthgpt"
    (pkg / "server").mkdir(parents=True)
    (pkg / "bad.py").write_text(
        "import time, random, uuid\n"
        "from datetime import datetime\n"
        "from faker import Faker\n"
        "t = time.time()\n"
        "n = datetime.now()\n"
        "u = uuid.uuid4()\n"
        "r = random.randint(1, 2)\n"
        "Faker.seed(1)\n"
        "s = f'{random.choice([1])}'\n"
        "from random import choice\n",
        encoding="utf-8",
    )
    (pkg / "fine.py").write_text(
        "import random\n"
        "rng = random.Random(3)  # random.random() in a comment is fine\n"
        "x = rng.random() + rng.choice([1])\n"
        "doc = 'never call time.time() or uuid4()'\n"
        "from random import Random\n",
        encoding="utf-8",
    )
    (pkg / "clock.py").write_text("import time\nnow = time.time()\n", encoding="utf-8")
    (pkg / "server" / "app.py").write_text("import time\nnow = time.time()\n", encoding="utf-8")
    assert scan_package(pkg) == [
        "bad.py:4: time.time(",
        "bad.py:5: datetime.now(",
        "bad.py:6: uuid4(",
        "bad.py:7: random.randint(",
        "bad.py:8: Faker.seed(",
        "bad.py:9: random.choice(",
        "bad.py:10: from random import ",
    ]
