"""The `workers` case: does `serve --workers 2` answer distinct requests ~2x as fast as one worker?

The honest measurement needs the two workers on two cores of their own and the load generator on a third.
Where the machine has that (3+ usable cores), both servers are pinned to the same two cores, the load
generator to the rest, and the verdict is the measured ratio of requests/s (interleaved rounds, distinct
chat requests, the same load for both).

On a 2-core machine the load generator has to share the servers' cores, so the measured ratio mostly shows
how the generator and the workers divide two cores. The verdict is then the ratio *projected* from what the
servers spend, which the generator's presence does not change much:

    projected = (cpu per request, 1 worker) / (cpu per request, 2 workers) / (busiest worker's share of it)

i.e. what 2 workers would serve if each had a core: the busiest worker's share (0.5 when the kernel spreads
connections evenly) bounds the throughput, and extra cost per request (contention, the supervisor) lowers
it. Both figures are printed, with the per-worker split, and the report says which one was judged.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import TYPE_CHECKING

from bench.cases import CASES, prepare
from bench.loadgen import choose_loadgen
from bench.procs import _stat_fields, tree_pids

if TYPE_CHECKING:
    from bench.run import Bench

__all__ = ["TARGET", "run_workers"]

TARGET = 1.8


def _cpu_by_pid(pid: int) -> dict[int, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for p in tree_pids(pid):
        f = _stat_fields(p)
        if f is not None:
            out[p] = (int(f[11]) + int(f[12])) / ticks
    return out


def _wait_ready(pid: int, workers: int, timeout: float = 60.0) -> None:
    """Until the supervisor's workers exist and are done starting (their CPU time stops growing): the
    socket listens before they have imported anything, and their start-up must not count as answers."""
    deadline = time.monotonic() + timeout
    last: dict[int, float] = {}
    while time.monotonic() < deadline:
        now = _cpu_by_pid(pid)
        if len(now) > workers and now == last:
            return
        last = now
        time.sleep(0.3)


def _usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def run_workers(bench: Bench) -> None:
    s = bench.s
    cpus = _usable_cpus()
    dedicated = len(cpus) >= 3
    server_cpus = set(cpus[:2]) if dedicated else None
    load_cpus = set(cpus[2:]) if dedicated else None
    how = (
        f"servers on cpu {cpus[0]},{cpus[1]}, load generator on cpu {','.join(map(str, cpus[2:]))}: judged on"
        " the measured requests/s"
        if dedicated
        else f"{len(cpus) or '?'} usable cores: the load generator shares the workers' cores, so the verdict"
        " is the ratio projected from CPU per request and the workers' balance (see bench/workers.py)"
    )
    print("\n== workers: distinct chat requests, serve --workers 2 vs --workers 1")
    print(f"   measured how: {how}")
    gen = choose_loadgen(s.loadgen, load_cpus, bench.workdir)
    case = next(c for c in CASES if c.name == "chat")
    servers = {}
    for n in (1, 2):
        proc, port = bench.start_synthgpt(f"synthgpt-{n}w", [], workers=n, cpus=server_cpus)
        servers[n] = (proc, port)
        _wait_ready(proc.pid, n)
    prep = prepare(case, f"http://127.0.0.1:{servers[1][1]}")
    if prep.skip is not None:
        for proc, _ in servers.values():
            bench.stop(proc)
        print(f"   {prep.skip}")
        bench.verdicts.add("workers 2 vs 1", prep.skip, f">= {TARGET}x", None)
        return
    targets = {n: bench.distinct_target(prep, port) for n, (_, port) in servers.items()}
    rps: dict[int, list[float]] = {1: [], 2: []}
    requests = {1: 0, 2: 0}
    cpu: dict[int, dict[int, float]] = {1: {}, 2: {}}
    for n in (1, 2):  # always: every worker's first answers load what the rules need
        gen.run(targets[n], s.connections, max(s.warmup, 1.0))
    for r in range(s.rounds):
        for n in ((1, 2) if r % 2 == 0 else (2, 1)):
            proc = servers[n][0]
            before = _cpu_by_pid(proc.pid)
            result = gen.run(targets[n], s.connections, s.duration)
            after = _cpu_by_pid(proc.pid)
            for pid, t in after.items():
                cpu[n][pid] = cpu[n].get(pid, 0.0) + t - before.get(pid, 0.0)
            rps[n].append(result.rps)
            requests[n] += result.requests
    for proc, _ in servers.values():
        bench.stop(proc)
    measured = [b / a for a, b in zip(rps[1], rps[2], strict=True) if a > 0]
    us = {n: sum(cpu[n].values()) / requests[n] * 1e6 if requests[n] else 0.0 for n in (1, 2)}
    workers2 = sorted((t for pid, t in cpu[2].items() if pid != servers[2][0].pid), reverse=True)[:2]
    busiest = workers2[0] / sum(workers2) if workers2 and sum(workers2) > 0 else 1.0
    projected = us[1] / us[2] / busiest if us[2] > 0 else 0.0
    for n in (1, 2):
        med_n = statistics.median(rps[n]) if rps[n] else 0.0
        spread = f"[{min(rps[n], default=0):,.0f} .. {max(rps[n], default=0):,.0f}]"
        print(f"   --workers {n}: req/s median {med_n:,.0f} {spread}, cpu {us[n]:,.0f} us/req")
    split = " / ".join(f"{t / sum(workers2):.0%}" for t in workers2) if workers2 else "n/a"
    print(f"   workers' CPU split (2 workers): {split}")
    med = statistics.median(measured) if measured else 0.0
    print(f"   measured ratio {med:.2f}x (rounds: {', '.join(f'{x:.2f}' for x in measured)})")
    print(f"   projected ratio {projected:.2f}x = {us[1]:,.0f} / {us[2]:,.0f} us per request / busiest share"
          f" {busiest:.2f}")  # fmt: skip
    judged, label = (med, "measured") if dedicated else (projected, "projected")
    measured_text = f"{judged:.2f}x ({label}; {len(cpus)} cores)"
    bench.verdicts.add("workers 2 vs 1 distinct", measured_text, f">= {TARGET}x", judged >= TARGET)
