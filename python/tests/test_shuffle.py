import pytest

import coflowkit as ck


def test_shuffle_report():
    r = ck.shuffle.sim(nodes=16, racks=2, skew=0.5, protocol="grpf", seed=3)
    assert r["complete"] and r["nodes"] == 16 and r["racks"] == 2 and r["seed"] == 3
    assert 0 < r["optimality"] <= 1.0 + 1e-9
    assert r["throughput_gbps"] <= r["bound_gbps"] * (1 + 1e-9)
    again = ck.shuffle.sim(nodes=16, racks=2, skew=0.5, protocol="grpf", seed=3)
    assert again == r


def test_shuffle_options_and_errors():
    r = ck.shuffle.sim(nodes=8, protocol="hadoop", connections=2)
    assert r["protocol"].startswith("hadoop")
    with pytest.raises(ck.CoflowkitError, match="protocol|unknown"):
        ck.shuffle.sim(nodes=8, protocol="teleport")
    with pytest.raises(ck.CoflowkitError, match="nodes"):
        ck.shuffle.sim(nodes=0)
    assert "drop" in ck.shuffle.flags()
