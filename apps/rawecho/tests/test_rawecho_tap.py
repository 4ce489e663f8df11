"""rawecho over a tap device in a network namespace this test creates (tools/netlab): does
ping (ICMP echo answered by the bare driver) and UDP echo work on a real layer-2 path?"""
import json
import sys
from pathlib import Path

import pytest

from nomvm import VM, Nic, make_iso

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
RAWECHO = BUILD / "apps" / "rawecho" / "rawecho.elf"
CLIENT = [sys.executable, str(HERE.parent / "echo_client.py")]


def test_ping_and_udp_echo_over_tap(tmp_path, lab):  # lab: the root conftest.py
    if not KERNEL.exists() or not RAWECHO.exists():
        pytest.skip("kernel or rawecho not built")
    iso = make_iso(str(KERNEL), [(str(RAWECHO), f"rawecho --ip={lab.guest_ip}")],
                   str(tmp_path / "r.iso"))
    vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)],
            workdir=str(tmp_path))
    lab.start_vm(vm)
    vm.wait_for(r"rawecho: nic .*", 120)
    ping = lab.run(["ping", "-c", "10", "-i", "0.05", "-W", "5", lab.guest_ip], timeout=120)
    assert ping.returncode == 0 and " 0% packet loss" in ping.stdout, ping.stdout
    echo = lab.run(CLIENT + [lab.guest_ip, "7", "single", "50"], timeout=120)
    assert len(json.loads(echo.stdout)["rtts_us"]) == 50, echo.stdout + echo.stderr
    stats = lab.run(CLIENT + [lab.guest_ip, "7001", "ask", "stats"], timeout=60)
    counters = json.loads(json.loads(stats.stdout)["reply"])
    assert counters["answered"] >= 10 and counters["echoed"] >= 50
    assert counters["rx_bad"] == 0 and counters["tx_bad"] == 0
