"""Does the Linux guest build from Debian packages, boot under QEMU and serve every application
to the load tools inside a netlab namespace? One boot (of the cached build) serves every test."""
import gzip
import os
import subprocess
import time

import pytest

import linuxguest
import loadgen
import netlab
import vmcounters
from loadgen import apps
from nomvm import Nic

pytestmark = pytest.mark.boot

MAC = "52:54:00:12:34:56"


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    loadgen.build()
    vmcounters.build()
    work = str(tmp_path_factory.mktemp("linuxguest"))
    counters = vmcounters.RunCounters(os.path.join(work, "counters"), "tcg")
    with netlab.NetLab() as lab:
        vm = linuxguest.make_vm(["memcached", "nginx", "netpipe"],
                                Nic(mac=MAC, backend="tap", tap=lab.tap), workdir=work,
                                accel="tcg", extra_args=counters.qemu_args())
        counters.start()
        lab.start_vm(vm)
        counters.attach(vm.proc.pid)
        try:
            linuxguest.wait_ready(vm, timeout=600)
            yield lab, vm, counters
        finally:
            vm.stop()
            counters.stop()


def test_initramfs_holds_init_modules_apps_and_their_libraries():
    g = linuxguest.build()
    names = subprocess.run(["cpio", "-t", "--quiet"], input=gzip.open(g["initrd"]).read(),
                           capture_output=True).stdout.decode().split()
    for path in ("init", "bin/busybox", "usr/bin/memcached", "usr/sbin/nginx", "usr/bin/NPtcp",
                 "etc/protocols", "srv/www/index.html", "lib64/ld-linux-x86-64.so.2"):
        assert path in names, path
    assert any(n.endswith("/virtio_net.ko") for n in names)
    assert any(n.endswith("/virtio_pci.ko") for n in names)


def test_modules_load_dependencies_first():
    order = [os.path.basename(m) for m in
             linuxguest.module_order(linuxguest.build()["release"], ("virtio_pci", "virtio_net"))]
    assert order.index("virtio.ko") < order.index("virtio_pci.ko")
    assert order.index("failover.ko") < order.index("net_failover.ko") < order.index("virtio_net.ko")


def test_guest_is_one_vcpu_256_mib_with_the_static_address(guest):
    lab, vm, _ = guest
    assert vm.args[vm.args.index("-smp") + 1].split(",")[0] == "1"  # maxcpus=2 under TCG
    assert vm.args[vm.args.index("-m") + 1] == "256"
    assert lab.run(["ping", "-c", "1", "-W", "5", lab.guest_ip], timeout=30).returncode == 0


def test_memcached_serves_the_get_set_mix(guest, tmp_path):
    lab, _, _ = guest
    r = loadgen.nomload(lab, "memcached", lab.guest_ip, apps.MEMCACHED_PORT, 1, 2, str(tmp_path))
    assert r["requests"] > 0 and r["errors"] == 0 and r["get_hits"] == r["gets"]


def test_nginx_serves_the_175_byte_page(guest):
    lab, _, _ = guest
    r = lab.run(["curl", "-s", "-o", "/dev/stdout", "-w", "%{http_code}",
                 f"http://{lab.guest_ip}{apps.INDEX_PATH}"], timeout=60)
    assert r.stdout.endswith("200") and len(r.stdout) == apps.INDEX_BYTES + 3


def test_wrk_and_nomload_load_the_web_server(guest, tmp_path):
    lab, _, _ = guest
    w = loadgen.wrk(lab, lab.guest_ip, apps.HTTP_PORT, 1, 2, str(tmp_path))
    assert w["requests"] > 0 and w["errors"] == 0
    r = loadgen.run_phase("nginx", "many", 2, lab, str(tmp_path))
    assert r["ops"] > 0 and r["latency_tool"] == "nomload"
    assert set(r["latency_us"]) == {"mean", "p50", "p99", "stddev"}


def test_netpipe_ping_pong_with_our_client(guest, tmp_path):
    lab, _, _ = guest
    r = loadgen.run_phase("netpipe", "single", 2, lab, str(tmp_path))
    assert r["ops"] > 0 and r["latency_us"]["p50"] > 0


def test_netpipe_both_ways_completes(guest, tmp_path):
    """The experiment's "many": each round the guest's NPtcp sends a 32 KiB message and reads
    the host's."""
    lab, _, _ = guest
    r = loadgen.nptcp_bidir(lab, lab.guest_ip, 1, str(tmp_path))
    assert r["messages"] > 0 and r["sessions"] >= 1


def test_memaslap_loads_memcached(guest, tmp_path):
    lab, _, _ = guest
    r = loadgen.memaslap(lab, lab.guest_ip, apps.MEMCACHED_PORT, 2, 2, str(tmp_path))
    assert r["ops"] > 0 and r["get_misses"] is not None


def test_counters_see_each_request_cost_instructions_kicks_and_interrupts(guest, tmp_path):
    lab, _, counters = guest
    time.sleep(0.3)  # the plugin dumps every 100 ms: let the idle count settle
    a = counters.snapshot()
    r = loadgen.nomload(lab, "memcached", lab.guest_ip, apps.MEMCACHED_PORT, 1, 2,
                        str(tmp_path), interval_ms=0)
    time.sleep(0.3)
    b = counters.snapshot()
    f = vmcounters.per_request(a, b, r["requests"])
    # A request is at least one packet each way: a guest kick and an interrupt at most
    # per packet, thousands of instructions of kernel and memcached.
    assert f["insns_per_req"] > 1000
    assert 0 < f["notifies_per_req"] and 0 < f["irqs_per_req"]
    assert 0 < f["vcpu_util"] <= 1.05
