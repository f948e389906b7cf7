"""The packet-level shuffle simulator (`coflowkit shuffle sim`)."""

from __future__ import annotations

import json
from typing import Any

from . import _native


def sim(**options: Any) -> dict[str, Any]:
    """One shuffle simulated packet by packet: `nodes=160, racks=4, skew=0.5,
    protocol="grpf", seed=1`, and every other flag of `coflowkit shuffle sim` with `_` for
    `-` (`drop=0.02`, `overcommit=4`, ...; `flags()` lists them). Returns its report as a dict
    (completion_s, throughput_gbps, bound_gbps, optimality, peak buffers, ..., seed). A shuffle
    that does not finish raises CoflowkitError, as the CLI exits non-zero."""
    return json.loads(_native.shuffle_sim(**options))


def flags() -> dict[str, str]:
    """The keywords `sim` takes, with their help text."""
    return dict(_native.shuffle_flags())
