"""`make run`'s last step (tools/nomrun.py) on the default image: it boots, nhttpd answers on the
forwarded port with the paper's 175-byte page, and stopping nomrun stops QEMU."""
import os
import re
import signal
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


def test_default_image_serves_the_index_and_stops_cleanly():
    proc = subprocess.Popen(["python3", os.path.join(TOP, "tools", "nomrun.py"), "--iso", ISO,
                             "--port-shift", str(SHIFT)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        out = read_until(proc, r"^nhttpd: listening on", 180)
        assert re.search(r"^nomrun: accelerator (tcg|kvm) ", out, re.M)
        body = urllib.request.urlopen(f"http://127.0.0.1:{8080 + SHIFT}/", timeout=60).read()
        assert len(body) == 175 and body.startswith(b"<!DOCTYPE html>")
        vm_dir = re.search(r"also in (\S+)/serial.log", out).group(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    qemus = subprocess.run(["pgrep", "-f", vm_dir], capture_output=True, text=True).stdout
    assert qemus.strip() == ""
