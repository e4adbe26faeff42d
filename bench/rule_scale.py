"""How loading, checking and serving scale with the number of rules (issue 11: 20,000 rules took `check`
over 60 s and `serve` 45 s to start, as `RuleSet.add` and the lint compared every pair).

    .venv/bin/python bench/rule_scale.py                 # 1k, 5k, 20k rules
    .venv/bin/python bench/rule_scale.py --rules 2000,20000 --no-serve

Each size writes one rule file of varied rules (plain `contains`, `all` of model and text, `any` of two
texts, a few with `times`, a catch-all last), then times, in fresh processes: `load_files` and
`synthgpt check` (load + lint) in CPU seconds of the process (import included, ~1 s), and
`synthgpt serve` until `/healthz` answers (wall clock). Near-linear means the per-rule time stays flat
as the count grows.
"""

from __future__ import annotations

import argparse
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def rule_file(n: int) -> str:
    lines = ["rules:"]
    for i in range(n - 1):
        kind = i % 4
        if kind == 0:
            match = f'{{last_user: {{contains: "topic {i}"}}}}'
        elif kind == 1:
            match = f'{{all: [{{model: gpt-4o}}, {{last_user: {{contains: "subject {i}"}}}}]}}'
        elif kind == 2:
            alpha = f'{{last_user: {{contains: "alpha {i}"}}}}'
            beta = f'{{last_user: {{contains: "beta {i}"}}}}'
            match = f"{{any: [{alpha}, {beta}]}}"
        else:
            match = f'{{last_user: {{regex: "^question {i}$"}}}}'
        times = "\n    times: 3" if i % 50 == 0 else ""
        lines.append(f"  - name: r{i}\n    match: {match}{times}\n    output: {{text: \"answer {i}\"}}")
    lines.append("  - name: fallback\n    match: always\n    output: {text: fallback}")
    return "\n".join(lines) + "\n"


def _timed(argv: list[str]) -> float:
    """CPU seconds (user + system) of one run of `argv`: unlike the wall clock, what other processes on a
    shared machine do hardly moves it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_start(path: Path) -> float:
    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "synthgpt", "serve", str(path), "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    return time.perf_counter() - start
            except OSError:
                if proc.poll() is not None or time.perf_counter() - start > 300:
                    return float("nan")
                time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", default="1000,5000,20000", help="comma-separated rule counts")
    parser.add_argument("--no-serve", action="store_true", help="skip timing `synthgpt serve` start-up")
    args = parser.parse_args()
    load = "from synthgpt.rules.loader import load_files; import sys; load_files([sys.argv[1]])"
    print(f"{'rules':>7} {'load s':>8} {'check s':>8} {'serve s':>8}   per 1k rules: load / check / serve"
          "   (load, check: CPU s; serve: wall s)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.rules.split(",")):
            path = Path(tmp) / f"rules-{n}.yaml"
            path.write_text(rule_file(n))
            t_load = _timed([PY, "-c", load, str(path)])
            t_check = _timed([PY, "-m", "synthgpt", "check", "-q", str(path)])
            t_serve = float("nan") if args.no_serve else _serve_start(path)
            k = n / 1000
            print(f"{n:>7} {t_load:>8.2f} {t_check:>8.2f} {t_serve:>8.2f}   "
                  f"{t_load / k:.3f} / {t_check / k:.3f} / {t_serve / k:.3f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
