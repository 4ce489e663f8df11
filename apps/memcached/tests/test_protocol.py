"""memcached on nom through a real client (pymemcache, text protocol): do the commands a cache
user relies on answer as memcached's own protocol.txt says, for small and large values, over
one connection and over many at once? Each test uses keys of its own (one server for all)."""
import re
import threading
import time

import pytest
from pymemcache.exceptions import MemcacheServerError

pytestmark = pytest.mark.boot


def pattern(n, seed):
    return bytes((i * 131 + seed + i // 997) & 0xFF for i in range(n))


def test_set_get_delete(memcached):
    c = memcached.client()
    assert c.get(b"sgd:missing") is None
    assert c.set(b"sgd:k", b"hello nom", noreply=False)
    assert c.get(b"sgd:k") == b"hello nom"
    assert c.add(b"sgd:k", b"other", noreply=False) is False
    assert c.replace(b"sgd:k", b"replaced", noreply=False)
    assert c.append(b"sgd:k", b"!", noreply=False)
    assert c.get(b"sgd:k") == b"replaced!"
    assert c.delete(b"sgd:k", noreply=False)
    assert c.get(b"sgd:k") is None
    assert c.delete(b"sgd:k", noreply=False) is False


def test_incr_decr(memcached):
    c = memcached.client()
    assert c.incr(b"id:missing", 1) is None
    c.set(b"id:n", b"41", noreply=False)
    assert c.incr(b"id:n", 1) == 42
    assert c.incr(b"id:n", 1000) == 1042
    assert c.decr(b"id:n", 2000) == 0  # decr stops at zero
    c.set(b"id:big", b"18446744073709551615", noreply=False)
    assert c.incr(b"id:big", 1) == 0   # incr wraps at 2**64


def test_cas(memcached):
    c = memcached.client()
    c.set(b"cas:k", b"v1", noreply=False)
    value, token = c.gets(b"cas:k")
    assert value == b"v1"
    assert c.cas(b"cas:k", b"v2", token, noreply=False) is True
    assert c.cas(b"cas:k", b"v3", token, noreply=False) is False
    assert c.get(b"cas:k") == b"v2"


def test_multi_get(memcached):
    c = memcached.client()
    items = {f"mg:{i}".encode(): pattern(10 + 97 * i, i) for i in range(100)}
    assert c.set_many(items, noreply=False) == []
    keys = list(items) + [b"mg:absent"]
    got = c.get_many(keys)
    assert got == items


def test_large_values_500k(memcached):
    c = memcached.client()
    for i, size in enumerate((500 * 1024, 500 * 1024 + 1, 900 * 1024)):
        value = pattern(size, i)
        assert c.set(f"big:{i}".encode(), value, noreply=False)
        assert c.get(f"big:{i}".encode()) == value
    too_big = pattern(2 * 1024 * 1024, 9)  # above the 1 MiB item limit (-I)
    with pytest.raises(MemcacheServerError, match="too large"):
        c.set(b"big:over", too_big, noreply=False)
    assert c.get(b"big:over") is None


def wait_gone(c, key, what):
    deadline = time.monotonic() + 30
    while c.get(key) is not None:
        assert time.monotonic() < deadline, f"{what} still there after 30 s"
        time.sleep(0.5)


def test_relative_expiry_follows_the_clock(memcached):
    """Relative expiry times: memcached's clock is a libevent timer ticking every second."""
    c = memcached.client()
    c.set(b"exp:k", b"short", expire=1, noreply=False)
    c.set(b"exp:keep", b"long", expire=600, noreply=False)
    assert c.get(b"exp:k") == b"short"
    wait_gone(c, b"exp:k", "an item with a 1 s expiry")
    assert c.get(b"exp:keep") == b"long"


def test_absolute_expiry_uses_the_wall_clock(memcached):
    """Expiry times beyond 30 days are Unix times: right only if the guest's CLOCK_REALTIME is
    the host's (the kernel reads the RTC at boot)."""
    c = memcached.client()
    assert abs(int(memcached.stats()["time"]) - time.time()) < 60
    c.set(b"abs:k", b"short", expire=int(time.time()) + 2, noreply=False)
    c.set(b"abs:keep", b"long", expire=int(time.time()) + 600, noreply=False)
    wait_gone(c, b"abs:k", "an item with an absolute expiry 2 s ahead")
    assert c.get(b"abs:keep") == b"long"


def test_stats(memcached):
    c = memcached.client()
    c.set(b"st:k", b"x", noreply=False)
    c.get(b"st:k")
    s = memcached.stats()
    assert s["version"] == "1.6.18"
    assert s["libevent"] == "2.1.12-stable"
    assert s["threads"] == "1"  # -t 1
    assert int(s["limit_maxbytes"]) == 64 << 20
    assert int(s["curr_items"]) >= 1 and int(s["get_hits"]) >= 1
    assert int(s["curr_connections"]) >= 1
    assert int(s["uptime"]) >= 1
    # nom's data path (port/nom_stats.c): frames lost inside the guest, none on a quiet run
    for lost in ("net_rx_nobuf", "net_rx_shed", "net_syn_dropped", "net_tx_dropped",
                 "net_rx_bad"):
        assert s[lost] == "0", (lost, s[lost])


def test_many_connections(memcached):
    """200 connections open at once, then all of them writing and reading their own keys
    concurrently. The connections are opened one after the other, each proven to reach memcached
    (`version`) before the next: QEMU user networking's port forwarding listens on the host with
    a backlog of 1, so a burst of connects stalls in the host's kernel (in SYN-RECV, retried
    with backoff) before memcached ever sees it; that is slirp's limit, not the guest's."""
    clients = []
    for _ in range(200):
        c = memcached.client()
        assert c.version() == b"1.6.18"
        clients.append(c)
    assert int(memcached.stats()["curr_connections"]) >= 200
    errors = []

    def worker(n, c):
        try:
            for i in range(10):
                key = f"conn:{n}:{i}".encode()
                value = pattern(100 + n * 10 + i, n)
                assert c.set(key, value, noreply=False)
                assert c.get(key) == value
            c.close()
        except Exception as e:  # reported below, with the worker's number
            errors.append((n, repr(e)))

    threads = [threading.Thread(target=worker, args=(n, c)) for n, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors


def test_net_options_are_not_memcached_s(boot_memcached, tmp_path):
    """net/'s own options (static address, W) are taken out of argv by nom_net_start before
    memcached's getopt, which would refuse them."""
    net_options = "--ip=10.0.2.15/24 --gw=10.0.2.2 --batching-delay=40"
    with boot_memcached(tmp_path, net_options) as server:
        assert re.search(r"^net: 10.0.2.15/24 gw 10.0.2.2 \(static\) W=40$", server.vm.log(),
                         re.M), server.vm.tail()
        assert server.client().version() == b"1.6.18"


def test_shutdown_command_ends_memcached_cleanly(boot_memcached, tmp_path):
    """`shutdown` (allowed by -A) raises SIGINT in memcached; its handler exits with 0, which
    the kernel reports: signals to oneself, exit and atexit work on nom."""
    with boot_memcached(tmp_path, "-A") as server:
        c = server.client()
        c.set(b"bye", b"1", noreply=False)
        # No answer comes: memcached exits at once, and QEMU's forwarding keeps the host side
        # of the connection open when the guest stops answering.
        c.sock.sendall(b"shutdown\r\n")
        server.vm.wait_for(r"app memcached exited 0", 60)
        c.close()
