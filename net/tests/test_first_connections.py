"""The first connections of a boot, all at once, through QEMU user networking (as `make run`
serves). Every client is behind the gateway 10.0.2.2, whose MAC nom must ask for, and the
gateway never asks for nom's first: on a fresh boot, memcslap's 4 connections came in one batch,
their 4 SYN-ACKs waited for the ARP reply, lwIP kept 3 of them and dropped the oldest, and that
connection waited for lwIP's retransmission 3 s later (5 of 6 fresh boots;
results/first-connections-2026-11-29-arp-queue). Now nom asks for its gateway as soon as its
address is known, and keeps a whole burst while an address resolves (net/tests/arp_test.c
tests that on its own). The guest's frames are read from a capture QEMU writes (filter-dump),
so the test asserts on what went over the wire, not on how long it took."""
import socket
import struct
import subprocess

import pytest

from experiment.nom_driver import APPS
from nomvm import Guest
from nomvm.paths import BUILD

pytestmark = pytest.mark.boot

BURST = 8
GATEWAY = socket.inet_aton("10.0.2.2")
PORT = 11211


def frames(pcap):
    """The Ethernet frames of a classic pcap file, in order."""
    data = pcap.read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    assert magic == 0xa1b2c3d4, f"not a little-endian pcap: {magic:#x}"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<IIII", data, off)[2]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def arp_request_for(frame, ip):
    return frame[12:14] == b"\x08\x06" and frame[20:22] == b"\x00\x01" and frame[38:42] == ip


def tcp_syn_to(frame, port):
    """The client port of a SYN (without ACK) to port, or None."""
    if frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return None
    tcp = 14 + (frame[14] & 0x0f) * 4
    dst, flags = struct.unpack_from(">H", frame, tcp + 2)[0], frame[tcp + 13]
    return struct.unpack_from(">H", frame, tcp)[0] if dst == port and flags & 0x12 == 0x02 else None


def test_nom_asks_for_its_gateway_before_the_first_burst_of_connections(tmp_path):
    capture = tmp_path / "guest.pcap"
    guest = Guest([(f"{BUILD}/{APPS['memcached'][0]}", f"memcached -p {PORT} -U 0 -t 1 -m 64")],
                  tmp_path, tcp=[PORT],
                  extra_args=["-object", f"filter-dump,id=dump,netdev=n0,file={capture}"])
    with guest:
        r = subprocess.run(["memcslap", f"--servers=127.0.0.1:{guest.host_port(PORT)}",
                            f"--concurrency={BURST}", "--execute-number=100"],
                           capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = list(frames(capture))
    syns = {p for p in map(lambda f: tcp_syn_to(f, PORT), seen) if p is not None}
    assert len(syns) == BURST, f"SYNs from {sorted(syns)}"
    first_syn = next(i for i, f in enumerate(seen) if tcp_syn_to(f, PORT) is not None)
    assert any(arp_request_for(f, GATEWAY) for f in seen[:first_syn]), \
        "nom did not ask for its gateway before the first connection came"
