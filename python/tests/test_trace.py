import pickle

import numpy as np
import pytest

import coflowkit as ck


def test_fb_facts(fb):
    # shared/specs/traces.md: 526 coflows, 706,397 flows on 150 ports.
    assert len(fb) == 526
    assert fb.num_flows == 706_397
    assert fb.ports == 150


def test_flows_frame_matches_the_trace(fb):
    f = fb.flows()
    assert list(f.columns) == ["coflow", "src", "dst", "bytes", "arrival_s"]
    assert len(f) == fb.num_flows
    assert f["bytes"].sum() == pytest.approx(fb.total_bytes, rel=1e-12)
    assert f["src"].max() < fb.ports and f["dst"].max() < fb.ports
    c = fb.coflows()
    assert len(c) == 526
    # A coflow's width and size are its flows' count and sum.
    by = f.groupby("coflow")["bytes"].agg(["count", "sum", "max"])
    c = c.set_index("id")
    assert (by["count"].to_numpy() == c.loc[by.index, "flows"].to_numpy()).all()
    assert np.allclose(by["sum"].to_numpy(), c.loc[by.index, "bytes"].to_numpy())
    assert np.allclose(by["max"].to_numpy(), c.loc[by.index, "length_bytes"].to_numpy())


def test_head_takes_the_first_arrivals(fb):
    h = fb.head(10)
    assert len(h) == 10
    assert h.coflows()["arrival_s"].max() <= fb.coflows()["arrival_s"].nsmallest(11).max()


def test_bad_trace_names_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("4 2\n1 0 1 0 1 1:1\n2 0 1 7 1 1:1\n")
    with pytest.raises(ck.CoflowkitError) as e:
        ck.read_trace(bad)
    assert str(e.value) == f"{bad}:3: field 4 (mapper port): port 7 out of range 0..4"
    assert isinstance(e.value, ValueError)


def test_missing_file_is_an_error_not_a_crash(tmp_path):
    with pytest.raises(ck.CoflowkitError, match="nope.txt"):
        ck.read_trace(tmp_path / "nope.txt")


def test_text_and_pickle_round_trip(small, tmp_path):
    for fmt in ("benchmark", "sincronia"):
        again = ck.trace.parse_trace(small.to_text(fmt), "x")
        assert again.flows()["bytes"].sum() == pytest.approx(small.total_bytes)
        assert len(again) == len(small)
    p = tmp_path / "t.txt"
    small.write(p)
    assert ck.read_trace(p).num_flows == small.num_flows
    back = pickle.loads(pickle.dumps(small))
    assert back.name == small.name and back.num_flows == small.num_flows


def test_generators_are_seeded():
    a = ck.trace.gen_fb(coflows=30, load=2.0, seed=5)
    b = ck.trace.gen_fb(coflows=30, load=2.0, seed=5)
    c = ck.trace.gen_fb(coflows=30, load=2.0, seed=6)
    assert a.to_text() == b.to_text()
    assert a.to_text() != c.to_text()
    assert len(a) == 30
    g = ck.trace.gen_custom(coflows=20, ports=10, classes=["A:1:1-5:1-2"], seed=1)
    assert len(g) == 20 and g.flows()["src"].max() < 10
    with pytest.raises(ck.CoflowkitError, match="class"):
        ck.trace.gen_custom(classes=["A:2:1-5"])


def test_unknown_bundled_trace():
    with pytest.raises(ck.CoflowkitError, match="fb"):
        ck.bundled_trace("google")
