"""polars as an option: the package's DataFrames as polars frames, the same values."""

import pytest

import coflowkit as ck

pl = pytest.importorskip("polars", reason="polars is not installed (pip install polars)")


def test_results_and_traces_as_polars(small):
    # With deadlines, so some columns hold nulls for the coflows' optional fields.
    res = ck.sim(small, schedulers=["varys", "fifo"], baseline="varys", deadlines=1.0)
    frames = res.to_polars()
    for name, pd_frame in [("coflows", res.coflows), ("summary", res.summary)]:
        f = frames[name]
        assert isinstance(f, pl.DataFrame)
        assert f.columns == [str(c) for c in pd_frame.columns]
        assert f.height == len(pd_frame)
    c, p = frames["coflows"], res.coflows
    assert c["cct_s"].to_list() == p["cct_s"].tolist()
    assert c["scheduler"].to_list() == p["scheduler"].tolist()
    assert c["bin"].to_list() == p["bin"].tolist()
    assert c["cct_s"].dtype == pl.Float64
    assert c["met_deadline"].to_list() == p["met_deadline"].tolist()
    flows = ck.to_polars(small.flows())
    assert flows.height == small.num_flows
    assert flows["bytes"].sum() == small.flows()["bytes"].sum()
