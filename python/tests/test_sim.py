import copy
import json
import subprocess
import threading
import time

import numpy as np
import pytest

import coflowkit as ck
from coflowkit._results import COFLOW_COLUMNS

CSV_HEADER = (
    "scheduler,id,arrival_s,finish_s,cct_s,isolated_cct_s,bytes,flows,length_bytes,bin,"
    "deadline_s,met_deadline,avg_fct_s"
)


def test_sim_frames(small):
    res = ck.sim(small, schedulers=["varys", "sincronia", "fifo"], port_rate="1gbit", baseline="varys")
    assert res.schedulers == ["varys", "sincronia", "fifo"]
    c = res.coflows
    # The CSV's columns in its order, then the JSON's fct_spread.
    assert list(c.columns[:13]) == CSV_HEADER.split(",")
    assert list(c.columns) == COFLOW_COLUMNS
    assert len(c) == 3 * len(small)
    s = res.summary.set_index("scheduler")
    for name, g in c.groupby("scheduler"):
        assert s.loc[name, "avg_cct_s"] == pytest.approx(g["cct_s"].mean())
        assert s.loc[name, "coflows"] == len(small)
        # No coflow beats its isolated time.
        assert (g["cct_s"] >= g["isolated_cct_s"] * (1 - 1e-9)).all()
    base = s.loc["varys", "avg_cct_s"]
    assert s.loc["fifo", "speedup_avg_cct"] == pytest.approx(base / s.loc["fifo", "avg_cct_s"])
    assert s.loc["varys", "speedup_avg_cct"] == 1.0


def test_faster_ports_finish_sooner(small):
    slow = ck.sim(small, schedulers="varys", port_rate=1e9, baseline="varys").summary
    fast = ck.sim(small, schedulers="varys", port_rate="10gbit", baseline="varys").summary
    assert fast["avg_cct_s"][0] < slow["avg_cct_s"][0]


def test_options_reach_the_scheduler(small):
    a = ck.sim(small, schedulers="aalo", baseline="aalo", queues=2, queue_spacing=100).coflows
    b = ck.sim(small, schedulers="aalo", baseline="aalo").coflows
    assert not np.allclose(a["cct_s"], b["cct_s"])


def test_errors_are_the_clis(small):
    with pytest.raises(ck.CoflowkitError, match=r"^unknown scheduler `nope`; choose from: fair"):
        ck.sim(small, schedulers="nope")
    with pytest.raises(ck.CoflowkitError, match=r"invalid value 'fast' for '--port-rate"):
        ck.sim(small, port_rate="fast")
    with pytest.raises(ck.CoflowkitError, match=r"unknown option `bogus`"):
        ck.sim(small, bogus=1)
    with pytest.raises(ck.CoflowkitError, match=r"--queues must be >= 1"):
        ck.sim(small, schedulers="aalo", queues=0)
    with pytest.raises(ck.CoflowkitError, match="--deadlines must be a non-negative number"):
        ck.sim(small, schedulers="varys", deadlines=-1)


def test_same_as_the_cli(small, cli, tmp_path):
    """The binding's document equals `coflowkit sim --json`'s, field for field (wall times
    aside). (The CLI may be a debug build: a small generated trace.)"""
    trace = tmp_path / "t.txt"
    classes = ["S:0.6:1-10:1-5", "L:0.4:5-40:5-50"]
    ck.trace.gen_custom(coflows=40, ports=20, classes=classes, mean_interarrival_ms=200, seed=2).write(trace)
    out = tmp_path / "cli.json"
    subprocess.run(
        [cli, "sim", "--trace", str(trace), "-s", "varys,aalo", "--baseline", "sincronia",
         "--port-rate", "10gbit", "--deadlines", "1", "--json", str(out)],
        check=True, capture_output=True,
    )
    res = ck.sim(ck.read_trace(trace), schedulers="varys,aalo", baseline="sincronia",
                 port_rate="10gbit", deadlines=1)
    mine = copy.deepcopy(res.docs[0])
    theirs = json.loads(out.read_text())
    for d in (mine, theirs):
        for r in d["results"]:
            r["summary"].pop("wall_s")
    assert mine == theirs
    loaded = ck.load_results(out)
    assert list(loaded.summary.columns) == list(res.summary.columns)
    assert list(loaded.coflows.columns) == list(res.coflows.columns)
    assert (loaded.coflows["cct_s"] == res.coflows["cct_s"]).all()


def test_cli_error_text_matches(cli, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("4 2\n1 0 1 0 1 1:1\n2 0 1 7 1 1:1\n")
    p = subprocess.run([cli, "sim", "--trace", str(bad)], capture_output=True, text=True)
    assert p.returncode != 0
    with pytest.raises(ck.CoflowkitError) as e:
        ck.sim(ck.read_trace(bad))
    assert p.stderr.strip() == f"error: {e.value}"


def test_files_and_load_results(small, tmp_path):
    res = ck.sim(small, schedulers="varys,fifo", baseline="varys",
                 json=str(tmp_path / "a.json"), csv=str(tmp_path / "a.csv"))
    assert (tmp_path / "a.csv").read_text().splitlines()[0] == CSV_HEADER
    back = ck.load_results(tmp_path / "a.json")
    assert back.summary.drop(columns="wall_s").equals(res.summary.drop(columns="wall_s"))
    # Several files (a Slurm array): one table with a source column.
    ck.sim(small, schedulers="sebf", baseline="sebf", json=str(tmp_path / "b.json"))
    both = ck.load_results(str(tmp_path / "*.json"))
    assert set(both.summary["scheduler"]) == {"varys", "fifo", "sebf"}
    assert both.summary["source"].nunique() == 2


def test_load_results_bounds_and_names_the_file(tmp_path, monkeypatch):
    # /dev/zero used to be read until MemoryError; /dev/null and text gave a JSONDecodeError
    # without the file's name.
    with pytest.raises(ck.CoflowkitError, match="/dev/zero: a character device"):
        ck.load_results("/dev/zero")
    with pytest.raises(ck.CoflowkitError, match="/dev/null: a character device"):
        ck.load_results("/dev/null")
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    with pytest.raises(ck.CoflowkitError, match="bad.json: not a JSON document"):
        ck.load_results(bad)
    import coflowkit._results as r
    monkeypatch.setattr(r, "MAX_RESULTS_BYTES", 4)
    big = tmp_path / "big.json"
    big.write_text('{"a": 1}')
    with pytest.raises(ck.CoflowkitError, match="big.json: larger than the limit of 4 bytes"):
        ck.load_results(big)


def test_parse_trace_quotes_a_long_name_bounded():
    name = "n" * 10_000_000
    with pytest.raises(ck.CoflowkitError) as e:
        ck.trace.parse_trace("x", name=name)
    msg = str(e.value)
    assert len(msg) < 1000 and "(10000000 bytes)" in msg, msg[:300]


def test_plot_cdf(small):
    res = ck.sim(small, schedulers="varys,fifo", baseline="varys")
    fig = res.plot_cdf()
    lines = fig.axes[0].get_lines()
    assert [l.get_label() for l in lines] == ["varys", "fifo"]
    # Each CDF ends at 1.
    assert all(l.get_ydata()[-1] == 1.0 for l in lines)


def test_gil_released(fb):
    """Another Python thread runs while a simulation does."""
    trace = fb.head(150)
    done = threading.Event()
    ticks = 0

    def run():
        ck.sim(trace, schedulers="aalo", baseline="aalo", jobs=1)
        done.set()

    t = threading.Thread(target=run)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - t0
    # With the GIL held, this thread would not tick at all until the run ended.
    assert elapsed > 0.05, "the run was too short to tell"
    assert ticks > 0.2 * elapsed / 0.001 * 0.1


def test_max_flows_refuses_larger_traces(small, tmp_path):
    """`max_flows` (listed by sim_flags) limits the trace: a path while it is read, a Trace by
    its flow count. It used to be accepted and ignored."""
    assert "max_flows" in ck.sim_flags()
    n = small.num_flows
    path = tmp_path / "small.txt"
    small.write(path)
    with pytest.raises(ck.CoflowkitError, match=rf"over the limit of {n - 1} flows"):
        ck.read_trace(path, max_flows=n - 1)
    with pytest.raises(ck.CoflowkitError, match=rf"over the limit of {n - 1} flows"):
        ck.sim(path, schedulers="fifo", max_flows=n - 1)
    with pytest.raises(ck.CoflowkitError, match=rf"has {n} flows, more than that"):
        ck.sim(small, schedulers="fifo", max_flows=n - 1)
    with pytest.raises(ck.CoflowkitError, match="over the limit of 1 flows"):
        ck.trace.parse_trace(small.to_text(), max_flows=1)
    assert ck.read_trace(path, max_flows=n).num_flows == n
    assert ck.sim(path, schedulers="fifo", baseline="fifo", max_flows=n).schedulers == ["fifo"]
    assert ck.sim(small, schedulers="fifo", baseline="fifo", max_flows=n).schedulers == ["fifo"]


def test_load_results_checks_the_document_at_load(tmp_path):
    # Session 33: a JSON file that was not a results file loaded, and failed only when a
    # property was read (KeyError: 'results'); a deeply nested one gave RecursionError.
    cases = [
        ("[1, 2]", "the document is an array, not an object"),
        ('{"a": 1}', "missing field `baseline`"),
        ('{"baseline": "varys"}', "missing field `results`"),
        ('{"baseline": "varys", "results": {}}', "field `results` is an object, not an array"),
        ('{"baseline": "varys", "results": [{"scheduler": "varys", "summary": {}}]}',
         r"missing field `results\[0\].coflows`"),
        ('{"baseline": "varys", "results": [{"scheduler": "varys", "summary": [], "coflows": []}]}',
         r"field `results\[0\].summary` is an array, not an object"),
        ('{"baseline": "varys", "results": [{"scheduler": "v", "summary": {}, "coflows": [3]}]}',
         r"`results\[0\].coflows\[0\]` is int, not an object"),
    ]
    for i, (text, why) in enumerate(cases):
        p = tmp_path / f"r{i}.json"
        p.write_text(text)
        with pytest.raises(ck.CoflowkitError, match=f"r{i}.json: not a results file of `coflowkit sim --json`: {why}"):
            ck.load_results(p)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ck.CoflowkitError, match="deep.json: JSON nested too deeply to read"):
        ck.load_results(deep)
    # A good document with no results at all still loads.
    empty = tmp_path / "empty.json"
    empty.write_text('{"baseline": "varys", "results": []}')
    assert ck.load_results(empty).schedulers == []
