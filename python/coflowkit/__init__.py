"""coflowkit in Python: coflow traces, the exact replay simulator under every scheduler,
the packet-level shuffle simulator, and sweeps over them, with results as pandas DataFrames.

    import coflowkit as ck
    tr = ck.bundled_trace("fb")
    res = ck.sim(tr, schedulers=["varys", "aalo", "fair"], port_rate="1gbit")
    res.summary; res.coflows; res.plot_cdf()

The work is done by the Rust crates (a thin PyO3 binding); every keyword of `sim` and
`shuffle.sim` is a flag of the `coflowkit` command with `_` for `-`.
"""

from __future__ import annotations

from . import runtime, shuffle, trace
from ._native import CoflowkitError, Trace, __version__, bundled_trace, read_trace
from ._polars import to_polars
from ._results import Results, load_results
from ._sim import sim, sim_flags
from ._sweep import grid, sweep

__all__ = [
    "CoflowkitError",
    "Results",
    "Trace",
    "__version__",
    "bundled_trace",
    "grid",
    "load_results",
    "read_trace",
    "runtime",
    "shuffle",
    "sim",
    "sim_flags",
    "sweep",
    "to_polars",
    "trace",
]

