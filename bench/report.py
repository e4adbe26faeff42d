"""Figures and verdicts: aggregate the rounds of each case and print them next to their targets."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from .loadgen import LoadResult

__all__ = ["Measured", "Side", "Verdicts", "fmt_int", "print_case"]


@dataclass
class Side:
    """All rounds of one server on one case."""

    results: list[LoadResult] = field(default_factory=list)
    cpu_s: list[float | None] = field(default_factory=list)

    def add(self, result: LoadResult, cpu: float | None) -> None:
        self.results.append(result)
        self.cpu_s.append(cpu)

    @property
    def rps(self) -> list[float]:
        return [r.rps for r in self.results]

    def cpu_us_per_request(self) -> float | None:
        if not self.results or any(c is None for c in self.cpu_s):
            return None
        requests = sum(r.requests for r in self.results)
        return sum(c for c in self.cpu_s if c is not None) / requests * 1e6 if requests else None

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.results)


@dataclass
class Measured:
    synth: Side = field(default_factory=Side)
    ceiling: Side = field(default_factory=Side)
    batched: Side = field(default_factory=Side)
    """The ceiling app with synthgpt's batched writes (some cases only): a reference, not a target."""

    def ratios(self, ceiling: Side | None = None) -> list[float]:
        other = self.ceiling if ceiling is None else ceiling
        return [s / c for s, c in zip(self.synth.rps, other.rps, strict=False) if c > 0]


def fmt_int(x: float) -> str:
    return f"{x:,.0f}"


def _spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    if not values:
        return "n/a"
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))} .. {fmt.format(max(values))}]"


def _side_line(label: str, side: Side) -> str:
    if not side.results:
        return f"   {label:<9} n/a"
    p50 = statistics.median(r.p50_ms for r in side.results)
    p99 = statistics.median(r.p99_ms for r in side.results)
    cpu = side.cpu_us_per_request()
    cpu_txt = f"{cpu:,.0f}" if cpu is not None else "n/a"
    return f"   {label:<9} {_spread(side.rps):<28} {p50:>8.2f} {p99:>8.2f} {cpu_txt:>11} {side.errors:>7}"


class Verdicts:
    """Every target with its measured figure, printed again as a summary at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, what: str, measured: str, target: str, ok: bool | None) -> str:
        verdict = "n/a" if ok is None else ("PASS" if ok else "FAIL")
        self.rows.append((what, measured, target, verdict))
        return verdict

    def print(self) -> None:
        print("\n== targets")
        width = max((len(r[0]) for r in self.rows), default=10)
        for what, measured, target, verdict in self.rows:
            print(f"   {what:<{width}}  {measured:<34} target {target:<30} {verdict}")


def print_case(
    name: str,
    title: str,
    details: str,
    runs: list[tuple[str, str, Measured, float]],
    ceiling_desc: str,
    verdicts: Verdicts,
) -> None:
    """One case: for each (heading, verdict row, figures, target) of `runs`, both servers and the ratio."""
    print(f"\n== {name}: {title}")
    if details:
        print(f"   {details}")
    for heading, row, m, target in runs:
        print(f"   -- {heading}")
        print(
            f"   {'server':<9} {'req/s median [min .. max]':<28} {'p50 ms':>8} {'p99 ms':>8}"
            f" {'cpu us/req':>11} {'errors':>7}"
        )
        print(_side_line("synthgpt", m.synth))
        print(_side_line("ceiling", m.ceiling))
        ratios = m.ratios()
        if not ratios:
            verdict = verdicts.add(row, "n/a", f">= {target}x ceiling", None)
            print(f"   ratio     n/a   target >= {target}x  {verdict}")
            continue
        med = statistics.median(ratios)
        measured = f"{med:.2f}x ceiling (median of {len(ratios)} rounds)"
        verdict = verdicts.add(row, measured, f">= {target}x ceiling", med >= target)
        print(
            f"   ratio     {_spread(ratios, '{:.2f}')}x same-round vs ceiling ({ceiling_desc});"
            f" target >= {target}x  {verdict}"
        )
        if m.batched.results:
            print(_side_line("ceiling+", m.batched))
            print(
                f"   ratio+    {_spread(m.ratios(m.batched), '{:.2f}')}x same-round vs ceiling+"
                " (reference: the ceiling with synthgpt's batched writes)"
            )
        if m.synth.errors or m.ceiling.errors or m.batched.errors:
            print("   warning: errors during the load (non-2xx, resets or timeouts): figures are suspect")


def paced_lines(s: dict[str, Any]) -> list[str]:
    return [
        f"   streams {s['streams']} x {s['frames']} frames x {s['interval_ms']:g} ms;"
        f" planned first-to-last frame {s['planned_ms']:.0f} ms",
        f"   completed {s['completed']}, lost {s['lost']};"
        f" within 5% of planned: {s['within_5pct']}/{s['streams']}",
        f"   duration error: median {s['span_err_pct_p50']:.2f}%, max {s['span_err_pct_max']:.2f}%",
        f"   gap error: p50 {s['gap_err_ms_p50']:.2f} ms, p99 {s['gap_err_ms_p99']:.2f} ms,"
        f" max {s['gap_err_ms_max']:.2f} ms",
        f"   gap error once every stream has started ({s['steady_gaps']} gaps): p99"
        f" {s['steady_gap_err_ms_p99']:.2f} ms",
        f"   first frame after request: p50 {s['first_frame_ms_p50']:.1f} ms,"
        f" p99 {s['first_frame_ms_p99']:.1f} ms",
    ]


__all__ += ["paced_lines"]
