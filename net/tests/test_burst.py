"""A burst of 500 connections opened at once (issue 10): through a tap in a namespace of the
test's own, is every one answered, by nhttpd and by memcached? Through QEMU user networking
(hostfwd on 127.0.0.1, as `make run` serves), does every one end cleanly: answered, or refused
by the host (a reset, or a connect that timed out), none hanging and none closed unanswered?

Through user networking a burst meets a limit outside the guest: libslirp accepts forwarded
connections with a listen backlog of 1, so the host's TCP holds the clients back, delivers
their requests only at their next retransmission, tens of seconds later, and resets those
whose handshake it gave up on (tcp_synack_retries, about a minute). Measured here (2026-11-25,
TCG): nom's memcached 266 of 500 answered and 234 reset, nom's nhttpd 193 and 307, the Linux
guest's nginx 151 and 349: the limit is the host's, for every guest. nhttpd used to close a connection
after 15 s without a request (34 of 200 answered, the rest closed unanswered); it now waits
60 s, as nginx's client_header_timeout does."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from experiment.nom_driver import APPS
from nomvm import VM, Nic, free_port, make_iso

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
CLIENT = [sys.executable, str(HERE / "churn_client.py")]
BURST = 500
MAC = "52:54:00:12:34:56"
# app: (ELF under build/, command line, port, churn_client --proto)
SERVERS = {
    "memcached": (APPS["memcached"][0], "memcached -p 11211 -U 0 -t 1 -m 64", 11211, "memcached"),
    "nhttpd": (APPS["nhttpd"][0], "nhttpd --port=80", 80, "http"),
}


def burst(run, host, port, proto):
    """BURST connections at once (churn_client.py --burst); returns how they ended."""
    r = run(CLIENT + ["--host", host, "--port", str(port), "--proto", proto, "--burst",
                      "--conns", str(BURST), "--timeout", "300"], timeout=400)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


def boot(app, tmp_path, nic, extra=""):
    elf, cmdline = SERVERS[app][:2]
    if not (BUILD / elf).exists() or not KERNEL.exists():
        pytest.skip(f"not built: {elf}")
    iso = make_iso(str(KERNEL), [(str(BUILD / elf), f"{cmdline} {extra}".strip())],
                   str(tmp_path / "burst.iso"))
    return VM(iso=iso, nics=[nic], workdir=str(tmp_path))


def test_burst_through_user_networking(tmp_path):
    app = "nhttpd"  # memcached has no request timeout to meet; measured once (docstring)
    port = free_port()
    vm = boot(app, tmp_path, Nic(mac=MAC, hostfwd=[(port, SERVERS[app][2])]))
    with vm:
        vm.wait_for(r"net: \S+ gw \S+ \(dhcp\)", 120)
        got = burst(lambda args, timeout: subprocess.run(args, capture_output=True,
                                                         text=True, timeout=timeout),
                    "127.0.0.1", port, SERVERS[app][3])
        print(f"{app}, user networking: {got}")
        # What the guest decides: nothing that reached it is left unanswered or hanging. How
        # many the host's TCP refuses, or lets time out connecting, is the host's (docstring).
        unclean = {k: got[k] for k in ("closed", "bad", "silent") if got[k]}
        assert not unclean and got["answered"] > 0, f"{got}\nconsole:\n{vm.tail(10)}"


@pytest.mark.parametrize("app", sorted(SERVERS))
def test_burst_through_tap(app, tmp_path, lab):
    vm = boot(app, tmp_path, Nic(mac=MAC, backend="tap", tap=lab.tap),
              f"--ip={lab.guest_ip}/{lab.prefix_len}")
    lab.start_vm(vm)
    vm.wait_for(r"net: \S+ gw \S+ \(static\)", 120)
    got = burst(lab.run, lab.guest_ip, SERVERS[app][2], SERVERS[app][3])
    print(f"{app}, tap: {got}")
    assert got["answered"] == BURST, f"{got}\nconsole:\n{vm.tail(10)}"
