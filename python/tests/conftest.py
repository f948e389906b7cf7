import os
import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fb():
    import coflowkit as ck

    return ck.bundled_trace("fb")


@pytest.fixture(scope="session")
def small(fb):
    """The first 40 FB coflows: every scheduler runs on it in well under a second."""
    return fb.head(40)


@pytest.fixture(scope="session")
def cli():
    """The coflowkit binary of this checkout (built by `cargo test`/`cargo build`), if any."""
    env = os.environ.get("COFLOWKIT_BIN")
    cands = [env] if env else []
    cands += [str(REPO / "target" / p / "coflowkit") for p in ("release", "debug")]
    cands.append(shutil.which("coflowkit") or "")
    for c in cands:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    pytest.skip("no coflowkit binary (cargo build first, or set COFLOWKIT_BIN)")
