"""The hot path's modules compiled by mypyc, used only when built from exactly the sources on disk.

`synthgpt compile` compiles the modules in `COMPILED` to C extensions beside their sources (it
needs mypy and a C compiler; `make serve`, `make test` and `make bench` run it). Python imports an
extension before a module's `.py`, so a build older than an edit would keep answering with the old code:
the build's shared library is named after a digest of every synthgpt source, and `guard()` (run when
`synthgpt/__init__` imports this module, before any other) loads the compiled set from source whenever
no library of the current digest is present. An edit therefore falls back to pure Python, whole, until
the next build; all or none, because compiled modules call each other in C and inline each other's
`Final` constants.

Compiled code never offers the GIL to another thread on its own, as the interpreter does every few ms:
a compiled pass over a large input lets go of it between pieces itself (`synthgpt.gil`).

Compiled or not, the answers are the same bytes (`tests/packaging/test_native_build.py`).
`SYNTHGPT_PURE_PYTHON=1` forces the pure modules, to tell whether a difference comes from the build.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["COMPILED", "PURE_ENV", "active", "build", "guard", "main"]

COMPILED: tuple[str, ...] = (
    "synthgpt.codec.anthropic.encode",
    "synthgpt.codec.anthropic.request",
    "synthgpt.codec.common",
    "synthgpt.codec.envelope",
    "synthgpt.codec.fields",
    "synthgpt.codec.headers",
    "synthgpt.codec.interned",
    "synthgpt.codec.openai_chat.encode",
    "synthgpt.codec.openai_chat.reasoning",
    "synthgpt.codec.openai_chat.request",
    "synthgpt.codec.openai_responses.encode",
    "synthgpt.codec.openai_responses.events",
    "synthgpt.codec.openai_responses.request",
    "synthgpt.codec.runs",
    "synthgpt.engine.assemble",
    "synthgpt.engine.budget",
    "synthgpt.engine.calls",
    "synthgpt.engine.drawing",
    "synthgpt.engine.shaping",
    "synthgpt.generators.prose",
    "synthgpt.generators.reading",
    "synthgpt.generators.template_plain",
    "synthgpt.generators.vector_sums",
    "synthgpt.journal.packing",
    "synthgpt.jsonutil",
    "synthgpt.logprobs",
    "synthgpt.seeding",
    "synthgpt.splitmix",
    "synthgpt.tokens",
    "synthgpt.trusted",
)
"""Modules compiled by `build`. Each must import cleanly under mypyc: no class that uncompiled code
subclasses or that users are offered (MockGPT, Rule, Limits), no `list` subclass, no attribute set on its
functions or classes from outside, no slot tricks; a parameter that receives a request's unchecked value
takes `Any`, one that may receive an int where a float is meant `int | float` (compiled, a `float`
parameter makes an int a float). docs/operations.md says why the others stay out."""

PURE_ENV = "SYNTHGPT_PURE_PYTHON"
_PACKAGE = Path(__file__).resolve().parent
_LIB_PREFIX = "native_"
_LIB_SUFFIX = "__mypyc"
_active = False


def _digest() -> str:
    """A digest of every synthgpt source file: what a build is valid for."""
    h = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _libraries() -> list[Path]:
    """The compiled shared libraries present in the package, of any build."""
    return [
        p for p in _PACKAGE.iterdir()
        if p.name.startswith(_LIB_PREFIX) and p.name.split(".")[0].endswith(_LIB_SUFFIX)
    ]  # fmt: skip


def _library_name(digest: str) -> str:
    return f"{_LIB_PREFIX}{digest}{_LIB_SUFFIX}"


def _current(libs: list[Path] | None = None) -> bool:
    """Whether a library built from today's sources is among `libs` (default: those present), for this
    interpreter."""
    libs = _libraries() if libs is None else libs  # a listing before any hashing: all a pure install pays
    if not libs:
        return False
    names = {_library_name(_digest()) + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES}
    return any(p.name in names for p in libs)


class _FromSource(importlib.abc.MetaPathFinder):
    """Finds synthgpt's modules as their `.py` files, ahead of any extension beside them, except the
    compiled set's when `compiled` (a module left out of the set since an older build keeps that
    build's extension until the next one: it must not load, nor must any of a stale build's)."""

    def __init__(self, compiled: bool) -> None:
        self.compiled = compiled

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PACKAGE.name + ".") or (self.compiled and fullname in COMPILED):
            return None
        source = _PACKAGE.joinpath(*fullname.split(".")[1:]).with_suffix(".py")
        return importlib.util.spec_from_file_location(fullname, source) if source.is_file() else None


def guard() -> None:
    """Use the compiled modules only if they were built from the sources on disk (and not forced off)."""
    global _active
    if any(isinstance(f, _FromSource) for f in sys.meta_path):
        return
    libs = _libraries()
    _active = not os.environ.get(PURE_ENV) and _current(libs)
    if libs or _stubs():  # a pure install has no extension to keep out
        sys.meta_path.insert(0, _FromSource(_active))


def _stubs() -> bool:
    """Whether a compiled module's own extension is present: a stub that imports its build's library, which
    may be gone (deleted, a build cut short, a copy that left it out), and must then not load."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return any(Path(source).with_suffix(suffix).exists() for source in _sources() for suffix in suffixes)


def active() -> bool:
    """Whether this process runs the compiled modules."""
    return _active


def _sources() -> list[str]:
    return [str(_PACKAGE.joinpath(*m.split(".")[1:]).with_suffix(".py")) for m in COMPILED]


def build() -> Path:
    """Compile `COMPILED` in place for the current sources; returns the shared library. Old builds' files
    are removed first. Runs from the directory that holds the package, as mypyc wants relative paths."""
    from mypyc.build import mypycify  # only the build needs mypy and setuptools
    from setuptools import setup

    root = _PACKAGE.parent
    for ext in _PACKAGE.rglob("*"):  # every older build's extensions, of modules in the set or not
        if ext.suffix in (".so", ".pyd"):
            ext.unlink()
    digest = _digest()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        sources = [str(Path(s).relative_to(root)) for s in _sources()]
        extensions = mypycify(sources, opt_level="3", group_name=f"{_PACKAGE.name}.{_LIB_PREFIX}{digest}")
        setup(
            name="synthgpt-native",
            ext_modules=extensions,
            script_args=["--quiet", "build_ext", "--inplace", "--build-temp", f"build/native-{digest}"],
        )
    finally:
        os.chdir(cwd)
    built = [p for p in _libraries() if p.name.startswith(_library_name(digest))]
    if not built:
        raise RuntimeError(f"synthgpt.native: mypyc built no library {_library_name(digest)} in {_PACKAGE}")
    return built[0]


def main(argv: Sequence[str]) -> int:
    """`synthgpt compile [--if-stale]`: build the compiled modules (unless `--if-stale` and current)."""
    args = list(argv)
    if args not in ([], ["--if-stale"]):
        print("usage: synthgpt compile [--if-stale]  (needs mypy and a C compiler)", file=sys.stderr)
        return 2
    if args == ["--if-stale"] and _current():
        print(f"synthgpt compile: the compiled modules are current ({_library_name(_digest())})")
        return 0
    lib = build()
    print(f"synthgpt compile: {len(COMPILED)} modules compiled into {lib.name}")
    return 0


guard()  # on import: `synthgpt/__init__` imports this module before any other
