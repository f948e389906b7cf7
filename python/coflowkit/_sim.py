"""ck.sim: replay a trace under schedulers (`coflowkit sim`)."""

from __future__ import annotations

import json
import os
from typing import Any, Sequence, Union

from . import _native
from ._results import Results

TraceLike = Union[_native.Trace, str, "os.PathLike[str]"]


def as_trace(trace: TraceLike | None, max_flows: int | None = None) -> _native.Trace:
    """A Trace from a Trace, a path, or None / "fb" for the bundled Facebook trace. With
    `max_flows`, a trace of more flows is refused (a file before its flows are made)."""
    if trace is None or (
        isinstance(trace, str) and trace.lower() in ("fb", "fb2010", "facebook")
    ):
        t = _native.bundled_trace("fb")
    elif isinstance(trace, _native.Trace):
        t = trace
    elif max_flows is None:
        return _native.read_trace(os.fspath(trace))
    else:
        return _native.read_trace(os.fspath(trace), max_flows)
    if max_flows is not None and t.num_flows > max_flows:
        raise _native.CoflowkitError(
            f"max_flows = {max_flows}: the trace {t.name} has {t.num_flows} flows, more than that"
        )
    return t


def sim(
    trace: TraceLike | None = None,
    schedulers: str | Sequence[str] | None = None,
    port_rate: str | float | None = None,
    **options: Any,
) -> Results:
    """Replay `trace` (a Trace, a path, or the bundled FB trace by default) under each of
    `schedulers` (default: all) with `port_rate` per port (bits/s or "1gbit"; default 1 Gbit/s).

    Every other keyword is a flag of `coflowkit sim` with `_` for `-`: `baseline="fair"`,
    `coflows=100`, `deadlines=1.0`, `queues=5`, `varys_t=2.0`, `no_starvation=True`,
    `jobs=2`, ... (`ck.sim_flags()` lists them). The GIL is released while the simulations run.
    `max_flows=N` refuses a trace of more than N flows (a path is refused while it is read; the
    default is the CLI's, 2^25). Bad input raises CoflowkitError with the CLI's message.
    """
    max_flows = options.pop("max_flows", None)
    if schedulers is not None:
        if "scheduler" in options:
            raise TypeError("give schedulers or scheduler, not both")
        options["scheduler"] = schedulers
    if port_rate is not None:
        options["port_rate"] = port_rate
    doc = json.loads(_native.sim(as_trace(trace, max_flows), **options))
    return Results([doc])


def sim_flags() -> dict[str, str]:
    """The keywords `sim` takes, with their help text."""
    return dict(_native.sim_flags())
