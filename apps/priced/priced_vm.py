"""Helpers for priced's QEMU tests and measure.py: a price provider on the host (the real
tools/priceprovider, or a scripted fake that misbehaves on demand) and a nom VM running priced
(on a QEMU user-net NIC: the guest reaches the host's 127.0.0.1 at 10.0.2.2) beside the test
subscriber pricewatch."""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from nomvm import BUILD, KERNEL, TOP, VM, Nic, free_port, make_iso

PRICED = os.path.join(BUILD, "apps", "priced", "priced.elf")
PRICEWATCH = os.path.join(BUILD, "apps", "priced", "tests", "pricewatch.elf")
# The VM's only NIC is QEMU's PCI slot 1 on q35: bulletin-board index 1 (slot 0: host bridge).
PRICED_NIC = 1


def built():
    return all(os.path.isfile(p) for p in (KERNEL, PRICED, PRICEWATCH))


def build_host():
    """Builds the host programs (tests/unit_tests, tests/http_get_host)."""
    env = dict(os.environ, TOP=TOP, BUILD=BUILD)
    r = subprocess.run(["make", "-s", "-C", os.path.join(TOP, "apps", "priced"), "host"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


class Provider:
    """tools/priceprovider on 127.0.0.1 (a free port unless given), stopped by its PID."""

    def __init__(self, schedule="0:1, 60:10", hold=True, port=0):
        args = [sys.executable, "-m", "priceprovider", "--port", str(port), "--schedule",
                schedule] + (["--hold"] if hold else [])
        self.proc = subprocess.Popen(args, cwd=os.path.join(TOP, "tools"),
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on [\d.]+:(\d+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"priceprovider did not start: {line!r}")
        self.port = int(m.group(1))

    def step(self):
        """Jumps to the next price of the schedule now (SIGUSR2)."""
        self.proc.send_signal(signal.SIGUSR2)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class FakeProvider:
    """A provider that answers what `mode` says, on 127.0.0.1 (raw sockets: exact bytes; port 0
    picks a free one; stop() then a new one on the same port is a provider down and back).
    Modes: ("good", PRICE, SEQUENCE), "garbage" (not HTTP), "html" (HTTP 200, not price.txt),
    "huge" (a 1 MiB body), "negative", "absurd", "stall" (accepts, never answers), "error"
    (HTTP 503). `requests[mode]` counts the connections served in each mode."""

    def __init__(self, port=0):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.mode, self.requests, self.stalled = ("good", 1.0, 1), {}, []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _body(self, price, seq):
        return (f"resource=bandwidth unit=$/Gbit price={price:.6f} timestamp=1763787600.0 "
                f"sequence={seq}\n").encode()

    def _answer(self, mode):
        ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        if isinstance(mode, tuple):
            body = self._body(mode[1], mode[2])
        elif mode == "garbage":
            return b"\x00\xffSSH-2.0-OpenSSH_9.2\r\n\r\nhello"
        elif mode == "html":
            body = b"<html><body>502 Bad Gateway</body></html>\n"
        elif mode == "huge":
            return ok + b"Connection: close\r\n\r\n" + b"price=1 " * (1 << 17)
        elif mode == "negative":
            body = self._body(-3.0, 900)
        elif mode == "absurd":
            body = self._body(5e6, 901)
        elif mode == "error":
            return b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
        return ok + f"Content-Length: {len(body)}\r\n\r\n".encode() + body

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            mode = self.mode
            key = mode[0] if isinstance(mode, tuple) else mode
            self.requests[key] = self.requests.get(key, 0) + 1
            if mode == "stall":
                self.stalled.append(conn)  # never answered, closed at stop()
                continue
            try:
                conn.settimeout(5)
                conn.recv(4096)
                conn.sendall(self._answer(mode))
            except OSError:
                pass
            finally:
                conn.close()

    def count(self, key):
        return self.requests.get(key, 0)

    def stop(self):
        self.sock.close()
        for c in self.stalled:
            c.close()


class PricedVM:
    """nom with priced (publisher, on a user-net NIC) and pricewatch; console in .log()."""

    def __init__(self, port, priced_args=(), watch_args=(), publisher=True, extra_modules=()):
        self.workdir = tempfile.mkdtemp(prefix="priced-test-vm-")
        url = f"http://10.0.2.2:{port}/price.txt"
        words = (["nom.price-publisher"] if publisher else []) + \
            ["priced", f"--nic={PRICED_NIC}", f"--provider={url}", *priced_args]
        modules = [(PRICED, " ".join(words)), (PRICEWATCH, " ".join(["pricewatch", *watch_args])),
                   *extra_modules]
        iso = make_iso(KERNEL, modules, os.path.join(self.workdir, "nom.iso"))
        self.vm = VM(iso=iso, smp=1, nics=[Nic(mac="52:54:00:12:34:57")],
                     workdir=self.workdir, name="priced")

    def __enter__(self):
        self.vm.start()
        return self

    def __exit__(self, *exc):
        self.vm.stop()

    def log(self):
        return self.vm.log()

    def wait_for(self, pattern, timeout=120.0):
        return self.vm.wait_for(pattern, timeout)

    def watch_lines(self):
        """pricewatch's price lines: [(price $/Gbit, board sequence, guest seconds)]."""
        return [(float(p), int(s), float(t)) for p, s, t in re.findall(
            r"^pricewatch: price ([\d.]+) \$/Gbit sequence (\d+) at ([\d.]+) s", self.log(),
            re.M)]

    def wait_watch(self, price, timeout=120.0):
        """Waits for pricewatch to report price; returns (host seconds waited, its line)."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            for line in self.watch_lines():
                if abs(line[0] - price) < 1e-9:
                    return time.monotonic() - t0, line
            if self.vm.proc.poll() is not None:
                break
            time.sleep(0.005)
        raise AssertionError(f"pricewatch never saw {price} $/Gbit:\n{self.vm.tail(40)}")

    def published_at(self, price):
        """Guest seconds at which priced published price (its console line)."""
        m = re.search(rf"^priced: published {price:.6f} \$/Gbit at ([\d.]+) s", self.log(), re.M)
        return float(m.group(1)) if m else None
