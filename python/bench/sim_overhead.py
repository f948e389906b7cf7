"""What the Python call adds to a `sim` run on FB: `coflowkit sim` (the release binary) against
`ck.sim` on the same trace and flags, alternating, wall time of each including reading the trace
and (for Python) building the DataFrames. `python python/bench/sim_overhead.py BIN [SCHED] [N]`;
BIN `-` skips the binary and compares the Python call with the simulation's own wall time
(measured inside the Rust run), an upper bound on what Python adds."""

import os
import subprocess
import sys
import time
from pathlib import Path

import coflowkit as ck

TRACE = str(Path(__file__).resolve().parents[2] / "data/traces/FB2010-1Hr-150-0.txt")


def main() -> None:
    binary = sys.argv[1]
    sched = sys.argv[2] if len(sys.argv) > 2 else "varys"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    cli_t, py_t, py_sim = [], [], []
    for _ in range(n):
        t = time.perf_counter()
        if binary != "-":
            subprocess.run([binary, "sim", "--trace", TRACE, "-s", sched, "--baseline", sched, "--jobs", "1"],
                           check=True, stdout=subprocess.DEVNULL)
        cli_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        res = ck.sim(ck.read_trace(TRACE), schedulers=sched, baseline=sched, jobs=1)
        _ = res.coflows, res.summary
        py_t.append(time.perf_counter() - t)
        py_sim.append(float(res.summary["wall_s"][0]))
        print(f"cli {cli_t[-1]:.3f} s  python {py_t[-1]:.3f} s (simulation itself {py_sim[-1]:.3f} s)  "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    over = [p - s for p, s in zip(py_t, py_sim)]
    print(f"{sched}: cli median {sorted(cli_t)[n // 2]:.3f} s, python median {sorted(py_t)[n // 2]:.3f} s; "
          f"python outside the simulation: {min(over):.3f}-{max(over):.3f} s "
          f"({100 * min(o / s for o, s in zip(over, py_sim)):.1f}-{100 * max(o / s for o, s in zip(over, py_sim)):.1f} % of it)")


if __name__ == "__main__":
    main()
