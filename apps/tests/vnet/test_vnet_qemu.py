"""The virtio-net driver against QEMU's real virtio-net-pci device (modern, 1af4:1041), beneath
libnom: boots the kernel with vnet_smoke.c (this folder's Makefile) and asks, over QEMU user
networking, whether UDP echo through the driver returns every datagram intact at W = 0 and
W = 20, and whether the driver releases the NIC cleanly with clean counters."""
import importlib.util
import re
import socket
from pathlib import Path

import pytest

from nomvm import Guest, hostcases

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
SMOKE = BUILD / "apps" / "tests" / "vnet" / "vnet_smoke.elf"
# The UDP client of apps/rawecho (vnet_smoke answers with rawecho's protocol code too).
_spec = importlib.util.spec_from_file_location("echo_client",
                                               TOP / "apps" / "rawecho" / "echo_client.py")
echo_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(echo_client)


@pytest.fixture(scope="module")
def smoke_elf():
    if not KERNEL.exists():
        pytest.skip("kernel not built (build/kernel/nom.elf)")
    hostcases.make(HERE)  # this folder's test applications
    return SMOKE


@pytest.mark.parametrize("w", [0, 20])
def test_udp_echo_through_driver(smoke_elf, tmp_path, w):
    guest = Guest([(smoke_elf, f"vnet_smoke {w}")], tmp_path, udp=[7, 7001], kernel=KERNEL)
    echo_port, ctl_port = guest.host_port(7, "udp"), guest.host_port(7001, "udp")
    vm = guest.vm
    with guest.start(ready=()), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        opened = vm.wait_for(r"vnet_smoke: (open .*|vnet_open failed.*|no free.*)", 120)
        assert "features 120010020" in opened.group(0), opened.group(0)  # VERSION_1 EVENT_IDX STATUS MAC
        assert f"W {w}" in opened.group(0)
        payloads = [f"datagram {i}".encode() * (1 + i) for i in range(20)]
        payloads.append(bytes(range(256)) * 5 + bytes(192))  # 1472 bytes: a full frame
        for p in payloads:
            assert echo_client.ask(sock, ("127.0.0.1", echo_port), p) == p
        sock.sendto(b"exit", ("127.0.0.1", ctl_port))
        vm.wait_for(r"vnet_smoke: released", 60)
        stats = vm.wait_for(r"vnet_smoke: stats (.*)", 5).group(1)
        counters = dict(zip(stats.split()[::2], map(int, stats.split()[1::2])))
        assert counters["rx_bad"] == 0 and counters["tx_bad"] == 0
        assert counters["tx_packets"] >= len(payloads)
        assert re.search(r"app vnet_smoke exited 0", vm.wait_for(r"app vnet_smoke exited \d+", 30).group(0))
