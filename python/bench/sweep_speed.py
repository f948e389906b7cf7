"""A 100-run sweep on one local worker, then on two (and again, alternating): the wall time of
each. `python python/bench/sweep_speed.py [RUNS] [REPEATS]`.

Each run replays the first 60 FB coflows under Sincronia with deadlines synthesized from its own
seed (so every run differs), in its own worker process."""

import os
import sys
import time

import coflowkit as ck


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    configs = ck.grid(trace="fb", coflows=int(os.environ.get("COFLOWS", "60")), scheduler="sincronia", baseline="sincronia",
                      deadlines=1.0, seed=list(range(runs)))
    print(f"{runs} runs; load average {os.getloadavg()[0]:.1f} at start", flush=True)
    for _ in range(repeats):
        walls = {}
        for workers in (1, 2):
            t = time.perf_counter()
            df = ck.sweep(configs, backend="local", workers=workers)
            wall = time.perf_counter() - t
            assert len(df) == runs
            print(f"workers={workers}: {wall:.1f} s wall, sum of run walls {df['wall_s'].sum():.1f} s, "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)
            walls[workers] = wall
        print(f"two workers / one: {walls[2] / walls[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
