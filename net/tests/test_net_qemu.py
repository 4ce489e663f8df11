"""net/ on nom in QEMU (TCG here), the whole path: netecho (tests/guest/netecho.c) calls
nom_net_start, gets its address by DHCP from QEMU user networking or from --ip/--gw, and serves
TCP and UDP echo from one poll() loop over libnom's fd table; the host talks to it through
hostfwd on 127.0.0.1. Do bytes come back intact through lwIP, the netif and the virtio-net
driver, at W = 0 and W = 20, over many connections, and does the application end cleanly?"""
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

import kvmcost
from nomvm import Guest

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
NETECHO = BUILD / "net" / "tests" / "netecho.elf"  # built by conftest.netecho_elf


class Netecho:
    """One booted netecho with TCP 7, UDP 7 and UDP 8 (control) forwarded to 127.0.0.1."""

    def __init__(self, tmp_path, args="", **vm_args):
        self.guest = Guest([(NETECHO, ("netecho " + args).strip())], tmp_path, tcp=[7],
                           udp=[7, 8], kernel=KERNEL, **vm_args)
        self.vm = self.guest.vm
        self.tcp = self.guest.host_port(7)
        self.udp, self.ctl = self.guest.host_port(7, "udp"), self.guest.host_port(8, "udp")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(5)

    def __enter__(self):
        self.guest.start(ready=())
        self.address = self.vm.wait_for(r"net: (\S+) gw (\S+) \((dhcp|static)\) W=(\d+)", 120)
        self.vm.wait_for(r"netecho: serving", 60)
        return self

    def __exit__(self, *exc):
        self.sock.close()
        self.vm.stop()

    def ask(self, port, payload, tries=5):
        """Sends a datagram until the answer comes (the first may wait for ARP)."""
        for _ in range(tries):
            self.sock.sendto(payload, ("127.0.0.1", port))
            try:
                return self.sock.recvfrom(70000)[0]
            except socket.timeout:
                continue
        return None

    def control(self, cmd):
        return json.loads(self.ask(self.ctl, cmd.encode()))

    def connect(self):
        return socket.create_connection(("127.0.0.1", self.tcp), timeout=30)


def echo_bytes(conn, data):
    """Writes data while a thread reads the echo back; returns what came back."""
    got = bytearray()

    def reader():
        while len(got) < len(data):
            chunk = conn.recv(65536)
            if not chunk:
                break
            got.extend(chunk)

    t = threading.Thread(target=reader)
    t.start()
    conn.sendall(data)
    t.join(120)
    return bytes(got)


def pattern(n, seed=0):
    return bytes((i * 7 + i // 251 + seed) & 0xFF for i in range(n))


@pytest.mark.parametrize("w", [0, 20])
def test_dhcp_and_tcp_echo_of_megabytes(netecho_elf, tmp_path, w):
    with Netecho(tmp_path, f"--batching-delay={w}") as e:
        assert e.address.group(1) == "10.0.2.15/24" and e.address.group(3) == "dhcp"
        assert e.address.group(4) == str(w)
        data = pattern(4 << 20)
        with e.connect() as c:
            t0 = time.time()
            back = echo_bytes(c, data)
            took = time.time() - t0
        assert back == data
        stats = e.control("stats")
        assert stats["batching_delay_us"] == w
        assert stats["rx_bad"] == 0 and stats["tx_bad"] == 0 and stats["tx_dropped"] == 0
        print(f"netecho W={w}: 4 MiB echoed in {took:.2f} s ({2 * len(data) / took / 1e6:.1f} MB/s "
              f"both ways, TCG); {stats}")


def test_static_address_udp_echo_and_runtime_w(netecho_elf, tmp_path):
    with Netecho(tmp_path, "--ip=10.0.2.15/24 --gw=10.0.2.2") as e:
        assert e.address.group(1) == "10.0.2.15/24" and e.address.group(2) == "10.0.2.2"
        assert e.address.group(3) == "static"
        for i in range(40):
            p = pattern(1 + 37 * i, i)
            assert e.ask(e.udp, p) == p
        big = pattern(20000, 3)  # IP fragments both ways
        assert e.ask(e.udp, big) == big
        assert e.control("w=20")["batching_delay_us"] == 20
        with e.connect() as c:
            assert echo_bytes(c, b"after W changed") == b"after W changed"


def test_a_writer_stopped_by_a_full_window_resumes_when_the_peer_reads(netecho_elf, tmp_path):
    """The host sends 8 MiB more than Linux lets a socket's send buffer grow to and reads
    nothing for three seconds: the echo fills the host's receive buffer, QEMU's socket to it,
    the window and lwIP's send buffer, and netecho's blocking write waits for POLLOUT, which
    only the acknowledgements that follow the host's reads can bring (net/sock_tcp.c,
    tcpsock_on_sent). Every byte must come back once the host reads."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        send_buffer_max = int(f.read().split()[2])
    data = pattern(max(12 << 20, send_buffer_max + (8 << 20)), 5)
    with Netecho(tmp_path) as e:
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)  # before connect: stays
        c.settimeout(60)
        c.connect(("127.0.0.1", e.tcp))
        with c:
            sender = threading.Thread(target=c.sendall, args=(data,))
            sender.start()
            time.sleep(3)
            got = bytearray()
            while len(got) < len(data):
                chunk = c.recv(65536)
                assert chunk, f"closed after {len(got)} of {len(data)} bytes"
                got.extend(chunk)
            sender.join(60)
        assert bytes(got) == data


def test_many_connections_then_clean_exit(netecho_elf, tmp_path):
    with Netecho(tmp_path) as e:
        conns = [e.connect() for _ in range(32)]
        for i, c in enumerate(conns):
            c.sendall(f"connection {i}\n".encode())
        for i, c in enumerate(conns):
            want = f"connection {i}\n".encode()
            got = b""
            while len(got) < len(want):
                chunk = c.recv(100)
                assert chunk, f"connection {i} closed early"
                got += chunk
            assert got == want
            c.close()
        e.control("exit")
        e.vm.wait_for(r"netecho: exit", 60)
        e.vm.wait_for(r"app netecho exited 0", 60)


def test_echo_through_an_iommu(netecho_elf, tmp_path):
    """With QEMU's VT-d IOMMU the kernel lets the NIC reach only its owner's frames
    (kernel/iommu.c): every ring and buffer the driver and lwIP hand the device must lie in
    netecho's domain, or nothing would come back and the kernel would report refused DMA."""
    iommu = ("-device", "intel-iommu", "-global", "virtio-net-pci.iommu_platform=on")
    with Netecho(tmp_path, extra_args=iommu) as e:
        assert "nom: iommu on" in e.vm.log()
        data = pattern(1 << 20, 5)
        with e.connect() as c:
            assert echo_bytes(c, data) == data
        assert e.ask(e.udp, b"udp too") == b"udp too"
        assert "iommu: refused" not in e.vm.log(), e.vm.log()


@pytest.mark.skipif(not os.access(kvmcost.QEMU, os.X_OK),
                    reason=f"{kvmcost.QEMU} not built (make qemu-kvmcost)")
def test_an_idle_core_blocks_without_rewriting_its_timer(netecho_elf, tmp_path):
    """Between two datagrams netecho's core has nothing to do: it blocks (HLT) until the NIC's
    interrupt. Its next timer (lwIP's) is the same from one block to the next, so the LAPIC timer
    must not be written at each: under KVM every write is a VM exit. A running core arms libnom's
    timers only as a backstop, later than the block's exact deadline; with the two left
    different the kernel rewrote the timer at every block and every wake-up, two writes per
    block (libnom/src/sched.c arm_for_block; results/profiles-2026-12-02-timer-writes). The
    exit-cost QEMU's ledger counts both, at no cost (costs/zero.conf, the wall clock)."""
    ledger = tmp_path / "ledger.json"
    args = kvmcost.args_for(kvmcost.ZERO, str(ledger), interval_ms=20, clock="wall")
    with Netecho(tmp_path, "--idle-poll-us=20", qemu=kvmcost.QEMU, extra_args=args) as e:
        assert e.ask(e.udp, b"warm-up") == b"warm-up"  # ARP and the first frames done
        before = kvmcost.snapshot(str(ledger), str(tmp_path / "before.json"))
        for i in range(100):
            assert e.ask(e.udp, b"ping %d" % i) == b"ping %d" % i
            time.sleep(0.005)  # far beyond the idle poll: the core blocks
        after = kvmcost.snapshot(str(ledger), str(tmp_path / "after.json"))
    charged = kvmcost.difference(before, after)
    blocks, writes = charged["hlt"]["count"], charged["lapic_timer"]["count"]
    assert blocks >= 50, f"the core blocked {blocks} times in 100 idle gaps"
    assert writes <= blocks // 4, f"{writes} LAPIC timer writes for {blocks} blocks"
