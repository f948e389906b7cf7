"""The runtime client on loopback: a real coordinator and daemons (this checkout's
`coflowkit` binary, as processes), one broadcast put to many receivers, byte-exact."""

import json
import os
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import coflowkit as ck
from coflowkit.runtime import Client

TOKEN = "python-runtime-test-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(cli, tmp_path):
    tok = tmp_path / "token"
    tok.write_text(TOKEN + "\n")
    caddr = f"127.0.0.1:{free_port()}"
    procs = [
        subprocess.Popen(
            [cli, "coordinator", "--listen", caddr, "--token-file", str(tok)],
            stderr=subprocess.DEVNULL,
        )
    ]
    daemons = []
    try:
        for _ in range(4):
            d = f"127.0.0.1:{free_port()}"
            daemons.append(d)
            procs.append(
                subprocess.Popen(
                    [cli, "daemon", "--coordinator", caddr, "--listen", d,
                     "--nic-rate", "400mbit", "--token-file", str(tok)],
                    stderr=subprocess.DEVNULL,
                )
            )
        # Every daemon registered with the coordinator (`coflowkit status`), as the Rust
        # tests' `ready()`.
        end = time.time() + 30
        while True:
            out = subprocess.run(
                [cli, "status", "--coordinator", caddr, "--token-file", str(tok), "--json"],
                capture_output=True,
            )
            if out.returncode == 0:
                doc = json.loads(out.stdout)
                if sum(d["connected"] for d in doc["daemons"]) == len(daemons):
                    break
            assert time.time() < end, f"daemons not connected: {out.stdout} {out.stderr}"
            time.sleep(0.1)
        yield caddr, daemons
    finally:
        for p in procs:
            p.kill()
            p.wait()


def connect(caddr, daemon, deadline_s=20.0):
    """A client once the coordinator and the daemon answer (the processes take a moment)."""
    end = time.time() + deadline_s
    while True:
        try:
            c = Client(caddr, daemon, TOKEN)
            c.unregister(c.register(name="probe"))
            return c
        except ck.CoflowkitError:
            if time.time() > end:
                raise
            time.sleep(0.1)


def test_a_broadcast_put_reaches_every_receiver_byte_exact(cluster):
    caddr, daemons = cluster
    sender = connect(caddr, daemons[0])
    receivers = [connect(caddr, d) for d in daemons[1:]]
    data = os.urandom(3 * (256 << 10) + 12345)  # a short last block
    coflow = sender.register(name="weights")
    assert sender.broadcast(coflow, "w", data, block_bytes=256 << 10) == len(data)
    # Every receiver gets at once (the GIL is released in the calls): the daemons swap blocks.
    with ThreadPoolExecutor(len(receivers)) as pool:
        got = list(pool.map(lambda r: r.get(coflow, "w"), receivers))
    assert all(g == data for g in got), [len(g) for g in got]
    sender.unregister(coflow)


def test_errors_are_named(cluster):
    caddr, daemons = cluster
    c = connect(caddr, daemons[0])
    coflow = c.register()
    with pytest.raises(ck.CoflowkitError, match="unknown mechanism"):
        c.broadcast(coflow, "x", b"abc", mechanism="torrent")
    with pytest.raises(ck.CoflowkitError):
        Client(caddr, daemons[0], "a-wrong-token-of-some-length").register()
