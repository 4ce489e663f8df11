"""Does nomload count, time and frame real servers' replies? (Host servers on 127.0.0.1 only:
memcached, and NPtcp's receiver from our patched build, including its streaming mode.)"""
import os
import signal
import subprocess
import time

import pytest

import loadgen
from nomvm import free_port


@pytest.fixture
def server(request):
    procs = []

    def start(args):
        # a group of its own: a shell loop's current child goes with it (killing only the
        # shell left an NPtcp receiver running after the test)
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        procs.append(p)
        time.sleep(0.3)
        return p
    yield start
    for p in procs:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def nomload(*args):
    r = subprocess.run([loadgen.NOMLOAD, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return loadgen.parse_nomload(r.stdout)


@pytest.mark.unit
def test_memcached_many_connections_get_hits_after_preload(server):
    loadgen.build()
    port = free_port()
    server(["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-u", "root"])
    r = nomload("--proto", "memcached", "--port", str(port), "--conns", "8", "--duration", "1",
                "--interval-ms", "200")
    assert r["requests"] > 0 and r["errors"] == 0 and r["reconnects"] == 0
    assert r["get_hits"] == r["gets"] and 0.8 < r["gets"] / r["requests"] < 0.98
    assert r["mode"] == "many" and len(r["intervals"]) >= 4 and r["preload_sets"] == 1000
    lat = r["latency_us"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"]
    again = nomload("--proto", "memcached", "--port", str(port), "--duration", "0.5",
                    "--no-preload")
    assert again["preload_sets"] == 0 and again["get_hits"] == again["gets"] > 0


@pytest.mark.unit
def test_netpipe_sessions_against_nptcp_receiver(server, tmp_path):
    loadgen.build()
    port = free_port()
    args = [loadgen.NPTCP, "-P", str(port), "-l", "1024", "-u", "1024", "-p", "0"]
    # the receiver serves one session; restart it as the guests do
    server(["sh", "-c", "while :; do " + " ".join(args) + " >/dev/null 2>&1; done"])
    samples = tmp_path / "samples.txt"
    r = nomload("--proto", "netpipe", "--port", str(port), "--duration", "1",
                "--samples", str(samples))
    assert r["requests"] > 0 and r["errors"] == 0 and r["message_bytes"] == 1024
    assert len(samples.read_text().split()) == r["requests"]


@pytest.mark.slow
def test_patched_nptcp_streams_on_loopback(tmp_path):
    """Unpatched, the transmitter ended with "Connection reset by peer" after a reset."""
    loadgen.build()
    port = str(free_port())
    args = ["-s", "-P", port, "-l", "1", "-u", "4096"]
    recv = subprocess.Popen([loadgen.NPTCP, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = str(tmp_path / "np.out")
        r = subprocess.run([loadgen.NPTCP, "-h", "127.0.0.1", "-o", out, *args],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        rows = loadgen.parse_nptcp_out(open(out).read())
        assert rows[-1]["bytes"] >= 4093 and len(rows) > 20
    finally:
        recv.kill()
        recv.wait()
