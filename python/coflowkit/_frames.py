"""DataFrames over the raw columns the extension hands out (numpy views of little-endian
arrays: no Python object per flow)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

FLOW_COLUMNS = [("coflow", "<u8"), ("src", "<u4"), ("dst", "<u4"), ("bytes", "<f8"), ("arrival_s", "<f8")]
COFLOW_COLUMNS = [
    ("id", "<u8"),
    ("arrival_s", "<f8"),
    ("flows", "<u8"),
    ("bytes", "<f8"),
    ("length_bytes", "<f8"),
    ("deadline_s", "<f8"),
    ("weight", "<f8"),
]


def _frame(spec: list[tuple[str, str]], cols: Sequence[bytes]) -> pd.DataFrame:
    return pd.DataFrame({name: np.frombuffer(c, dtype=t) for (name, t), c in zip(spec, cols)})


def flows_frame(cols: Sequence[bytes]) -> pd.DataFrame:
    return _frame(FLOW_COLUMNS, cols)


def coflows_frame(cols: Sequence[bytes]) -> pd.DataFrame:
    return _frame(COFLOW_COLUMNS, cols)
