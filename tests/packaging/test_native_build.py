"""The compiled hot path (synthgpt/native.py): the same bytes as pure Python, and never a stale build.

`make test` builds the compiled modules before the suite (`synthgpt compile --if-stale`), so the rest of
the suite runs them; these tests run the same answers through a pure-Python interpreter beside them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from synthgpt import native
from synthgpt.cli import main

ROOT = Path(__file__).resolve().parents[2]

# Prints one digest per (case, prompt): status, headers and body of each answer, through the served app.
# Prompts reach every compiled module's branches: topics in other scripts (the Greek final sigma that
# mypyc's own str.lower() writes wrongly), list and steps questions, greetings, numbers, long text.
SCRIPT = r"""
import asyncio, hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from bench.appbench import AsgiCall, _synthgpt_app, rule_files
from bench.cases import CASES
from synthgpt import native
from synthgpt.cli import main

PROMPTS = [
    "Tell me about the history of bridges", "Tell me about οδοΣ σοφιαΣ", "ΟΔΟΣ ΣΟΦΙΑΣ",
    "東京の天気はどうですか",
    "Give me 5 ideas for a birthday party", "What are the steps to bake bread?", "hi", "hello there!",
    "top three tips for sleeping better", "1 2 3", "café culture in Lisbon 🎉", "Explain QUIC vs TCP",
    "a " * 300 + "long question about rivers", "List seven colours", "How do I reset my password?",
    "Ünïcödé Straße ΣΊΣΥΦΟΣ", "", "Why? " * 20,
]


async def main():
    apps = {"builtin": _synthgpt_app([], False), "rules": _synthgpt_app(rule_files(), False)}
    out = {"active": native.active(), "digests": {}}
    for case in CASES:
        for i, prompt in enumerate(PROMPTS):
            body = json.dumps(case.make_body(prompt, 40 if case.stream else None, case.stream)).encode()
            call = AsgiCall(case.path, body, case.headers)
            status, data, _ = await call.run(apps[case.server])
            heads = b"".join(k + b":" + v + b"\n" for k, v in call.headers)
            digest = hashlib.sha256(str(status).encode() + b"\0" + heads + b"\0" + data).hexdigest()
            out["digests"][f"{case.name}/{i}"] = digest
    print(json.dumps(out))

asyncio.run(main())
"""


def _run_script(script: str, pure: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
    if pure:
        env[native.PURE_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, str(ROOT)], env=env, capture_output=True, text=True, timeout=300,
        check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _answers(pure: bool) -> dict[str, object]:
    result: dict[str, object] = json.loads(_run_script(SCRIPT, pure))
    return result


def _require_build() -> None:
    if not native._current():
        pytest.skip("the compiled modules are not built for these sources: run `make native`")


def test_compiled_and_pure_python_answer_the_same_bytes() -> None:
    _require_build()
    compiled, pure = _answers(pure=False), _answers(pure=True)
    assert (compiled["active"], pure["active"]) == (True, False)
    assert isinstance(compiled["digests"], dict) and len(compiled["digests"]) == 7 * 18
    assert compiled["digests"] == pure["digests"]


def _loaded_from(env: dict[str, str]) -> dict[str, str]:
    code = "import importlib, json, synthgpt.native as n; print(json.dumps({m: importlib.import_module(m)" \
           ".__file__ for m in n.COMPILED}))"  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    loaded: dict[str, str] = json.loads(done.stdout)
    return loaded


def test_a_build_loads_every_compiled_module_and_the_variable_none() -> None:
    _require_build()
    env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
    assert all(Path(f).suffix == ".so" for f in _loaded_from(env).values()), _loaded_from(env)
    assert all(Path(f).suffix == ".py" for f in _loaded_from({**env, native.PURE_ENV: "1"}).values())


def _origin(finder: native._FromSource, name: str) -> str | None:
    spec = finder.find_spec(name, None)
    return None if spec is None else spec.origin


def test_sources_that_changed_since_the_build_load_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    _require_build()
    monkeypatch.setattr(native, "_digest", lambda: "0" * 16)  # what an edit does to the digest
    assert not native._current()
    stale, current = native._FromSource(compiled=False), native._FromSource(compiled=True)
    package = ROOT / "synthgpt"
    for name in native.COMPILED:
        source = str(package.joinpath(*name.split(".")[1:]).with_suffix(".py"))
        assert (_origin(stale, name), _origin(current, name)) == (source, None), name
    # any other module loads from source either way: an extension an older build left beside it never does
    assert _origin(current, "synthgpt.model") == str(package / "model.py")
    assert _origin(current, "synthgpt.codec") is None  # a package: the usual finders
    assert _origin(current, "json") is None


def test_a_build_whose_library_is_gone_loads_as_python(tmp_path: Path) -> None:
    # each compiled module's own extension is a stub that imports the build's shared library: with the
    # library deleted (by hand, an interrupted build, a copy that left it out), the stubs must not load
    _require_build()
    import shutil

    shutil.copytree(ROOT / "synthgpt", tmp_path / "synthgpt", ignore=shutil.ignore_patterns("__pycache__"))
    for lib in (tmp_path / "synthgpt").glob(native._LIB_PREFIX + "*"):
        lib.unlink()
    # without `site`: the editable install's finder would find the library in the checkout instead
    site_packages = [p for p in sys.path if p.endswith("site-packages")]
    env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *site_packages])
    code = "import synthgpt, synthgpt.jsonutil as j, synthgpt.native as n; print(n.active(), j.__file__)"
    done = subprocess.run([sys.executable, "-S", "-c", code], env=env, cwd=tmp_path, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == f"False {tmp_path / 'synthgpt' / 'jsonutil.py'}\n"


def test_the_digest_follows_every_source_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(native, "_PACKAGE", tmp_path)
    first = native._digest()
    (tmp_path / "sub" / "b.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")  # a build's output
    (tmp_path / "notes.txt").write_text("not a source")
    assert native._digest() == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")  # an edit anywhere, not only in a compiled module
    edited = native._digest()
    (tmp_path / "c.py").write_text("")  # a new module
    assert len({first, edited, native._digest()}) == 3


def test_the_compile_command_says_when_the_build_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    _require_build()
    assert main(["compile", "--if-stale"]) == 0
    assert capsys.readouterr().out == (
        f"synthgpt compile: the compiled modules are current (native_{native._digest()}__mypyc)\n"
    )
    assert main(["compile", "--nonsense"]) == 2
    assert capsys.readouterr().err == "usage: synthgpt compile [--if-stale]  (needs mypy and a C compiler)\n"


LEAK_SCRIPT = r"""
import asyncio, gc, json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from bench.appbench import AsgiCall, _synthgpt_app
from bench.cases import CASES
from bench.distinct import bodies
from synthgpt import native

app = _synthgpt_app([], False)
grown = {}
for case in [c for c in CASES if c.name in ("chat", "messages_stream")]:
    async def run(reqs):
        for body in reqs:
            await AsgiCall(case.path, body, case.headers).run(app)
    tracemalloc.start()
    asyncio.run(run(bodies(case, 1500)))  # the journal (1,000 calls) full: what stays is what leaks
    # and once more, with counters as long as the measured ones': compiled, the first 2,000 keep ~15 KB
    # more than pure Python, once (not a leak: the next 6,000 keep 0.6 bytes a request more)
    asyncio.run(run(bodies(case, 2000, 10**6)))
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    asyncio.run(run(bodies(case, 3000, 2 * 10**6)))
    gc.collect()
    grown[case.name] = (tracemalloc.get_traced_memory()[0] - before) / 3000
    tracemalloc.stop()
print(json.dumps({"active": native.active(), "grown": grown}))
"""


def test_compiled_answers_keep_no_memory_pure_python_would_not() -> None:
    # mypyc leaked a reference to every int above 2**62 that `b"%d" % seed` formatted from an `int`
    # parameter (`token_from_seed`: ~58 bytes a chat answer, 80 MB after 200k answers in `make bench`)
    _require_build()
    compiled, pure = (json.loads(_run_script(LEAK_SCRIPT, pure=p)) for p in (False, True))
    assert (compiled["active"], pure["active"]) == (True, False)
    for case, grown in compiled["grown"].items():
        assert grown < pure["grown"][case] + 8, (case, compiled["grown"], pure["grown"])  # bytes a request


def test_a_token_from_a_64_bit_seed_keeps_nothing() -> None:
    if not native.active():
        pytest.skip("this process runs pure Python: the compiled modules are not built or not current")
    from synthgpt.seeding import token_from_seed

    top = 2**64 - 1  # seeds above 2**62: ints mypyc keeps as objects
    token_from_seed(top, 32)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    # each seed made while traced and dropped after its call: one that leaked stays allocated
    short = [token_from_seed(top - i, 24) for i in range(10_000)]
    long = [token_from_seed(top - i, 80) for i in range(10_000)]  # more than one digest
    del short, long
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 4096, grown  # ~40 bytes a call when each seed leaked
