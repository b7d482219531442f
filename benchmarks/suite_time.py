"""How long the test suite takes, quiet and busy, beside a fixed CPU workload timed in the same run.

    python benchmarks/suite_time.py [--runs 1] [--hogs 0] [--log-dir results/suite_time] [-- PYTEST_ARGS]

Runs the README's test command (`python -m pytest -q`, so pyproject's addopts: `-n auto`) in this
checkout `--runs` times, with `--hogs` CPU-bound processes (`python -c "while True: pass"`, each in
a session of its own) running for the whole of each run: issue 35's busy run is `--hogs 2`.
Beside each run: its result line, its wall time, the machine's busy, idle and stolen CPU seconds
over it (/proc/stat; stolen: the hypervisor gave our CPUs to other guests, not counted as busy),
and the baseline, a fixed workload (3M loop iterations in a fresh python, median of 3) timed just
before and just after. The host's speed here varied by a factor of 2 within an hour, so a suite's
time says little without the workload's and the stolen seconds beside it. Each run's output is kept in
`--log-dir`. Goal (issue 35): under 300 s on a quiet 2-core machine, and green quiet and busy.
Exit status 1 if any run was red.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 300.0
WORKLOAD = "s = 0\nfor i in range(3_000_000):\n    s += i * i\n"
HOG = "while True: pass"
SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error).*?) in ([\d.]+)s")


def workload_s() -> float:
    """Wall seconds of the fixed workload, a fresh python each time, median of 3."""
    times = []
    for _ in range(3):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", WORKLOAD], check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def cpu_seconds() -> tuple[float, float, float]:
    """(busy, idle, stolen) CPU seconds of the whole machine since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle and iowait
    stolen = fields[7] if len(fields) > 7 else 0
    # user and nice already count guest and guest_nice (fields 8 and 9): left out of the sum
    return (sum(fields[:7]) - idle) / tick, idle / tick, stolen / tick


def run_suite(log: Path, hogs: int, pytest_args: list[str]) -> dict[str, object]:
    """One full run of the suite with `hogs` CPU hogs beside it; its figures."""
    before = workload_s()
    burners = [subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True) for _ in range(hogs)]
    try:
        busy0, idle0, stolen0 = cpu_seconds()
        began = time.perf_counter()
        with log.open("w") as out:
            code = subprocess.run([sys.executable, "-m", "pytest", "-q", *pytest_args], cwd=ROOT,
                                  stdout=out, stderr=subprocess.STDOUT).returncode
        wall = time.perf_counter() - began
        busy1, idle1, stolen1 = cpu_seconds()
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    after = workload_s()
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    result = next((m.group(1) for line in reversed(lines) if (m := SUMMARY.match(line))),
                  lines[-1] if lines else "no output")
    return {"exit": code, "result": result, "wall": wall, "busy": busy1 - busy0, "idle": idle1 - idle0,
            "stolen": stolen1 - stolen0, "before": before, "after": after}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="full runs of the suite (default 1)")
    parser.add_argument("--hogs", type=int, default=0,
                        help="CPU hogs running for the whole of each run (issue 35's busy run: 2)")
    parser.add_argument("--log-dir", type=Path, default=ROOT / "results" / "suite_time",
                        help="where each run's output is kept (default results/suite_time)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    if args.runs < 1 or args.hogs < 0:
        parser.error("--runs must be at least 1 and --hogs at least 0")
    args.log_dir.mkdir(parents=True, exist_ok=True)
    # a kill (SIGTERM) stops the hogs too: they run in sessions of their own, out of a Ctrl-C's reach
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"{os.cpu_count()} CPUs, {args.hogs} hogs; goal: under {GOAL_S:.0f} s quiet, green quiet and busy")
    print(f"{'run':>3}  {'suite s':>7}  {'busy CPU s':>10}  {'idle CPU s':>10}  "
          f"{'stolen CPU s':>12}  {'workload s before/after':>23}  result")
    red = 0
    for n in range(1, args.runs + 1):
        log = args.log_dir / f"run{n}-hogs{args.hogs}.log"
        r = run_suite(log, args.hogs, args.pytest_args)
        red += r["exit"] != 0
        print(f"{n:>3}  {r['wall']:7.1f}  {r['busy']:10.1f}  {r['idle']:10.1f}  {r['stolen']:12.1f}  "
              f"{r['before']:11.2f} / {r['after']:<9.2f}  {r['result']} (exit {r['exit']}; {log})",
              flush=True)
    return 1 if red else 0


if __name__ == "__main__":
    sys.exit(main())
