"""`make run`'s last step (tools/nomrun.py) on the default image: it boots, nhttpd answers on the
forwarded port with the paper's 175-byte page, memcached answers on its own NIC's port, the
host's NPtcp completes a ping-pong run of a few sizes against nom's NPtcp (the image's options),
nomrun's price provider answers on the shifted port and the image's priced, rebuilt by nomrun to
ask that port, publishes its price, and stopping nomrun stops QEMU and the provider."""
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from nomvm import TOP
from nomvm.ports import free_port_shift
import nomrun

pytestmark = pytest.mark.boot

ISO = os.path.join(TOP, "build", "nom.iso")
IMAGE = ["--kernel", os.path.join(TOP, "build", "kernel", "nom.elf"),
         "--modules", os.path.join(TOP, "apps", "default-image.txt")]
# The host NPtcp (tools/loadgen's build) and the options the default image's NPtcp serves with
# (apps/default-image.txt): NetPIPE needs identical options on both sides.
HOST_NPTCP = os.path.join(TOP, "build", "loadgen", "NPtcp")
NPTCP_OPTIONS = ["-l", "1024", "-u", "4096", "-p", "0"]
# The image's forwarded ports and its price provider's (tools/nomrun.py), moved together to a
# shift free now and below the ports Linux gives outgoing connections.
SHIFT = free_port_shift(nomrun.HOST_PORTS)


def read_until(proc, pattern, timeout):
    seen, deadline = "", time.monotonic() + timeout
    os.set_blocking(proc.stdout.fileno(), False)
    while time.monotonic() < deadline:
        chunk = proc.stdout.read()  # non-blocking: None when nothing is there yet
        if chunk:
            seen += chunk.decode(errors="replace")
            if re.search(pattern, seen, re.M):
                return seen
        time.sleep(0.2)
    raise AssertionError(f"no /{pattern}/ in {timeout}s:\n{seen}")


def memcached_version(port, timeout=120):
    """memcached prints nothing when ready: ask it until it answers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"version\r\n")
                return s.recv(100)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def test_default_image_serves_the_index_and_stops_cleanly():
    proc = subprocess.Popen(["python3", os.path.join(TOP, "tools", "nomrun.py"), "--iso", ISO,
                             "--port-shift", str(SHIFT), *IMAGE], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        out = read_until(proc, r"^nhttpd: listening on", 180)
        assert re.search(r"^nomrun: accelerator (tcg|kvm) ", out, re.M)
        body = urllib.request.urlopen(f"http://127.0.0.1:{8080 + SHIFT}/", timeout=60).read()
        assert len(body) == 175 and body.startswith(b"<!DOCTYPE html>")
        assert memcached_version(11211 + SHIFT).startswith(b"VERSION 1.6.18")
        listening = r"NPtcp: receiver 1: run 1 listening"  # its line may be in `out` already
        if not re.search(listening, out, re.M):
            out += read_until(proc, listening, 120)
        nptcp = subprocess.run([HOST_NPTCP, "-h", "127.0.0.1", "-P", str(5002 + SHIFT),
                                *NPTCP_OPTIONS, "-o", os.devnull],
                               capture_output=True, text=True, timeout=300)
        sizes = re.findall(r"^\s*\d+:\s+(\d+) bytes .* Mbps in", nptcp.stderr, re.M)
        assert nptcp.returncode == 0 and sizes == ["1024", "1536", "2048", "3072", "4096"], \
            nptcp.stdout + nptcp.stderr
        vm_dir = re.search(r"also in (\S+)/serial.log", out).group(1)
        provider_pid = int(re.search(r"^nomrun: priceprovider: listening on 127\.0\.0\.1:"
                                     rf"{7070 + SHIFT} .*\(pid (\d+)\)", out, re.M).group(1))
        quote = urllib.request.urlopen(f"http://127.0.0.1:{7070 + SHIFT}/price.txt",
                                       timeout=30).read()
        assert re.search(rb"^resource=bandwidth .*price=(1|10)\.000000 ", quote)
        polled = r"^priced: published"
        if not re.search(polled, out, re.M):
            out += read_until(proc, polled, 120)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    qemus = subprocess.run(["pgrep", "-f", vm_dir], capture_output=True, text=True).stdout
    assert qemus.strip() == ""
    assert not os.path.exists(f"/proc/{provider_pid}")


def test_a_taken_host_port_is_named_and_fails_the_run():
    """Another program on nhttpd's forwarded port: QEMU cannot start, and nomrun says which rule
    failed and exits non-zero, instead of only 'QEMU exited with 1'."""
    shift = free_port_shift(nomrun.HOST_PORTS)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 8080 + shift))
        taken.listen()
        run = subprocess.run(["python3", os.path.join(TOP, "tools", "nomrun.py"), "--iso", ISO,
                              "--port-shift", str(shift)], capture_output=True, text=True,
                             timeout=120)
    assert run.returncode != 0
    assert re.search(rf"^nomrun: qemu: .*host forwarding rule 'tcp:127\.0\.0\.1:{8080 + shift}-:80'",
                     run.stdout, re.M), run.stdout + run.stderr
