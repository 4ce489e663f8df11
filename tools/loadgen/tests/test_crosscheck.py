"""Do nomload's figures agree with the paper's tools' (memcaslap, wrk) on the same target?

The target is the honest minimum that needs no guest boot: the host's memcached (Debian's) and
nhttpd built for Linux, each started inside the test's own network namespace (the root
conftest's `lab`), loaded on the namespace's loopback by both clients in turn. The guests'
runs differ only in where the server is.

What both measure, checked here:
- requests completed: each tool's count against the server's own count of what it served in
  the same window (memcached's `stats` cmd_get + cmd_set, nhttpd's /nom/stats 2xx). A closed
  loop has at most one request per connection in flight at each edge of its window, which
  the server may serve and the tool not count (nomload counts a reply only if its request
  left after the window opened and it arrived before the window closed), and nomload stores
  its key space first (its preload sets).
- the GET/SET mix (90/10) of the memcached load, from the server's counters.
- under "many" (32 connections), throughput against each other, within a band, never
  absolute speed: both keep one request outstanding per connection, but here the clients
  share the machine's two cores with the server, so their own cost per request (memcaslap -S
  timestamps every command; wrk and memcaslap run two threads, nomload one) moves the rate.
  A factor of 3 either way is that band, between each tool's best of two alternating rounds
  (a round on the loaded machine can only be slowed); counting bugs (a reply miscounted,
  errors taken for requests) are not within it. Under "single" the rate is one over the
  round trip, which on this shared 2-core machine is mostly the scheduler waking client and
  server in turn: at load average 9 either tool measured 5.6-6.6 k or 22-35 k requests/s
  against the same memcached for seconds at a time, so a band there would test the machine,
  not the tools; the counts above are what "single" checks.
"""
import json
import os
import re
import time

import pytest

import loadgen
from loadgen import runners

pytestmark = pytest.mark.slow

NHTTPD_LINUX = os.path.join(runners.BUILD, "apps", "nhttpd", "nhttpd-linux")
WWW = os.path.join(runners.BUILD, "apps", "nhttpd", "www")
MC_PORT, WEB_PORT = 11211, 8080
SECONDS = 3
ROUNDS = 2
BAND = (1 / 3, 3.0)
LOOPBACK = "127.0.0.1"


def wait_listening(lab, port, timeout_s=10.0):
    probe = ["bash", "-c", f"exec 3<>/dev/tcp/{LOOPBACK}/{port}"]
    deadline = time.monotonic() + timeout_s
    while lab.run(probe, timeout=10).returncode != 0:
        assert time.monotonic() < deadline, f"nothing listens on port {port}"
        time.sleep(0.2)


def memcached_counts(lab):
    """memcached's own cmd_get and cmd_set."""
    r = lab.run(["bash", "-c", f"exec 3<>/dev/tcp/{LOOPBACK}/{MC_PORT}; "
                 "printf 'stats\\r\\nquit\\r\\n' >&3; cat <&3"], timeout=10)
    stats = dict(re.findall(r"^STAT (cmd_get|cmd_set) (\d+)", r.stdout, re.M))
    return int(stats["cmd_get"]), int(stats["cmd_set"])


def nhttpd_served(lab):
    """nhttpd's own count of 2xx responses (the stats request itself not yet among them)."""
    r = lab.run(["curl", "-s", f"http://{LOOPBACK}:{WEB_PORT}/nom/stats"], timeout=10)
    return json.loads(r.stdout)["total"]["responses"]["2xx"]


@pytest.fixture
def memcached(lab):
    loadgen.build()
    lab.popen(["memcached", "-l", LOOPBACK, "-p", str(MC_PORT), "-U", "0", "-t", "1",
               "-u", "root"])
    wait_listening(lab, MC_PORT)
    return lab


@pytest.fixture
def nhttpd(lab):
    if not os.access(NHTTPD_LINUX, os.X_OK):
        pytest.skip(f"{NHTTPD_LINUX} is not built (make -C apps/nhttpd)")
    loadgen.build()
    lab.popen([NHTTPD_LINUX, f"--port={WEB_PORT}", f"--bind={LOOPBACK}", f"--root={WWW}"])
    wait_listening(lab, WEB_PORT)
    return lab


def alternating(stock, ours, rounds):
    """Runs stock() and ours() in turn, `rounds` times each, the order swapped every round (the
    machine's load drifts); returns each one's results."""
    out = {"stock": [], "ours": []}
    for i in range(rounds):
        pair = (("stock", stock), ("ours", ours))
        for name, run in pair if i % 2 == 0 else reversed(pair):
            out[name].append(run())
    return out["stock"], out["ours"]


def assert_rates_agree(ours, stock):
    """Each tool's best rate of its rounds (a transient on the shared machine slows a round,
    never speeds it up) within BAND of the other's."""
    ratio = max(ours) / max(stock)
    assert BAND[0] <= ratio <= BAND[1], (ours, stock)


@pytest.mark.parametrize("conns", [loadgen.MANY_CONNS, 1], ids=["many", "single"])
def test_memcaslap_and_nomload_agree_on_memcached(memcached, tmp_path, conns):
    lab = memcached

    def counted(run):
        """run()'s result and the GETs and SETs memcached served meanwhile."""
        get0, set0 = memcached_counts(lab)
        r = run()
        get1, set1 = memcached_counts(lab)
        return r, get1 - get0, set1 - set0

    def stock():
        m, gets, sets = counted(lambda: loadgen.memaslap(lab, LOOPBACK, MC_PORT, conns, SECONDS,
                                                         str(tmp_path), stats=True))
        assert m["ops"] > 0 and abs(gets + sets - m["ops"]) <= 2 * conns, (gets + sets, m)
        assert 0.85 <= gets / (gets + sets) <= 0.95  # GET/SET 90/10
        assert m["latency_us"]["mean"] > 0
        return m["tps"]

    def ours():
        n, gets, sets = counted(lambda: loadgen.nomload(lab, "memcached", LOOPBACK, MC_PORT,
                                                        conns, SECONDS, str(tmp_path)))
        sets -= n["preload_sets"]
        assert n["requests"] > 0 and n["errors"] == 0
        assert abs(gets + sets - n["requests"]) <= 2 * conns, (gets + sets, n)
        assert 0.85 <= gets / (gets + sets) <= 0.95
        assert n["latency_us"]["mean"] > 0
        return n["throughput_rps"]
    stock_rates, our_rates = alternating(stock, ours, ROUNDS if conns > 1 else 1)
    if conns > 1:
        assert_rates_agree(our_rates, stock_rates)


@pytest.mark.parametrize("conns", [loadgen.MANY_CONNS, 1], ids=["many", "single"])
def test_wrk_and_nomload_agree_on_nhttpd(nhttpd, tmp_path, conns):
    lab = nhttpd

    def served(run):
        """run()'s result and the 2xx nhttpd served meanwhile (less the stats request that
        asked before it, which the count after it includes)."""
        before = nhttpd_served(lab)
        r = run()
        return r, nhttpd_served(lab) - before - 1

    def stock():
        w, n2xx = served(lambda: loadgen.wrk(lab, LOOPBACK, WEB_PORT, conns, SECONDS,
                                             str(tmp_path)))
        assert w["requests"] > 0 and w["errors"] == 0
        assert abs(n2xx - w["requests"]) <= 2 * conns, (n2xx, w)
        assert w["latency_us"]["p50"] > 0
        return w["rps"]

    def ours():
        n, n2xx = served(lambda: loadgen.nomload(lab, "http", LOOPBACK, WEB_PORT, conns,
                                                 SECONDS, str(tmp_path),
                                                 extra=["--path", loadgen.apps.INDEX_PATH]))
        assert n["requests"] > 0 and n["errors"] == 0
        assert abs(n2xx - n["requests"]) <= 2 * conns, (n2xx, n)
        assert n["latency_us"]["p50"] > 0
        return n["throughput_rps"]
    stock_rates, our_rates = alternating(stock, ours, ROUNDS if conns > 1 else 1)
    if conns > 1:
        assert_rates_agree(our_rates, stock_rates)
