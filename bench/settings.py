"""The bench's command line: what to run and how hard (`python bench/run.py --help`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from .cases import CASES

__all__ = ["ALL_CASES", "EXTRA_CASES", "Settings", "parse_args"]

EXTRA_CASES = ("paced", "inproc", "memory", "workers")
ALL_CASES = tuple(c.name for c in CASES) + EXTRA_CASES


@dataclass
class Settings:
    rounds: int
    duration: float
    warmup: float
    connections: int
    paced_streams: int
    paced_frames: int
    paced_interval_ms: float
    memory_requests: int
    inproc_duration: float
    cases: tuple[str, ...]
    loadgen: str
    synthgpt_root: Path | None
    seed: int


def parse_args(argv: list[str] | None) -> Settings:
    ap = argparse.ArgumentParser(prog="bench/run.py", description="synthgpt benchmark (see bench/README.md)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, short loads, small counts")
    ap.add_argument("--rounds", type=int, help="interleaved rounds per case (default 5; quick 1)")
    ap.add_argument(
        "--duration", type=float, help="seconds per load run (default 5; quick 0.5; wrk rounds up)"
    )
    ap.add_argument(
        "--warmup", type=float, help="seconds of warm-up per case and server (default 1; quick 0)"
    )
    ap.add_argument("--connections", type=int, help="concurrent keep-alive connections (default 64; quick 8)")
    ap.add_argument("--cases", help=f"comma-separated subset of: {', '.join(ALL_CASES)}")
    ap.add_argument("--paced-streams", type=int, help="concurrent paced streams (default 500; quick 20)")
    ap.add_argument(
        "--memory-requests", type=int, help="requests before the memory reading (default 200000; quick 300)"
    )
    ap.add_argument(
        "--loadgen",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="auto: wrk when installed, else the built-in Python generator",
    )
    ap.add_argument(
        "--synthgpt-root", type=Path, help="serve synthgpt from this checkout (to compare a patch)"
    )
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    q = a.quick
    cases = tuple(c.strip() for c in a.cases.split(",") if c.strip()) if a.cases else ALL_CASES
    unknown = sorted(set(cases) - set(ALL_CASES))
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(ALL_CASES)}")

    def pick(value: float | int | None, full: float | int, quick: float | int) -> float:
        return float(value if value is not None else (quick if q else full))

    return Settings(
        rounds=int(pick(a.rounds, 5, 1)),
        duration=pick(a.duration, 5.0, 0.5),
        warmup=pick(a.warmup, 1.0, 0.0),
        connections=int(pick(a.connections, 64, 8)),
        paced_streams=int(pick(a.paced_streams, 500, 20)),
        paced_frames=50,
        paced_interval_ms=20.0,
        memory_requests=int(pick(a.memory_requests, 200_000, 300)),
        inproc_duration=pick(None, 2.0, 0.3),
        cases=cases,
        loadgen=a.loadgen,
        synthgpt_root=a.synthgpt_root.resolve() if a.synthgpt_root else None,
        seed=a.seed,
    )
