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


def test_paths_may_be_bytes_and_anything_else_is_a_clear_type_error(tmp_path):
    # Session 33: read_trace(b"...") gave PyO3's "'bytes' object cannot be converted to
    # 'PyString'"; a bytes path is a path, as `open` takes it.
    good = tmp_path / "good.txt"
    good.write_text("4 1\n1 0 1 0 1 1:1\n")
    t = ck.read_trace(bytes(good))
    assert len(t) == 1 and t.name == str(good)
    t.write(bytes(tmp_path / "back.txt"))
    assert (tmp_path / "back.txt").exists()
    with pytest.raises(TypeError, match=r"read_trace: `path` must be a path \(str, bytes or os.PathLike\), not int"):
        ck.read_trace(5)
    with pytest.raises(TypeError, match=r"Trace.write: `path` must be a path .*not list"):
        t.write([1])
    # A missing bytes path is named like a str one.
    with pytest.raises(ck.CoflowkitError, match="nope.txt"):
        ck.read_trace(bytes(tmp_path / "nope.txt"))


def test_integers_out_of_range_name_the_function_and_the_argument():
    # Session 33: gen_fb(ports=2**40) raised PyO3's OverflowError naming no argument.
    with pytest.raises(OverflowError, match=r"gen_fb: `ports` = 1099511627776 is out of range: it must be an integer from 0 to 4294967295"):
        ck.trace.gen_fb(coflows=10, ports=2**40)
    with pytest.raises(OverflowError, match=r"gen_fb: `seed` = -1 is out of range"):
        ck.trace.gen_fb(coflows=10, seed=-1)
    with pytest.raises(OverflowError, match=r"gen_custom: `coflows` = -5 is out of range"):
        ck.trace.gen_custom(coflows=-5)
    with pytest.raises(OverflowError, match=r"read_trace: `max_flows` = 1267650600228229401496703205376 is out of range"):
        ck.read_trace("x", max_flows=2**100)
    with pytest.raises(TypeError, match=r"gen_custom: `ports` must be an integer from 0 to 4294967295, not str"):
        ck.trace.gen_custom(ports="8")
    # A 10,000-digit integer is quoted bounded.
    with pytest.raises(OverflowError) as e:
        ck.trace.gen_fb(coflows=10, ports=10**10000)
    assert len(str(e.value)) < 1000
    # Defaults and in-range values still work.
    assert len(ck.trace.gen_fb(coflows=10, ports=150, seed=3)) == 10
    assert len(ck.trace.gen_custom(coflows=5, ports=None, seed=None)) == 5
