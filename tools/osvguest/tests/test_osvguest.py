"""Does the OSv guest say "not run" without an image, and boot an image the right way?
(Real OSv boots are test_osv_images.py's, when the images exist.)"""
import os

import pytest

import netlab
import osvguest
from nomvm import Nic

NIC = Nic(mac="52:54:00:12:34:56", backend="tap", tap="tap0")


@pytest.mark.unit
def test_without_an_image_every_app_is_not_run(tmp_path):
    nothing_built = str(tmp_path / "osv")
    reason = osvguest.unavailable(None, "memcached", default=nothing_built)
    assert reason.startswith("not run") and "build.py" in reason
    assert "no OSv image for memcached" in osvguest.unavailable(str(tmp_path), "memcached")
    assert "no OSv set-up" in osvguest.unavailable(str(tmp_path), "lighttpd")


@pytest.mark.unit
def test_images_built_into_the_default_folder_are_found_without_a_path(tmp_path):
    (tmp_path / "nginx.qcow2").write_bytes(b"")
    assert osvguest.unavailable(None, "nhttpd", default=str(tmp_path)) is None
    assert osvguest.find_image(None, "nhttpd", default=str(tmp_path)) == \
        str(tmp_path / "nginx.qcow2")
    assert osvguest.DEFAULT_IMAGES.endswith(os.path.join("build", "osv"))


@pytest.mark.unit
def test_netpipe_readiness_does_not_connect_to_the_one_session_receiver():
    assert osvguest.ready_probe("netpipe", "10.0.0.2")[0] == "ping"
    assert "/dev/tcp/10.0.0.2/11211" in osvguest.ready_probe("memcached", "10.0.0.2")[-1]


@pytest.mark.unit
def test_a_directory_of_images_is_searched_by_app(tmp_path):
    (tmp_path / "memcached.qcow2").write_bytes(b"")
    assert osvguest.unavailable(str(tmp_path), "memcached") is None
    assert osvguest.unavailable(str(tmp_path), "nhttpd") is not None
    (tmp_path / "lighttpd.img").write_bytes(b"")  # OSv's web server serves the web slot
    assert osvguest.find_image(str(tmp_path), "nhttpd") == str(tmp_path / "lighttpd.img")


@pytest.mark.unit
def test_vm_has_the_same_nic_sizes_and_a_snapshot_disk(tmp_path):
    image = tmp_path / "memcached.qcow2"
    image.write_bytes(b"")
    vm = osvguest.make_vm("memcached", NIC, str(tmp_path), workdir=str(tmp_path), accel="tcg")
    args = " ".join(vm.args)
    assert "-m 128" in args and "-smp 1" in args
    assert f"file={image},if=virtio,format=qcow2,snapshot=on" in args
    assert "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56" in args
    assert "-kernel" not in vm.args


@pytest.mark.unit
def test_kernel_beside_the_images_boots_with_our_address(tmp_path):
    (tmp_path / "memcached.img").write_bytes(b"")
    (tmp_path / "kernel.elf").write_bytes(b"")
    args = osvguest.boot_args("memcached", str(tmp_path), cmdline="/memcached -u root -t 1")
    assert args[args.index("-append") + 1] == \
        f"--ip=eth0,{netlab.GUEST_IP},255.255.255.0 /memcached -u root -t 1"


@pytest.mark.boot
def test_wait_ready_reports_a_guest_that_ended(tmp_path):
    """A disk that boots nothing: QEMU ends (-no-reboot), wait_ready says so, in a lab."""
    (tmp_path / "memcached.raw").write_bytes(b"\0" * 512)
    with netlab.NetLab() as lab:
        vm = osvguest.make_vm("memcached", Nic(mac="52:54:00:12:34:56", backend="tap",
                                               tap=lab.tap), str(tmp_path),
                              workdir=str(tmp_path), accel="tcg",
                              extra_args=["-bios", "/nonexistent.bin"])
        lab.start_vm(vm)
        assert vm.namespace() == lab.ns
        with pytest.raises(TimeoutError):
            osvguest.wait_ready(vm, timeout=60)


@pytest.mark.unit
def test_a_halted_osv_is_seen_on_its_console():
    assert osvguest.halted("OSv v0.57.0\nNeither paravirtual clock nor HPET is available.\n"
                           "Halting.\n")
    assert osvguest.halted("Aborted\n\n[backtrace]\n")
    assert not osvguest.halted("OSv v0.57.0\nBooted up in 812.30 ms\n/memcached -u root\n")
