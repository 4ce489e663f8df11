"""The clients users run, again and again against one boot (issue 10): do memcaslap (the
paper's memaslap, with its default 1 KiB values), memcslap and wrk finish every run with no
error, against nom's memcached and nhttpd on a tap NIC, at W = 0 and W = 20?

NOM_CLIENT_RUNS sets the runs of each client per boot (default 3; issue 10's acceptance run
used 20). Each run is short (2 s): what is asked is that none hangs and none errs, not speed."""
import os
import re
from pathlib import Path

import pytest

from experiment.nom_driver import APPS
from loadgen import runners
from nomvm import VM, Nic, make_iso

pytestmark = pytest.mark.boot

BUILD = Path(__file__).resolve().parents[2] / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
MAC = "52:54:00:12:34:56"
RUNS = int(os.environ.get("NOM_CLIENT_RUNS", "3"))
SECONDS = 2
# A client that hangs is killed after this; a run takes SECONDS.
CLIENT_TIMEOUT_S = 120


def boot(lab, tmp_path, app, cmdline, w):
    elf = BUILD / APPS[app][0]
    if not elf.exists() or not KERNEL.exists():
        pytest.skip(f"not built: {elf}")
    cmdline = f"{cmdline} --ip={lab.guest_ip}/{lab.prefix_len} --batching-delay={w}"
    iso = make_iso(str(KERNEL), [(str(elf), cmdline)], str(tmp_path / "clients.iso"))
    vm = VM(iso=iso, nics=[Nic(mac=MAC, backend="tap", tap=lab.tap)], workdir=str(tmp_path))
    lab.start_vm(vm)
    vm.wait_for(rf"net: {lab.guest_ip}/\d+ gw \S+ \(static\) W={w}\b", 120)
    return vm


def run(lab, vm, args):
    """Runs a client to its end; fails the test, with the guest's console, if it hangs or errs."""
    r = lab.run(args, timeout=CLIENT_TIMEOUT_S)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"{' '.join(args)} exited {r.returncode}:\n{out[-1500:]}\n{vm.tail(8)}"
    return out


@pytest.mark.parametrize("w", [0, 20])
def test_memcached_clients_in_a_row(lab, tmp_path, w):
    vm = boot(lab, tmp_path, "memcached", "memcached -p 11211 -U 0 -t 1 -m 64", w)
    server = f"{lab.guest_ip}:11211"
    for i in range(RUNS):
        stats = ["-S", f"{SECONDS}s"] if i % 2 == 0 else []  # the two kinds of run
        out = run(lab, vm, ["memcaslap", "-s", server, "-T", "2", "-c", "32",
                            "-t", f"{SECONDS}s", *stats])
        ops = re.search(r"^Run time: [\d.]+s Ops: (\d+)", out, re.M)
        assert ops and int(ops.group(1)) > 0, out[-1500:]
        for test in ("set", "get"):
            out = run(lab, vm, ["memcslap", f"--servers={server}", "--concurrency=16",
                                "--execute-number=200", f"--test={test}"])
            assert "Failed" not in out and "error" not in out.lower(), out[-1500:]


@pytest.mark.parametrize("w", [0, 20])
def test_wrk_in_a_row(lab, tmp_path, w):
    vm = boot(lab, tmp_path, "nhttpd", "nhttpd --port=80", w)
    for i in range(RUNS):
        for conns in (4, 32, 1):  # the sequence: warm-up, many, then single
            out = run(lab, vm, ["wrk", f"-t{min(2, conns)}", f"-c{conns}", f"-d{SECONDS}s",
                                "--latency", f"http://{lab.guest_ip}/"])
            got = runners.parse_wrk(out)
            assert got["requests"] > 0 and got["errors"] == 0, out[-1500:]
