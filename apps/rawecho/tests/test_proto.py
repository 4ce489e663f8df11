"""Host tests of rawecho's protocol answers (apps/rawecho/proto.c through ctypes): each frame
is built and each answer checked here, in Python, independently of the C code."""
import ctypes
import os
import random
import struct
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
MAC = bytes.fromhex("525400123456")
PEER = bytes.fromhex("525400abcdef")
IP = bytes([10, 0, 2, 15])
PEER_IP = bytes([10, 0, 2, 2])


class Addr(ctypes.Structure):
    _fields_ = [("mac", ctypes.c_uint8 * 6), ("ip", ctypes.c_uint8 * 4)]


class Udp(ctypes.Structure):
    _fields_ = [("dst_port", ctypes.c_uint16), ("payload", ctypes.c_void_p),
                ("payload_len", ctypes.c_size_t)]


@pytest.fixture(scope="module")
def lib():
    env = dict(os.environ, TOP=str(TOP), BUILD=str(TOP / "build"))
    r = subprocess.run(["make", "-s", "-C", str(HERE.parent), "host"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return ctypes.CDLL(str(TOP / "build" / "apps" / "rawecho" / "libproto.so"))


ME = Addr((ctypes.c_uint8 * 6)(*MAC), (ctypes.c_uint8 * 4)(*IP))


def call(lib, fn, frame, *extra):
    out = ctypes.create_string_buffer(1518)
    n = getattr(lib, fn)(ctypes.byref(ME), frame, ctypes.c_size_t(len(frame)), out, *extra)
    return out.raw[:n]


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(proto, payload, src=PEER_IP, dst=IP, flags=0x4000):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, flags, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def eth(payload, dst=MAC, etype=0x0800):
    return dst + PEER + struct.pack("!H", etype) + payload


def udp(sport, dport, data, src=PEER_IP, dst=IP):
    u = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    pseudo = src + dst + struct.pack("!BBH", 0, 17, len(u))
    c = csum(pseudo + u) or 0xFFFF
    return u[:6] + struct.pack("!H", c) + u[8:]


def udp_frame(data, dport=7, sport=40000):
    return eth(ipv4(17, udp(sport, dport, data)))


def check_ip_udp(frame, sport, dport, data):
    assert frame[:6] == PEER and frame[6:12] == MAC
    ip = frame[14:34]
    assert csum(ip) == 0
    assert ip[12:16] == IP and ip[16:20] == PEER_IP
    total = struct.unpack("!H", ip[2:4])[0]
    u = frame[34:14 + total]
    assert struct.unpack("!HHH", u[:6]) == (sport, dport, 8 + len(data))
    assert u[8:] == data
    assert csum(IP + PEER_IP + struct.pack("!BBH", 0, 17, len(u)) + u) == 0


def test_arp_request_for_our_ip_gets_reply(lib):
    req = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, PEER, PEER_IP, b"\0" * 6, IP)
    out = call(lib, "proto_arp_reply", eth(req, dst=b"\xff" * 6, etype=0x0806))
    assert len(out) == 60 and out[:6] == PEER and out[6:12] == MAC
    htype, ptype, hlen, plen, op, sha, spa, tha, tpa = struct.unpack("!HHBBH6s4s6s4s", out[14:42])
    assert (op, sha, spa, tha, tpa) == (2, MAC, IP, PEER, PEER_IP)


def test_arp_for_another_ip_is_ignored(lib):
    req = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, PEER, PEER_IP, b"\0" * 6,
                      bytes([10, 0, 2, 16]))
    assert call(lib, "proto_arp_reply", eth(req, dst=b"\xff" * 6, etype=0x0806)) == b""


def test_icmp_echo_gets_reply_with_valid_checksums(lib):
    body = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 7) + bytes(range(56))
    body = body[:2] + struct.pack("!H", csum(body)) + body[4:]
    out = call(lib, "proto_icmp_reply", eth(ipv4(1, body)))
    ip = out[14:34]
    assert csum(ip) == 0 and ip[12:16] == IP and ip[16:20] == PEER_IP
    icmp = out[34:34 + len(body)]
    assert icmp[0] == 0 and csum(icmp) == 0 and icmp[4:] == body[4:]


def test_udp_echo_swaps_and_keeps_valid_checksums(lib):
    data = b"hello, floor"
    frame = udp_frame(data)
    view = Udp()
    assert lib.proto_udp_view(ctypes.byref(ME), frame, ctypes.c_size_t(len(frame)),
                              ctypes.byref(view)) == 1
    assert view.dst_port == 7 and view.payload_len == len(data)
    out = ctypes.create_string_buffer(1518)
    n = lib.proto_udp_echo(frame, ctypes.c_size_t(len(frame)), out)
    check_ip_udp(out.raw[:n], 7, 40000, data)
    assert n == 60  # padded to the Ethernet minimum


def test_udp_reply_carries_new_payload_with_valid_checksums(lib):
    frame = udp_frame(b"stats", dport=7001)
    out = ctypes.create_string_buffer(1518)
    reply = b'{"x":1}\n' * 50
    n = lib.proto_udp_reply(frame, reply, ctypes.c_size_t(len(reply)), out)
    check_ip_udp(out.raw[:n], 7001, 40000, reply)


def test_full_size_udp_echo(lib):
    data = bytes(random.Random(1).randrange(256) for _ in range(1472))
    frame = udp_frame(data)
    out = ctypes.create_string_buffer(1518)
    n = lib.proto_udp_echo(frame, ctypes.c_size_t(len(frame)), out)
    assert n == 1514
    check_ip_udp(out.raw[:n], 7, 40000, data)


@pytest.mark.parametrize("name,frame", [
    ("other mac", eth(ipv4(17, udp(1, 7, b"x")), dst=PEER)),
    ("other ip", eth(ipv4(17, udp(1, 7, b"x"), dst=bytes([10, 0, 2, 99])))),
    ("fragment", eth(ipv4(17, udp(1, 7, b"x"), flags=0x2000))),
    ("ipv6", eth(b"\x60" + b"\0" * 60, etype=0x86DD)),
    ("udp length beyond ip", eth(ipv4(17, struct.pack("!HHHH", 1, 7, 200, 0) + b"x"))),
    ("ip length beyond frame", udp_frame(b"abc")[:-2]),
])
def test_malformed_udp_gets_no_answer(lib, name, frame):
    view = Udp()
    assert lib.proto_udp_view(ctypes.byref(ME), frame, ctypes.c_size_t(len(frame)),
                              ctypes.byref(view)) == 0, name


def test_garbage_and_truncations_never_answer_wrongly(lib):
    """Every truncation of valid frames and random bytes: no crash, no answer from garbage."""
    rng = random.Random(4)
    good = [udp_frame(b"abc"), eth(ipv4(1, b"\x08\0\0\0\0\0\0\0"))]
    view = Udp()
    for frame in good:
        for cut in range(len(frame)):
            part = frame[:cut]
            call(lib, "proto_arp_reply", part)
            call(lib, "proto_icmp_reply", part)
            lib.proto_udp_view(ctypes.byref(ME), part, ctypes.c_size_t(cut), ctypes.byref(view))
    for _ in range(2000):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 100)))
        assert call(lib, "proto_arp_reply", junk) == b""
        assert call(lib, "proto_icmp_reply", junk) == b""
        assert lib.proto_udp_view(ctypes.byref(ME), junk, ctypes.c_size_t(len(junk)),
                                  ctypes.byref(view)) == 0
