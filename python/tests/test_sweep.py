import pytest

import coflowkit as ck


def test_grid():
    g = ck.grid(scheduler=["varys", "aalo"], queues=[5, 10], coflows=30)
    assert len(g) == 4
    assert {"scheduler": "aalo", "queues": 10, "coflows": 30} in g


def test_local_sweep_rows_carry_their_config():
    configs = ck.grid(trace="fb", coflows=30, scheduler=["varys", "fifo"], baseline="varys")
    df = ck.sweep(configs, backend="local", workers=2)
    # fifo's runs also run the baseline: 1 + 2 rows.
    assert len(df) == 3
    assert list(df.columns[:5]) == ["run", "trace", "config.coflows", "config.scheduler", "baseline"]
    fifo = df[(df["run"] == 1) & (df["scheduler"] == "fifo")]
    assert len(fifo) == 1 and fifo["config.scheduler"].iloc[0] == "fifo"


def test_errors_recorded_or_raised():
    configs = [{"nodes": 8, "protocol": "grpf"}, {"nodes": 8, "protocol": "teleport"}]
    df = ck.sweep(configs, fn="shuffle", backend="local", workers=1, errors="record")
    assert df["error"].isna().tolist() == [True, False]
    with pytest.raises(ck.CoflowkitError):
        ck.sweep(configs, fn="shuffle", backend="local", workers=1)


def test_ray_matches_local():
    """Ray on this machine only (a single-node Ray on loopback: Ray 2.60 removed
    `local_mode`)."""
    ray = pytest.importorskip("ray")
    configs = ck.grid(nodes=8, skew=[0.0, 0.5, 0.9], protocol="grpf")
    local = ck.sweep(configs, fn="shuffle", backend="local", workers=2)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        remote = ck.sweep(configs, fn="shuffle", backend="ray")
    finally:
        ray.shutdown()
    assert remote.drop(columns=["wall_s"], errors="ignore").equals(
        local.drop(columns=["wall_s"], errors="ignore")
    )
    # Higher skew, the same bound: the rows keep their own configuration.
    assert remote["skew"].tolist() == [0.0, 0.5, 0.9]
