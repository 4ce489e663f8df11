"""Does each OSv image build.py made boot under TCG on a tap in a namespace and serve its
application to a real client? (memcached: Debian's memccp/memccat set and get; nginx: curl
gets the 175-byte page; NPtcp: our NPtcp transmitter runs ping-pong and both-ways sessions,
twice each, against one boot.)
Each test runs only when its image is in build/osv/ (or NOM_OSV_IMAGE) and says so when not."""
import os
import time

import pytest

import osvguest
from loadgen import apps
from loadgen.parsers import parse_nptcp_stdout
from loadgen.runners import NPTCP
from nomvm import Nic

pytestmark = pytest.mark.boot

IMAGES = os.environ.get("NOM_OSV_IMAGE") or osvguest.DEFAULT_IMAGES
MAC = "52:54:00:12:34:56"
BOOT_TIMEOUT_S = 300  # OSv under TCG on a shared 2-core machine


def needs_image(app):
    reason = osvguest.unavailable(IMAGES, app)
    return pytest.mark.skipif(reason is not None, reason=f"{reason} (build.py makes it)")


def boot(lab, app, workdir):
    workdir.mkdir()
    vm = osvguest.make_vm(app, Nic(mac=MAC, backend="tap", tap=lab.tap), IMAGES,
                          workdir=str(workdir), accel="tcg")
    lab.start_vm(vm)
    osvguest.wait_ready(vm, timeout=BOOT_TIMEOUT_S)
    return vm


@needs_image("memcached")
def test_memcached_image_stores_and_returns_a_value(lab, tmp_path):
    vm = boot(lab, "memcached", tmp_path / "vm")
    value = tmp_path / "osv-key"
    value.write_text("served by Debian's memcached on OSv")
    servers = f"--servers={lab.guest_ip}:{apps.MEMCACHED_PORT}"
    put = lab.run(["memccp", servers, str(value)], timeout=60)  # key: the file's name
    assert put.returncode == 0, put.stderr
    got = lab.run(["memccat", servers, "osv-key"], timeout=60)
    # memccat ends the value with a newline of its own
    assert got.stdout == value.read_text() + "\n", (got.stderr, vm.tail(20))


@needs_image("nhttpd")
def test_web_image_serves_the_linux_guests_page(lab, tmp_path):
    vm = boot(lab, "nhttpd", tmp_path / "vm")
    r = lab.run(["curl", "-s", "-w", "\n%{http_code}", "--max-time", "60",
                 f"http://{lab.guest_ip}{apps.INDEX_PATH}"], timeout=90)
    body, _, code = r.stdout.rpartition("\n")
    assert code == "200", (r.stderr, vm.tail(20))
    with open(os.path.join(osvguest.__path__[0], "..", "linuxguest", "rootfs",
                           "index.html")) as f:
        assert body == f.read() and len(body) == apps.INDEX_BYTES


@needs_image("netpipe")
def test_netpipe_image_serves_session_after_session_on_both_ports(lab, tmp_path):
    vm = boot(lab, "netpipe", tmp_path / "vm")
    for session in range(2):  # ping-pong, both ways, and again: the receivers repeat
        for options in (apps.NETPIPE_PINGPONG_ARGS, apps.NETPIPE_BIDIR_ARGS):
            out = nptcp_session(lab, options, tmp_path / "np.out")
            rows = parse_nptcp_stdout(out)
            assert rows[0]["bytes"] == int(options[options.index("-l") + 1]), (out, vm.tail(20))
            assert rows[0]["times"] > 0 and rows[0]["usec"] > 0
    assert vm.proc.poll() is None, vm.tail(20)  # OSv still serves


def nptcp_session(lab, options, out_file):
    """One session of our patched NPtcp transmitter (the experiment's, loadgen) with options;
    refusals are retried: ping answers before NPtcp listens (osvguest.ready_probe)."""
    args = [NPTCP, "-h", lab.guest_ip, *options, "-o", str(out_file)]
    deadline = time.monotonic() + 120
    while True:
        r = lab.run(args, timeout=300)
        out = r.stdout + r.stderr
        if "Cannot Connect" not in out or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert r.returncode == 0, out
    return out
