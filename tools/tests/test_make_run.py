"""`make run`'s last step (tools/nomrun.py) on the default image: it boots, nhttpd answers on the
forwarded port with the paper's 175-byte page, memcached answers on its own NIC's port, and
stopping nomrun stops QEMU."""
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

from nomvm.session import TOP

ISO = os.path.join(TOP, "build", "nom.iso")
SHIFT = 30000 + os.getpid() % 10000


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
                             "--port-shift", str(SHIFT)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        out = read_until(proc, r"^nhttpd: listening on", 180)
        assert re.search(r"^nomrun: accelerator (tcg|kvm) ", out, re.M)
        body = urllib.request.urlopen(f"http://127.0.0.1:{8080 + SHIFT}/", timeout=60).read()
        assert len(body) == 175 and body.startswith(b"<!DOCTYPE html>")
        assert memcached_version(11211 + SHIFT).startswith(b"VERSION 1.6.18")
        vm_dir = re.search(r"also in (\S+)/serial.log", out).group(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    qemus = subprocess.run(["pgrep", "-f", vm_dir], capture_output=True, text=True).stdout
    assert qemus.strip() == ""
