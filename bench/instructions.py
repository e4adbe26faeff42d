"""Instructions per distinct request, by stage, counted by cachegrind: a figure that does not move with the
machine's load, to judge changes of a percent or two that timings (±5 % run to run here) cannot.

For each case and stage a child process answers 30 and then 230 distinct requests (after a warm-up) under
`valgrind --tool=cachegrind`; the difference of the two totals over 200 is one request's instructions,
startup and imports cancelled out. The stages nest:

- `accept`: parse, decode and fingerprint the request (`pipeline.accept`);
- `resolve`: that, then the engine's answer (`MockGPT.resolve`: the rule search, the draw, the journal);
- `pipeline`: that, then encoding the answer and finishing the call (`pipeline.respond`), as `render` does;
- `app`: the served ASGI app, as `bench.distinct` calls it (the memo off): routing, observing, headers;
- `ceiling`: not a stage but the yardstick, `bench/ceiling_app.py` sending synthgpt's answer to the case's
  request (the same bytes) to the same requests, as `bench.appbench` runs it.

    python -m bench.instructions                                 # chat, every stage (~4 min)
    python -m bench.instructions --cases chat,schema --stages app
    python -m bench.instructions --synthgpt-root /tmp/base       # another checkout, to compare
    python -m bench.instructions --cases chat --stages app --functions 30   # and where they go

`--functions N` runs each stage under callgrind instead and lists its N most expensive functions by
inclusive instructions per request (the same difference of two runs): compiled synthgpt (mypyc's
`CPyDef_module___function` names), CPython's and the C libraries'. Interpreted Python functions have no
name in callgrind's eyes (their frames are the interpreter's loop), and recursive cycles are left out.
The stage's total line is still cachegrind's, the figure rounds compare: callgrind's count of the same
runs comes out ~1 % apart (628,873 against 634,654 for chat's app stage), so it is not taken instead.

The cyclic garbage collector is off while the counted requests run (its passes come in lumps that one run
has and the other not); `serve` runs it, `gc.freeze()`ing what startup made.

Needs valgrind (`apt-get install -y valgrind`). The counts are of this interpreter and build: compare
checkouts on one machine, with both compiled or both not (`SYNTHGPT_PURE_PYTHON=1` applies to the child).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["STAGES", "TOTAL", "function_costs", "main", "run_stage"]

STAGES = ("accept", "resolve", "pipeline", "app", "ceiling")
_FEW, _MANY = 30, 230
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def run_stage(case_name: str, stage: str, n: int, root: Path | None = None) -> int:
    """Answer `n` distinct requests of `case_name` up to `stage` (what the child does under cachegrind), with
    the synthgpt of checkout `root` when given (the bench's own modules stay this checkout's); the number of
    calls the engine journaled, warm-up included."""
    from bench.appbench import AsgiCall, _synthgpt_app, ceiling_for, rule_files
    from bench.cases import CASES
    from bench.distinct import bodies

    if root is not None:
        sys.path.insert(0, str(root))
    from synthgpt.codec.headers import kept_raw_headers
    from synthgpt.pipeline import Accepted, accept, finish_answered, respond
    from synthgpt.server.routes import route_codecs

    case = next(c for c in CASES if c.name == case_name)
    app: Any = _synthgpt_app(rule_files() if case.server == "rules" else [], False)  # its state: the engine
    mock = app.state.mock
    codec = next(codec for route, codec in route_codecs() if route.path == case.path)
    headers = kept_raw_headers(AsgiCall(case.path, b"", case.headers).scope["headers"])

    def answer(body: bytes) -> None:
        accepted = accept(mock, codec, body, headers, {}, path=case.path)
        if stage == "accept" or not isinstance(accepted, Accepted):
            return
        if stage == "resolve":
            drawn = mock.resolve(accepted.request)
            mock.finish(drawn.record, None)
            return
        finish_answered(mock, respond(mock, codec, accepted))

    query, served_app = "", app
    if stage == "ceiling":
        query, served_app = f"case={case.name}", ceiling_for(case, app)[1]

    async def served(reqs: list[bytes]) -> None:
        for body in reqs:
            status, _, _ = await AsgiCall(case.path, body, case.headers, query=query).run(served_app)
            if status != 200:  # a refusal is not the path being counted
                raise SystemExit(f"bench.instructions: {case_name}/{stage} answered {status}")

    # as many bodies made whatever `n`: making them is not the request's cost, and cancels out
    warm_up, counted = bodies(case, 20, 10**6), bodies(case, _MANY)[:n]
    for reqs in (warm_up, counted):
        if reqs is counted:
            # the cyclic collector's passes come in lumps (a full one scans every object the caches and the
            # journal hold): one in the longer run and none in the shorter would count it 200 times over
            gc.collect()
            gc.disable()
        if stage in ("app", "ceiling"):
            asyncio.run(served(reqs))
        else:
            for body in reqs:
                answer(body)
    gc.enable()
    total: int = mock.journal.total
    return total


def _child(root: Path, case: str, stage: str, n: int) -> list[str]:
    return [sys.executable, __file__, "--child", case, stage, str(n), "--synthgpt-root", str(root)]


_ENV = {**os.environ, "PYTHONHASHSEED": "0"}  # the same string hashes, so the same dict probes


def _functions(root: Path, case: str, stage: str, n: int) -> dict[str, int]:
    """Inclusive instructions by function of one child run under callgrind (`function_costs`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *_child(root, case, stage, n)],
            env=_ENV, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not out.exists():
            raise SystemExit(f"bench.instructions: {case}/{stage} failed under callgrind:\n"
                             f"{done.stderr[-2000:]}")  # fmt: skip
        annotated = subprocess.run(
            ["callgrind_annotate", "--auto=no", "--inclusive=yes", "--threshold=100", str(out)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    return function_costs(annotated.stdout)


TOTAL = "PROGRAM TOTALS"
"""`function_costs`' key for the run's whole count."""
_COST_LINE = re.compile(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.+?)\s*$")


def function_costs(annotated: str) -> dict[str, int]:
    """`callgrind_annotate --inclusive=yes` output as function -> instructions: a function's name without
    its file, its library and mypyc's `CPyDef_` prefix, the largest of a name's entries; the run's whole
    count under `TOTAL`. Left out: functions without a name (`???`: interpreted Python runs as the
    interpreter's loop), mypyc's `CPyPy_` wrappers (each its `CPyDef_`'s cost again) and recursive cycles
    (`'2`: callgrind counts their members' costs several times over)."""
    costs: dict[str, int] = {}
    table = False
    for line in annotated.splitlines():
        if "file:function" in line:
            table = True
            continue
        found = _COST_LINE.match(line)
        if found is not None and found.group(2) == TOTAL:
            costs[TOTAL] = int(found.group(1).replace(",", ""))
            continue
        if found is None or not table:
            continue
        name = re.sub(r"\s*\[[^\]]*\]$", "", found.group(2))  # the library it lives in
        where, _, name = name.rpartition(":")
        if where.startswith("???") or name.startswith(("???", "CPyPy_")) or re.search(r"'\d+$", name):
            continue
        name = name.removeprefix("CPyDef_")
        # a function callgrind lists under more than one file (code inlined from a header, or its source
        # and its object named apart) is one function: its largest entry is its cost
        costs[name] = max(costs.get(name, 0), int(found.group(1).replace(",", "")))
    return costs


def _top_functions(root: Path, case: str, stage: str, limit: int) -> list[tuple[int, str]]:
    """The `limit` functions of the most inclusive instructions per request at `stage`, below the run's
    roots (the interpreter's start, `main`: nearly the whole count, whatever the request does)."""
    few, many = _functions(root, case, stage, _FEW), _functions(root, case, stage, _MANY)
    per = {name: (many.get(name, 0) - few.get(name, 0)) // (_MANY - _FEW) for name in many}
    whole = per.pop(TOTAL, 0)
    ranked = sorted(((cost, name) for name, cost in per.items() if 0 < cost < 0.95 * whole), reverse=True)
    return ranked[:limit]


def _count(root: Path, case: str, stage: str, n: int) -> int:
    """Instructions of one child run (`run_stage` under cachegrind)."""
    child = _child(root, case, stage, n)
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *child],
        env=_ENV, capture_output=True, text=True, check=False,
    )  # fmt: skip
    found = _REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"bench.instructions: {case}/{stage} failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    from bench.cases import CASES

    ap = argparse.ArgumentParser(description="instructions per distinct request, by stage (cachegrind)")
    ap.add_argument("--cases", default="chat")
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--synthgpt-root", type=Path, help="count this checkout's synthgpt instead")
    ap.add_argument("--functions", type=int, default=0, metavar="N",
                    help="also list each stage's N costliest functions (callgrind; ~1 min a stage)")
    ap.add_argument("--child", nargs=3, metavar=("CASE", "STAGE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        case, stage, n = args.child
        run_stage(case, stage, int(n), args.synthgpt_root)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench.instructions needs valgrind: apt-get install -y valgrind")
    names = [c.name for c in CASES]
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [c for c in cases if c not in names] + [s for s in stages if s not in STAGES]
    if unknown:
        raise SystemExit(f"bench.instructions: unknown {', '.join(unknown)} (cases: {', '.join(names)}; "
                         f"stages: {', '.join(STAGES)})")  # fmt: skip
    root = (args.synthgpt_root or Path(__file__).resolve().parent.parent).resolve()
    print(f"synthgpt from {root}; instructions per distinct request ({_MANY} - {_FEW} requests, cachegrind)")
    print(f"{'case':<18} {'stage':<9} {'instructions':>12} {'added':>10}")
    for case in cases:
        before = 0
        for stage in stages:
            total = (_count(root, case, stage, _MANY) - _count(root, case, stage, _FEW)) // (_MANY - _FEW)
            added = f"{total - before:+,}" if before and stage != "ceiling" else ""
            print(f"{case:<18} {stage:<9} {total:>12,} {added:>10}", flush=True)
            before = total
            if args.functions > 0:
                for cost, name in _top_functions(root, case, stage, args.functions):
                    print(f"    {cost:>12,}  {name}", flush=True)


if __name__ == "__main__":
    main()
