"""memcached on nom under libmemcached's own tools (Debian's libmemcached-tools): does it pass
memccapable's protocol checks, text and binary, and does it carry memaslap's load (the paper's
GET/SET 90/10 mix, section 6) for a few seconds with every answer right? Do libmemcached's
client tools (memccp, memccat, memcrm, memcexist) store, fetch and remove through it?"""
import re
import shutil
import subprocess

import pytest

from loadgen.parsers import parse_memaslap

pytestmark = pytest.mark.boot


def need(tool):
    if not shutil.which(tool):
        pytest.skip(f"{tool} not installed (Debian package libmemcached-tools)")


def test_memccapable_text_and_binary(memcached):
    need("memccapable")
    r = subprocess.run(["memccapable", "-h", memcached.host, "-p", str(memcached.port)],
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    results = re.findall(r"^(ascii|binary) (.+?)\s+\[(\w+)\]", out, re.M)
    assert r.returncode == 0, out
    assert len(results) > 50, out
    assert {proto for proto, _, _ in results} == {"ascii", "binary"}
    assert [r for r in results if r[2] != "pass"] == [], out
    assert "All tests passed" in out


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_libmemcached_copy_cat_remove(memcached, tmp_path, binary):
    """libmemcached's client library through its command-line tools: a 300 KiB file stored with
    memccp comes back intact through memccat, then memcrm removes it (memcexist says so)."""
    for tool in ("memccp", "memccat", "memcrm", "memcexist"):
        need(tool)
    blob = tmp_path / f"blob-{'binary' if binary else 'text'}.bin"
    blob.write_bytes(bytes((i * 7919 + i // 300) & 0xFF for i in range(300 * 1024)))
    common = [f"--servers={memcached.host}:{memcached.port}"] + (["--binary"] if binary else [])

    def run(tool, *args):
        return subprocess.run([tool, *common, *args], capture_output=True, timeout=120)

    assert run("memccp", str(blob)).returncode == 0
    cat = run("memccat", blob.name)
    assert cat.returncode == 0, cat.stderr
    assert cat.stdout.removesuffix(b"\n") == blob.read_bytes()  # memccat ends with a newline
    assert run("memcexist", blob.name).returncode == 0
    assert run("memcrm", blob.name).returncode == 0
    assert run("memcexist", blob.name).returncode != 0


def run_memaslap(server, workdir, binary=False, conns=16, seconds=5):
    """memaslap GET/SET 90/10 (64-byte keys, 32-byte values, the loadgen's mix) with values
    checked on 10 % of the gets (-v 0.1); asserts that nothing went wrong and that the server
    counted what the client did; returns the parsed figures (loadgen/parsers.py)."""
    need("memcaslap")
    cfg = workdir / "memaslap.cfg"
    cfg.write_text("key\n64 64 1\nvalue\n32 32 1\ncmd\n0 0.1\n1 0.9\n")
    before = server.stats()
    args = ["memcaslap", "-s", f"{server.host}:{server.port}", "-T", str(min(2, conns)),
            "-c", str(conns), "-t", f"{seconds}s", "-F", str(cfg), "-v", "0.1"]
    args += ["-B"] if binary else []
    r = subprocess.run(args, capture_output=True, text=True, timeout=300 + 3 * seconds)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    load = parse_memaslap(out)
    assert load["ops"] > 0 and load["cmd_set"] > 0 and load["cmd_get"] > 0
    # memaslap counts wrong or missing values, and reports a broken connection or a server
    # error as a line of its own.
    counters = dict(re.findall(r"^(get_misses|verify_misses|verify_failed): (\d+)$", out, re.M))
    assert counters == {"get_misses": "0", "verify_misses": "0", "verify_failed": "0"}, out
    other = re.sub(r"^(get_misses|verify_misses|verify_failed): 0$", "", out, flags=re.M)
    assert not re.search(r"fail|error|timeout|reconnect|closed", other, re.I), out
    after = server.stats()
    served = (int(after["cmd_get"]) - int(before["cmd_get"]) +
              int(after["cmd_set"]) - int(before["cmd_set"]))
    # The server saw what the client counted, less or more what was in flight when memaslap
    # stopped (memaslap's window is 10k commands over all connections at most).
    assert abs(served - load["ops"]) <= 10 * 1024, (served, load)
    print(f"memaslap {'binary' if binary else 'text'} -c {conns}: {load['ops']} ops in "
          f"{load['seconds']} s, {load['tps']} ops/s (TCG, user networking)")
    return load


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_memaslap_get_set_90_10_without_errors(memcached, tmp_path, binary):
    run_memaslap(memcached, tmp_path, binary)


def test_memaslap_with_batching_delay_20us(boot_memcached, tmp_path):
    """W = 20 us loses nothing. --batching-delay=US, the experiment runner's spelling, reaches
    net/ (port/nom_main.c rewrites it) and not memcached's getopt."""
    with boot_memcached(tmp_path, "--batching-delay=20") as server:
        assert re.search(r"net: .* W=20$", server.vm.log(), re.M), server.vm.tail()
        run_memaslap(server, tmp_path)


def test_memaslap_with_four_worker_threads(boot_memcached, tmp_path):
    """-t 4: four libevent bases, each woken through its own pipe, on libnom's user threads;
    memaslap's 16 connections are handed to them round-robin by memcached's dispatcher."""
    with boot_memcached(tmp_path, "-t 4") as server:
        assert server.stats()["threads"] == "4"
        run_memaslap(server, tmp_path)
