"""polars as an option: the package's DataFrames converted, when polars is installed.

Column by column, without pyarrow: numeric and boolean columns as their numpy arrays (no
copy in pandas), the rest (names, bins, optional deadlines) as Python values, None as null.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def to_polars(frame: pd.DataFrame) -> Any:
    """`frame` (any DataFrame the package returns) as a polars DataFrame."""
    try:
        import polars as pl
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_polars needs polars: pip install polars") from e
    cols = {}
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":
            cols[str(name)] = col.to_numpy()
        else:
            cols[str(name)] = [None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v
                               for v in col.tolist()]
    return pl.DataFrame(cols)
